/**
 * Autopilot's node watch wakes the AppWrappers with pods on a relabelled node: the pod
 * watch keeps where each wrapped pod runs, follows moves and forgets deleted pods.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AW_LABEL } from '../../../src/apis/workload.codeflare.dev/v1beta2.ts';
import { appWrapperController } from '../../../src/controllers/appwrapper/index.ts';
import type { KubeObject, WatchEvent } from '../../../src/runtime/index.ts';

const pod = (name: string, aw: string, nodeName?: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'ns', labels: { [AW_LABEL]: aw } },
  spec: nodeName ? { nodeName } : {},
});
const node = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'Node', metadata: { name } });

test('the node watch maps a node to the AppWrappers whose pods run there, as pods bind, move and go', () => {
  const def = appWrapperController({ autopilot: { monitorNodes: true } });
  const podWatch = def.watches?.find((w) => w.kind === 'Pod')?.map;
  const nodeWatch = def.watches?.find((w) => w.kind === 'Node')?.map;
  assert.ok(podWatch && nodeWatch);
  // What the controller does for an event: the new object, then the old one.
  const deliver = (event: WatchEvent) => {
    const keys = [...(podWatch(event.obj, event) ?? [])];
    if (event.old) keys.push(...(podWatch(event.old, event) ?? []));
    return keys;
  };
  const onNode = (n: string) => (nodeWatch(node(n), { type: 'update', obj: node(n) }) ?? []).sort();

  const a0 = pod('a-0', 'a');
  assert.deepEqual(deliver({ type: 'add', obj: a0 }), ['ns/a']);
  assert.deepEqual(onNode('n1'), []);
  // Bound: the update's new object says where it runs (its old one had no node).
  const a0bound = pod('a-0', 'a', 'n1');
  deliver({ type: 'update', obj: a0bound, old: a0 });
  deliver({ type: 'add', obj: pod('b-0', 'b', 'n1') });
  assert.deepEqual(onNode('n1'), ['ns/a', 'ns/b']);
  // Moved (a new pod of the same name on another node).
  deliver({ type: 'update', obj: pod('a-0', 'a', 'n2'), old: a0bound });
  assert.deepEqual(onNode('n1'), ['ns/b']);
  assert.deepEqual(onNode('n2'), ['ns/a']);
  deliver({ type: 'delete', obj: pod('a-0', 'a', 'n2') });
  deliver({ type: 'delete', obj: pod('b-0', 'b', 'n1') });
  assert.deepEqual(onNode('n1'), []);
  assert.deepEqual(onNode('n2'), []);
});
