import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ClusterState, type PodEntry } from '../../../src/cluster/scheduler/core/index.ts';
import { compileSelector } from '../../../src/cluster/scheduler/core/label-selectors.ts';
import { labelled, node } from './fixtures.ts';

function matches(s: ClusterState, labels: Record<string, string>, ns: string | 'all' = 'default'): string[] {
  const names: string[] = [];
  const sel = compileSelector({ matchLabels: labels })!;
  s.podsByLabel.forEachMatch(ns, sel, (e: PodEntry) => names.push(e.key));
  return names;
}

test('pods added and removed between queries are found as if indexed at once, in the order added', () => {
  const s = new ClusterState();
  s.upsertNode(node('n1', { cpu: '8' }));
  const uid = (name: string) => s.addPod(labelled(name, { app: 'web', tier: name }), 'n1').uid;
  const a = uid('a');
  const b = uid('b');
  uid('c');
  // b comes and goes before any query (an assumed pod released): never indexed.
  s.removePod(b);
  assert.deepEqual(matches(s, { app: 'web' }), ['default/a', 'default/c']);
  assert.deepEqual(matches(s, { tier: 'b' }), []);
  // After a query: removing an indexed pod takes it out of every label's set.
  s.removePod(a);
  uid('d');
  assert.deepEqual(matches(s, { app: 'web' }), ['default/c', 'default/d']);
  assert.deepEqual(matches(s, { tier: 'a' }), []);
  assert.deepEqual(matches(s, { app: 'web' }, 'all'), ['default/c', 'default/d']);
  assert.deepEqual(matches(s, { app: 'web' }, 'elsewhere'), []);
});
