import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { compilePlayable, StageSet } from '../../../src/cluster/kubelet/stage-set.ts';
import type { Stage } from '../../../src/cluster/kubelet/stages/index.ts';
import { troupeDefaultStages } from '../../../src/cluster/kubelet/troupe-stages.ts';

function stage(
  name: string,
  extra: Partial<Stage['spec']> = {},
  annotations?: Record<string, string>,
): Stage {
  return {
    apiVersion: 'kwok.x-k8s.io/v1alpha1',
    kind: 'Stage',
    metadata: annotations ? { name, annotations } : { name },
    spec: { resourceRef: { apiGroup: 'v1', kind: 'Pod' }, selector: {}, next: {}, ...extra },
  };
}

const names = (set: StageSet) => set.forKind('v1', 'Pod').map((s) => `${s.name}/${s.origin}`);

describe('troupe default stages', () => {
  test('KWOK node and finalizer stages plus troupe pod stages, all compiling', () => {
    const set = new StageSet(troupeDefaultStages());
    assert.deepEqual(names(set), [
      'pod-remove-finalizer/default',
      'pod-ready/default',
      'pod-container-lifecycle/default',
      'pod-complete/default',
      'pod-terminate/default',
      'pod-delete/default',
      'pod-ephemeral-containers/default',
    ]);
    assert.deepEqual(
      set.forKind('v1', 'Node').map((s) => s.name),
      ['node-initialize', 'node-heartbeat-with-lease'],
    );
    const lifecycle = set.forKind('v1', 'Pod').find((s) => s.name === 'pod-container-lifecycle')!;
    assert.equal(lifecycle.background, true);
    assert.ok(lifecycle.hook);
  });
});

describe('combining stages', () => {
  test('cluster Stages add to the defaults and replace same-named ones; removal restores', () => {
    const set = new StageSet([stage('a'), stage('b')], [stage('opt')]);
    let changes = 0;
    set.onChange(() => changes++);
    const mine = compilePlayable(stage('b', { weight: 3 }), 'cluster');
    assert.ok(mine.ok);
    set.setCluster('b', mine.stage);
    set.setCluster('c', (compilePlayable(stage('c'), 'cluster') as { ok: true; stage: never }).stage);
    assert.deepEqual(names(set), ['a/default', 'b/cluster', 'opt/option', 'c/cluster']);
    set.removeCluster('b');
    assert.deepEqual(names(set), ['a/default', 'b/default', 'opt/option', 'c/cluster']);
    assert.equal(changes, 3);
  });

  test('a broken cluster Stage named like a default keeps the default out too', () => {
    const set = new StageSet([stage('a')]);
    set.setCluster('a', undefined);
    assert.deepEqual(names(set), []);
  });

  test('a cluster Stage beats an option Stage of the same name', () => {
    const set = new StageSet([], [stage('x')]);
    set.setCluster('x', (compilePlayable(stage('x'), 'cluster') as { ok: true; stage: never }).stage);
    assert.deepEqual(names(set), ['x/cluster']);
  });

  test('an unknown hook name is a compile error naming the annotation and the choices', () => {
    const r = compilePlayable(stage('h', {}, { 'kubelet.troupe.dev/hook': 'sometime' }), 'cluster');
    assert.equal(r.ok, false);
    assert.match(
      (r as { errors: string[] }).errors[0]!,
      /^metadata\.annotations\[kubelet\.troupe\.dev\/hook\]: Unsupported value: "sometime": supported values: "container-runtime", "termination", "no-run-hints"$/,
    );
  });

  test('a CEL selector requirement is refused by name', () => {
    const r = compilePlayable(
      stage('cel', { selector: { matchExpressions: [{ expression: 'self.status.phase == "Running"' }] } }),
      'cluster',
    );
    assert.equal(r.ok, false);
    assert.match(
      (r as { errors: string[] }).errors.join('\n'),
      /matchExpressions\[0\]\.expression: Unsupported value: CEL/,
    );
  });

  test('troupe template functions are known to stage templates', () => {
    const r = compilePlayable(
      stage('t', { next: { statusTemplate: '{{ AdvanceContainers . | toJson }}' } }),
      'cluster',
    );
    assert.equal(r.ok, true);
    const bad = compilePlayable(stage('t', { next: { statusTemplate: '{{ Advance . }}' } }), 'cluster');
    assert.equal(bad.ok, false);
  });
});
