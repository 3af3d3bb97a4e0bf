import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import {
  type CompiledStage,
  compileJq,
  compileStage,
  compileStages,
  createIPAM,
  finalizerOps,
  loadDefaultStages,
  matchStages,
  parseStagesYAML,
  planNext,
  type QueryMemo,
  type Stage,
  type StageEnv,
  type StageObject,
  stageDelay,
  stageMatches,
} from '../../../src/cluster/kubelet/stages/index.ts';
import { troupeDefaultStages } from '../../../src/cluster/kubelet/troupe-stages.ts';
import { parseGoDuration } from '../../../src/kube/duration.ts';
import { pod as buildPod } from '../../support/objects.ts';

const NOW = Date.parse('2026-03-04T05:06:07.123Z');
const env: StageEnv = { now: () => NOW, random: () => 0 };

function compiled(stage: Stage): CompiledStage {
  const r = compileStage(stage);
  if (!r.ok) throw new Error(r.errors.join('\n'));
  return r.stage;
}

function podStage(name: string, spec: Partial<Stage['spec']>): Stage {
  return {
    apiVersion: 'kwok.x-k8s.io/v1alpha1',
    kind: 'Stage',
    metadata: { name },
    spec: { resourceRef: { apiGroup: 'v1', kind: 'Pod' }, selector: {}, next: {}, ...spec },
  };
}

function pod(
  extra: {
    metadata?: Record<string, unknown>;
    spec?: Record<string, unknown>;
    status?: Record<string, unknown>;
  } = {},
): StageObject {
  return buildPod<StageObject>('worker-1', {
    uid: 'uid-1',
    node: 'node-1',
    phase: 'Pending',
    metadata: extra.metadata,
    spec: { containers: [{ name: 'worker', image: 'fake-image' }], ...extra.spec },
    status: extra.status,
  });
}

describe('the podgroup seed stage', () => {
  // The seed README's Stage, kept verbatim in the repository's samples.
  const yamlBlock = readFileSync(
    new URL('../../../config/samples/podgroup/kwok-stage-pod-complete-on-ready.yaml', import.meta.url),
    'utf8',
  );
  const [seedStage] = parseStagesYAML(yamlBlock);

  test('compiles verbatim from the README', () => {
    assert.equal(seedStage?.metadata.name, 'pod-complete-on-ready');
    const r = compileStage(seedStage!);
    assert.equal(r.ok, true, r.ok ? '' : r.errors.join('\n'));
  });

  test('matches only pods labelled ready and renders a Succeeded status with a real time', () => {
    const stage = compiled(seedStage!);
    const running = pod({
      metadata: { labels: { 'podgroup.jhwagner.github.io/name': 'training-job-1' } },
      status: { phase: 'Running' },
    });
    assert.equal(matchStages([stage], running), undefined);
    const ready = pod({
      metadata: {
        labels: {
          'podgroup.jhwagner.github.io/name': 'training-job-1',
          'podgroup.jhwagner.github.io/ready': 'true',
        },
      },
      status: { phase: 'Running' },
    });
    assert.equal(matchStages([stage], ready), stage);
    const r = planNext(stage, ready, env);
    assert.ok(r.ok, r.ok ? '' : r.error);
    if (!r.ok) return;
    assert.deepEqual(r.plan.patches, [
      {
        subresource: 'status',
        type: 'strategic',
        impersonate: undefined,
        patch: {
          status: {
            conditions: [{ lastTransitionTime: '2026-03-04T05:06:07.123Z', status: 'True', type: 'Ready' }],
            phase: 'Succeeded',
          },
        },
      },
    ]);
    assert.equal(r.plan.delete, false);
    assert.equal(r.plan.delayMs, undefined);
  });
});

describe('selectors', () => {
  const expr = (key: string, operator: string, values?: string[]) =>
    compiled(podStage('s', { selector: { matchExpressions: [{ key, operator, values }] } }));
  const matches = (s: CompiledStage, o: StageObject) => matchStages([s], o) === s;

  test('deletionTimestamp and finalizers', () => {
    const deleting = pod({
      metadata: { deletionTimestamp: '2026-03-04T05:00:00Z', finalizers: ['kwok.x-k8s.io/fake'] },
    });
    assert.equal(matches(expr('.metadata.deletionTimestamp', 'Exists'), deleting), true);
    assert.equal(matches(expr('.metadata.deletionTimestamp', 'DoesNotExist'), deleting), false);
    assert.equal(matches(expr('.metadata.deletionTimestamp', 'DoesNotExist'), pod()), true);
    assert.equal(matches(expr('.metadata.finalizers.[]', 'In', ['kwok.x-k8s.io/fake']), deleting), true);
    // Iterating a missing list is an error in jq, which reads as "no value".
    assert.equal(matches(expr('.metadata.finalizers.[]', 'DoesNotExist'), pod()), true);
    assert.equal(
      matches(expr('.metadata.finalizers.[]', 'DoesNotExist'), pod({ metadata: { finalizers: [] } })),
      true,
    );
  });

  test('status.phase, spec.nodeName, owner kinds and the Ready condition', () => {
    const running = pod({
      metadata: { ownerReferences: [{ kind: 'Job', name: 'j' }] },
      status: {
        phase: 'Running',
        conditions: [
          { type: 'PodScheduled', status: 'True' },
          { type: 'Ready', status: 'True' },
        ],
      },
    });
    assert.equal(matches(expr('.status.phase', 'In', ['Running']), running), true);
    assert.equal(matches(expr('.status.phase', 'NotIn', ['Running', 'Succeeded']), running), false);
    assert.equal(matches(expr('.spec.nodeName', 'Exists'), running), true);
    assert.equal(matches(expr('.spec.nodeName', 'Exists'), pod({ spec: { nodeName: undefined } })), false);
    assert.equal(matches(expr('.metadata.ownerReferences.[].kind', 'In', ['Job']), running), true);
    const ready = expr('.status.conditions.[] | select(.type == "Ready") | .status', 'In', ['True']);
    assert.equal(matches(ready, running), true);
    assert.equal(matches(ready, pod()), false);
    const notReady = expr('.status.conditions.[] | select( .type == "Ready" ) | .status', 'NotIn', ['True']);
    assert.equal(matches(notReady, pod()), true);
  });

  test('annotation keys in brackets, booleans compared as text, richer jq through the library', () => {
    assert.equal(
      matches(
        expr('.metadata.annotations["x.io/mode"]', 'In', ['slow']),
        pod({ metadata: { annotations: { 'x.io/mode': 'slow' } } }),
      ),
      true,
    );
    assert.equal(
      matches(expr('.spec.hostNetwork', 'In', ['true']), pod({ spec: { hostNetwork: true } })),
      true,
    );
    assert.equal(matches(expr('.spec.containers | length', 'In', ['1']), pod()), true);
    assert.equal(matches(expr('[.spec.containers[].name] | join(",")', 'In', ['worker']), pod()), true);
  });

  test('matchLabels, matchAnnotations and resourceRef must all agree', () => {
    const s = compiled(
      podStage('s', { selector: { matchLabels: { a: '1' }, matchAnnotations: { b: '2' } } }),
    );
    assert.equal(matches(s, pod({ metadata: { labels: { a: '1' }, annotations: { b: '2' } } })), true);
    assert.equal(matches(s, pod({ metadata: { labels: { a: '1' } } })), false);
    assert.equal(
      matches(s, { ...pod({ metadata: { labels: { a: '1' }, annotations: { b: '2' } } }), kind: 'Node' }),
      false,
    );
  });

  test('a query memo asks each question once per object, and a fresh memo asks again', () => {
    const q = '.status.conditions.[] | select(.type == "Ready") | .status';
    const a = expr(q, 'In', ['True']);
    const b = expr(q, 'NotIn', ['True']);
    let runs = 0;
    const query = a.matchExpressions[0]!.query;
    const counted = {
      source: query.source,
      run: (o: unknown) => {
        runs++;
        return query.run(o);
      },
    };
    a.matchExpressions[0]!.query = counted;
    b.matchExpressions[0]!.query = counted;
    const ready = pod({ status: { conditions: [{ type: 'Ready', status: 'True' }] } });
    const memo: QueryMemo = new Map();
    assert.deepEqual([stageMatches(a, ready, memo), stageMatches(b, ready, memo)], [true, false]);
    assert.equal(runs, 1);
    // The memo belongs to one unchanged object: the next version gets a new one and is asked anew.
    const unready = pod({ status: { conditions: [{ type: 'Ready', status: 'False' }] } });
    const next: QueryMemo = new Map();
    assert.deepEqual([stageMatches(a, unready, next), stageMatches(b, unready, next)], [false, true]);
    assert.equal(runs, 2);
  });

  test('the ephemeral-containers stage matches exactly the pods with unreported ephemeral containers', () => {
    const stage = compiled(
      troupeDefaultStages().find((s) => s.metadata.name === 'pod-ephemeral-containers')!,
    );
    const running = (spec: Record<string, unknown>, status: Record<string, unknown>) =>
      pod({ spec, status: { podIP: '10.0.0.1', ...status } });
    const debug = [{ name: 'debugger', image: 'busybox' }];
    assert.equal(stageMatches(stage, running({}, {})), false);
    assert.equal(stageMatches(stage, running({ ephemeralContainers: [] }, {})), false);
    assert.equal(stageMatches(stage, running({ ephemeralContainers: debug }, {})), true);
    assert.equal(
      stageMatches(
        stage,
        running({ ephemeralContainers: debug }, { ephemeralContainerStatuses: [{ name: 'debugger' }] }),
      ),
      false,
    );
  });

  test('plain paths follow jq: null through missing keys, an error on the wrong type', () => {
    const run = (src: string, input: unknown) => {
      const q = compileJq(src);
      assert.ok(q.ok);
      return q.ok ? q.query.run(input) : undefined;
    };
    assert.deepEqual(run('.a.b', { a: { b: 1 } }), [1]);
    assert.deepEqual(run('.a.b', { a: null }), [null]);
    assert.deepEqual(run('.a.b.c', {}), [null]);
    assert.equal(run('.a.b', { a: 's' }), undefined);
    assert.equal(run('.a.b', { a: [1] }), undefined);
    assert.deepEqual(run('.a[1]', { a: [1, 2] }), [2]);
    assert.deepEqual(run('.a[-1]', { a: [1, 2] }), [2]);
    assert.deepEqual(run('.a[5]', { a: [1, 2] }), [null]);
    assert.equal(run('.a[0]', { a: {} }), undefined);
    assert.deepEqual(run('.', 3), [3]);
    assert.deepEqual(run('.a', undefined), [null]);
  });

  test('a stage without a selector never matches, as KWOK ignores it', () => {
    const s = compiled({ metadata: { name: 'n' }, spec: { resourceRef: { kind: 'Pod' }, next: {} } });
    assert.equal(matchStages([s], pod()), undefined);
  });
});

describe('weights', () => {
  const a = compiled(podStage('a', { weight: 1 }));
  const b = compiled(podStage('b', { weight: 3 }));

  test('the draw follows the weights and is repeatable with an injected random source', () => {
    assert.equal(matchStages([a, b], pod(), () => 0)?.name, 'a');
    assert.equal(matchStages([a, b], pod(), () => 0.24)?.name, 'a');
    assert.equal(matchStages([a, b], pod(), () => 0.25)?.name, 'b');
    assert.equal(matchStages([a, b], pod(), () => 0.99)?.name, 'b');
  });

  test('all-zero weights draw uniformly; weightFrom reads the object', () => {
    const z1 = compiled(podStage('z1', {}));
    const z2 = compiled(podStage('z2', {}));
    assert.equal(matchStages([z1, z2], pod(), () => 0.4)?.name, 'z1');
    assert.equal(matchStages([z1, z2], pod(), () => 0.6)?.name, 'z2');
    const dyn = compiled(
      podStage('dyn', { weight: 0, weightFrom: { expressionFrom: '.metadata.annotations["w"]' } }),
    );
    assert.equal(matchStages([a, dyn], pod(), () => 0.5)?.name, 'a');
    assert.equal(
      matchStages([a, dyn], pod({ metadata: { annotations: { w: '9' } } }), () => 0.5)?.name,
      'dyn',
    );
  });
});

describe('delays', () => {
  const delayed = (delay: Stage['spec']['delay']) => compiled(podStage('d', { delay }));

  test('fixed duration and uniform jitter up to the jitter bound', () => {
    const s = delayed({ durationMilliseconds: 1000, jitterDurationMilliseconds: 5000 });
    assert.equal(stageDelay(s, pod(), { now: () => NOW, random: () => 0 }), 1000);
    assert.equal(stageDelay(s, pod(), { now: () => NOW, random: () => 0.5 }), 3000);
    assert.equal(stageDelay(s, pod(), { now: () => NOW, random: () => 0.999999 }), 4999);
    assert.equal(stageDelay(delayed({ durationMilliseconds: 250 }), pod(), env), 250);
    assert.equal(stageDelay(compiled(podStage('none', {})), pod(), env), undefined);
  });

  test('a jitter bound below the duration caps the delay', () => {
    assert.equal(
      stageDelay(delayed({ durationMilliseconds: 5000, jitterDurationMilliseconds: 2000 }), pod(), env),
      2000,
    );
  });

  test('durationFrom reads Go durations or a deadline from the object, else falls back', () => {
    const s = delayed({
      durationMilliseconds: 100,
      durationFrom: { expressionFrom: '.metadata.annotations["run-for"]' },
    });
    assert.equal(stageDelay(s, pod({ metadata: { annotations: { 'run-for': '1m30s' } } }), env), 90_000);
    assert.equal(
      stageDelay(s, pod({ metadata: { annotations: { 'run-for': '2026-03-04T05:06:17.123Z' } } }), env),
      10_000,
    );
    assert.equal(stageDelay(s, pod({ metadata: { annotations: { 'run-for': 'soon' } } }), env), 100);
    assert.equal(stageDelay(s, pod(), env), 100);
    assert.equal(stageDelay(s, pod({ metadata: { annotations: { 'run-for': '' } } }), env), undefined);
  });

  test('jitterDurationFrom a deletionTimestamp keeps the delay within the grace period', () => {
    const s = delayed({
      durationMilliseconds: 1000,
      jitterDurationFrom: { jq: { expression: '.metadata.deletionTimestamp' } },
    });
    const deleting = pod({ metadata: { deletionTimestamp: '2026-03-04T05:06:37.123Z' } });
    assert.equal(stageDelay(s, deleting, { now: () => NOW, random: () => 0.5 }), 1000 + 14_500);
  });

  test('Go duration syntax', () => {
    assert.equal(parseGoDuration('1h2m3.5s'), 3_723_500);
    assert.equal(parseGoDuration('300ms'), 300);
    assert.equal(parseGoDuration('-1.5h'), -5_400_000);
    assert.equal(parseGoDuration('0'), 0);
    assert.equal(parseGoDuration('10'), undefined);
    assert.equal(parseGoDuration('1d'), undefined);
  });
});

describe('bad stages are rejected with the field named', () => {
  const errors = (s: Stage) => {
    const r = compileStage(s);
    assert.equal(r.ok, false);
    return r.ok ? [] : r.errors;
  };

  test('unparseable jq key', () => {
    const e = errors(
      podStage('bad', { selector: { matchExpressions: [{ key: '.status.[', operator: 'Exists' }] } }),
    );
    assert.equal(e.length, 1);
    assert.match(e[0]!, /^spec\.selector\.matchExpressions\[0\]\.key: Invalid value: "\.status\.\[": /);
    const fn = errors(
      podStage('bad', { selector: { matchExpressions: [{ key: '.a | nosuchfn', operator: 'Exists' }] } }),
    );
    assert.match(fn[0]!, /^spec\.selector\.matchExpressions\[0\]\.key: Invalid value: .*no such function/);
  });

  test('unknown operator and missing values', () => {
    assert.deepEqual(
      errors(
        podStage('bad', { selector: { matchExpressions: [{ key: '.a', operator: 'Gt', values: ['1'] }] } }),
      ),
      [
        'spec.selector.matchExpressions[0].operator: Unsupported value: "Gt": supported values: "In", "NotIn", "Exists", "DoesNotExist"',
      ],
    );
    assert.deepEqual(
      errors(podStage('bad', { selector: { matchExpressions: [{ key: '.a', operator: 'In' }] } })),
      ['spec.selector.matchExpressions[0].values: Required value: must be specified when operator is In'],
    );
  });

  test('a template that does not parse', () => {
    const e = errors(podStage('bad', { next: { statusTemplate: 'phase: {{ .status.phase ' } }));
    assert.equal(e[0], 'spec.next.statusTemplate: Invalid value: template: _:1: unclosed action');
    const unknown = errors(podStage('bad', { next: { statusTemplate: 'phase: {{ Nope }}' } }));
    assert.equal(
      unknown[0],
      'spec.next.statusTemplate: Invalid value: template: _:1: function "Nope" not defined',
    );
  });

  test('missing kind, negative delay, CEL, bad event type, several errors at once', () => {
    const e = errors({
      metadata: { name: 'x' },
      spec: {
        resourceRef: { kind: '' },
        delay: { durationMilliseconds: -1, durationFrom: { cel: { expression: 'x' } } },
        next: { event: { type: 'Info', reason: 'r' } },
      },
    });
    assert.deepEqual(e, [
      'spec.resourceRef.kind: Required value',
      'spec.delay.durationMilliseconds: Invalid value: -1: must be a non-negative integer',
      'spec.delay.durationFrom.cel: Unsupported value: CEL expressions are not supported; use jq',
      'spec.next.event.type: Unsupported value: "Info": supported values: "Normal", "Warning"',
    ]);
    const many = compileStages([podStage('ok', {}), podStage('bad', { weight: -2 })]);
    assert.equal(many.stages.length, 1);
    assert.deepEqual(many.errors, [
      'stage bad: spec.weight: Invalid value: -2: must be a non-negative integer',
    ]);
  });
});

describe('planning the next step', () => {
  test('finalizer edits as JSON patch operations', () => {
    assert.deepEqual(finalizerOps([], { add: ['a', 'b'], remove: [], empty: false }), [
      { op: 'add', path: '/metadata/finalizers', value: ['a', 'b'] },
    ]);
    assert.deepEqual(finalizerOps(['x'], { add: ['x', 'y'], remove: [], empty: false }), [
      { op: 'add', path: '/metadata/finalizers/-', value: 'y' },
    ]);
    assert.deepEqual(finalizerOps(['a', 'k', 'b', 'k'], { add: [], remove: ['k'], empty: false }), [
      { op: 'remove', path: '/metadata/finalizers/3' },
      { op: 'remove', path: '/metadata/finalizers/1' },
    ]);
    assert.deepEqual(finalizerOps(['k'], { add: [], remove: ['k'], empty: false }), [
      { op: 'remove', path: '/metadata/finalizers' },
    ]);
    assert.deepEqual(finalizerOps(['a'], { add: ['n'], remove: [], empty: true }), [
      { op: 'remove', path: '/metadata/finalizers' },
      { op: 'add', path: '/metadata/finalizers', value: ['n'] },
    ]);
  });

  test('event message templates, delete without patches, extra patches with roots', () => {
    const s = compiled(
      podStage('kill', {
        next: {
          event: {
            type: 'Normal',
            reason: 'Killing',
            message: 'Stopping container {{ (index .spec.containers 0).name }}',
          },
          finalizers: { empty: true },
          delete: true,
          statusTemplate: 'phase: Failed',
        },
      }),
    );
    const r = planNext(s, pod({ metadata: { finalizers: ['f'] } }), env);
    assert.ok(r.ok);
    if (!r.ok) return;
    assert.deepEqual(r.plan.event, {
      type: 'Normal',
      reason: 'Killing',
      message: 'Stopping container worker',
    });
    assert.deepEqual(r.plan.finalizers, [{ op: 'remove', path: '/metadata/finalizers' }]);
    assert.equal(r.plan.delete, true);
    assert.deepEqual(r.plan.patches, []);

    const p = compiled(
      podStage('label', {
        next: {
          patches: [
            { root: 'metadata', template: 'labels:\n  done: "yes"' },
            { type: 'json', root: 'metadata', template: '- op: add\n  path: /annotations\n  value: {a: b}' },
          ],
        },
      }),
    );
    const rp = planNext(p, pod(), env);
    assert.ok(rp.ok);
    if (!rp.ok) return;
    assert.deepEqual(rp.plan.patches, [
      {
        subresource: '',
        type: 'strategic',
        impersonate: undefined,
        patch: { metadata: { labels: { done: 'yes' } } },
      },
      {
        subresource: '',
        type: 'json',
        impersonate: undefined,
        patch: [{ op: 'add', path: '/metadata/annotations', value: { a: 'b' } }],
      },
    ]);
  });

  test('a status that differs only by the time parses as its own text does, wherever the time is', () => {
    // The parse of a recent text is reused with the time put back (plan.ts, parseRendered):
    // the quoted time in every YAML position, renders at other times (other lengths) and for
    // other objects, and texts that do not qualify must all come out as parsed afresh.
    const template = [
      '{{- $now := Now | Quote }}',
      'quoted: {{ $now }}',
      "single: 'at {{ $now }} ok'",
      'plain: x{{ $now }}y',
      '{{ $now }}: 1',
      'flow: [{{ $now }}, {k: {{ $now }}}]',
      'block: |',
      '  since {{ $now }}',
      '# a comment {{ $now }}',
      'anchor: &a {{ $now }}',
      'alias: *a',
      '__proto__: {{ $now }}',
      'name: {{ .metadata.name }}',
      '{{- if .metadata.labels }}',
      'unquoted: {{ Now }}',
      'escaped: "a\\tb"',
      '{{- end }}',
    ].join('\n');
    const s = compiled(podStage('times', { next: { statusTemplate: template } }));
    const expected = (t: string, name: string, more = {}) => {
      const status: Record<string, unknown> = {
        quoted: t,
        single: `at "${t}" ok`,
        plain: `x"${t}"y`,
        [t]: 1,
        flow: [t, { k: t }],
        block: `since "${t}"\n`,
        anchor: t,
        alias: t,
        name,
        ...more,
      };
      Object.defineProperty(status, '__proto__', {
        value: t,
        enumerable: true,
        writable: true,
        configurable: true,
      });
      return { status };
    };
    const at = (ms: number, name: string, labels?: Record<string, string>) => {
      const r = planNext(s, pod({ metadata: { name, labels } }), { now: () => ms });
      assert.ok(r.ok, r.ok ? '' : r.error);
      return r.ok ? r.plan.patches[0]!.patch : undefined;
    };
    assert.deepEqual(at(NOW, 'a'), expected('2026-03-04T05:06:07.123Z', 'a'));
    assert.deepEqual(at(NOW + 877, 'a'), expected('2026-03-04T05:06:08Z', 'a'));
    assert.deepEqual(at(NOW + 1000, 'b'), expected('2026-03-04T05:06:08.123Z', 'b'));
    // Back to an earlier text, kept among the last few.
    assert.deepEqual(at(NOW + 2000, 'a'), expected('2026-03-04T05:06:09.123Z', 'a'));
    // A time outside quotes, and an escape, make the text parse as it is.
    const t = '2026-03-04T05:06:10.123Z';
    assert.deepEqual(at(NOW + 3000, 'a', { x: 'y' }), expected(t, 'a', { unquoted: t, escaped: 'a\tb' }));
  });

  test('statuses that differ only by their addresses parse as their own texts do', () => {
    const template = [
      'hostIP: {{ NodeIPWith .spec.nodeName | Quote }}',
      'podIP: {{ PodIPWith .spec.nodeName false .metadata.uid "" "" | Quote }}',
      'podIPs: [{ip: {{ PodIP | Quote }}}]',
      "note: 'on {{ NodeIP | Quote }}'",
      '{{- if .metadata.labels }}',
      'bare: {{ NodeIP }}',
      '{{- end }}',
    ].join('\n');
    const s = compiled(podStage('ips', { next: { statusTemplate: template } }));
    const ipEnv: StageEnv = {
      now: () => NOW,
      nodeIPWith: (node) => (node === 'node-1' ? '10.1.0.1' : '10.1.0.12'),
      podIPWith: (_node, _host, uid) => `10.2.0.${uid.length}`,
    };
    const at = (node: string, uid: string, labels?: Record<string, string>) => {
      const r = planNext(s, pod({ metadata: { uid, labels }, spec: { nodeName: node } }), ipEnv);
      assert.ok(r.ok, r.ok ? '' : r.error);
      return r.ok ? r.plan.patches[0]!.patch : undefined;
    };
    const expected = (host: string, ip: string, more = {}) => ({
      status: { hostIP: host, podIP: ip, podIPs: [{ ip }], note: `on "${host}"`, ...more },
    });
    assert.deepEqual(at('node-1', 'u'), expected('10.1.0.1', '10.2.0.1'));
    assert.deepEqual(at('node-2', 'uid-22'), expected('10.1.0.12', '10.2.0.6'));
    assert.deepEqual(at('node-1', 'uid'), expected('10.1.0.1', '10.2.0.3'));
    // An address outside quotes makes the text parse as it is.
    assert.deepEqual(at('node-2', 'u', { x: 'y' }), expected('10.1.0.12', '10.2.0.1', { bare: '10.1.0.12' }));
  });

  test('render failures come back as errors', () => {
    const s = compiled(podStage('x', { next: { statusTemplate: 'phase: {{ index .spec.containers 7 }}' } }));
    const r = planNext(s, pod(), env);
    assert.equal(r.ok, false);
    assert.match(
      r.ok ? '' : r.error,
      /^stage x: template: _:1: executing "_": error calling index: index out of range: 7/,
    );
  });

  test('a delay hook can replace the computed delay', () => {
    const s = compiled(podStage('x', { delay: { durationMilliseconds: 10 } }));
    const r = planNext(s, pod(), { ...env, adjustDelay: (_s, _o, d) => (d ?? 0) * 3 });
    assert.equal(r.ok && r.plan.delayMs, 30);
  });
});

describe('default stages', () => {
  const { stages, errors } = compileStages(loadDefaultStages());
  const ipam = createIPAM();
  const envIP: StageEnv = {
    ...env,
    nodeIPWith: ipam.nodeIP,
    podIPWith: (n, h, uid) => ipam.podIP(n, h, uid),
    nodePort: 10250,
  };

  test('all compile', () => {
    assert.deepEqual(errors, []);
    assert.deepEqual(
      stages.map((s) => s.name),
      [
        'node-initialize',
        'node-heartbeat-with-lease',
        'pod-ready',
        'pod-complete',
        'pod-remove-finalizer',
        'pod-delete',
      ],
    );
  });

  test('a new node is initialised, then only heartbeats', () => {
    const node: StageObject = {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'node-1', creationTimestamp: '2026-03-04T05:00:00Z' },
      status: { allocatable: { cpu: '8', memory: '32Gi', pods: '110', 'nvidia.com/gpu': '4' } },
    };
    const init = matchStages(stages, node);
    assert.equal(init?.name, 'node-initialize');
    const r = planNext(init!, node, envIP);
    assert.ok(r.ok, r.ok ? '' : r.error);
    if (!r.ok) return;
    const status = (r.plan.patches[0]!.patch as { status: Record<string, unknown> }).status;
    assert.equal(status.phase, 'Running');
    assert.deepEqual(status.allocatable, { cpu: '8', memory: '32Gi', pods: '110', 'nvidia.com/gpu': '4' });
    assert.deepEqual(status.capacity, status.allocatable);
    assert.deepEqual(status.addresses, [
      { type: 'InternalIP', address: ipam.nodeIP('node-1') },
      { type: 'Hostname', address: 'node-1' },
    ]);
    assert.deepEqual(status.daemonEndpoints, { kubeletEndpoint: { Port: 10250 } });
    const conditions = status.conditions as { type: string; status: string; lastHeartbeatTime: string }[];
    assert.deepEqual(
      conditions.map((c) => [c.type, c.status]),
      [
        ['Ready', 'True'],
        ['MemoryPressure', 'False'],
        ['DiskPressure', 'False'],
        ['PIDPressure', 'False'],
        ['NetworkUnavailable', 'False'],
      ],
    );
    assert.equal(conditions[0]!.lastHeartbeatTime, '2026-03-04T05:06:07.123Z');
    const up = { ...node, status: { ...(node.status as object), ...status } };
    const hb = matchStages(stages, up);
    assert.equal(hb?.name, 'node-heartbeat-with-lease');
    assert.equal(stageDelay(hb!, up, env), 600_000);
  });

  test('a Job pod runs, completes, and is removed after deletion', () => {
    const jobPod = pod({
      metadata: { ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: 'j', uid: 'j1' }] },
      spec: {
        restartPolicy: 'Never',
        readinessGates: [{ conditionType: 'example.com/gate' }],
        initContainers: [
          { name: 'setup', image: 'i' },
          { name: 'proxy', image: 'p', restartPolicy: 'Always' },
        ],
      },
    });
    assert.equal(
      matchStages(stages, { ...jobPod, spec: { ...(jobPod.spec as object), nodeName: undefined } }),
      undefined,
    );
    const ready = matchStages(stages, jobPod);
    assert.equal(ready?.name, 'pod-ready');
    const r = planNext(ready!, jobPod, envIP);
    assert.ok(r.ok, r.ok ? '' : r.error);
    if (!r.ok) return;
    const status = (r.plan.patches[0]!.patch as { status: Record<string, unknown> }).status;
    assert.equal(status.phase, 'Running');
    assert.equal(status.podIP, ipam.podIP('node-1', false, 'uid-1'));
    assert.equal(status.hostIP, ipam.nodeIP('node-1'));
    assert.deepEqual(
      (status.conditions as { type: string }[]).map((c) => c.type),
      ['Initialized', 'Ready', 'ContainersReady', 'example.com/gate'],
    );
    const inits = status.initContainerStatuses as { name: string; state: Record<string, unknown> }[];
    assert.deepEqual(
      inits.map((c) => [c.name, Object.keys(c.state)[0]]),
      [
        ['setup', 'terminated'],
        ['proxy', 'running'],
      ],
    );

    const running: StageObject = { ...jobPod, status: status };
    const complete = matchStages(stages, running);
    assert.equal(complete?.name, 'pod-complete');
    const rc = planNext(complete!, running, envIP);
    assert.ok(rc.ok);
    if (!rc.ok) return;
    const done = (rc.plan.patches[0]!.patch as { status: Record<string, unknown> }).status;
    assert.equal(done.phase, 'Succeeded');
    const cs = done.containerStatuses as { state: { terminated: { exitCode: number; reason: string } } }[];
    assert.deepEqual(cs[0]!.state.terminated.exitCode, 0);
    assert.equal(cs[0]!.state.terminated.reason, 'Completed');

    const deleting = pod({
      metadata: { deletionTimestamp: '2026-03-04T05:06:30Z', finalizers: ['kwok.x-k8s.io/fake'] },
    });
    const rm = matchStages(stages, deleting);
    assert.equal(rm?.name, 'pod-remove-finalizer');
    const rr = planNext(rm!, deleting, envIP);
    assert.ok(rr.ok);
    assert.deepEqual(rr.ok && rr.plan.finalizers, [{ op: 'remove', path: '/metadata/finalizers' }]);
    assert.deepEqual(rr.ok && rr.plan.event, {
      type: 'Normal',
      reason: 'Killing',
      message: 'Stopping container',
    });

    const gone = pod({ metadata: { deletionTimestamp: '2026-03-04T05:06:30Z' } });
    const del = matchStages(stages, gone);
    assert.equal(del?.name, 'pod-delete');
    const rd = planNext(del!, gone, envIP);
    assert.ok(rd.ok && rd.plan.delete && rd.plan.patches.length === 0);
  });

  test('a pod owned by a Deployment keeps running', () => {
    const rsPod = pod({
      metadata: { ownerReferences: [{ kind: 'ReplicaSet', name: 'rs' }] },
      spec: { restartPolicy: 'Always' },
      status: { phase: 'Running', podIP: '10.0.0.9', conditions: [{ type: 'Ready', status: 'True' }] },
    });
    assert.equal(matchStages(stages, rsPod), undefined);
  });
});

describe('KWOK template functions', () => {
  test('Quote, YAML with indent, Now in RFC3339Nano', async () => {
    const { kwokQuote, kwokYAML, formatRFC3339Nano } = await import(
      '../../../src/cluster/kubelet/stages/index.ts'
    );
    assert.equal(kwokQuote('a"b'), '"a\\"b"');
    assert.equal(kwokQuote(3), '"3"');
    assert.equal(kwokQuote({ a: '<x>' }), '"{\\"a\\":\\"\\\\u003cx\\\\u003e\\"}"');
    assert.equal(kwokQuote(undefined), '"null"');
    assert.equal(
      kwokYAML([{ type: 'InternalIP', address: '1.2.3.4' }], 1),
      '\n  - address: 1.2.3.4\n    type: InternalIP\n  ',
    );
    assert.equal(formatRFC3339Nano(Date.parse('2026-03-04T05:06:07Z')), '2026-03-04T05:06:07Z');
    assert.equal(formatRFC3339Nano(Date.parse('2026-03-04T05:06:07.120Z')), '2026-03-04T05:06:07.12Z');
    // The last instant's text is remembered: asking again, or for another, stays right.
    assert.equal(formatRFC3339Nano(Date.parse('2026-03-04T05:06:07.120Z')), '2026-03-04T05:06:07.12Z');
    assert.equal(formatRFC3339Nano(Date.parse('2026-03-04T05:06:07.003Z')), '2026-03-04T05:06:07.003Z');
    assert.equal(formatRFC3339Nano(Date.parse('2026-03-04T05:06:07Z')), '2026-03-04T05:06:07Z');
  });

  test('existing node addresses are kept through YAML', () => {
    const { stages } = compileStages(loadDefaultStages());
    const node: StageObject = {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'n' },
      status: { addresses: [{ type: 'InternalIP', address: '192.0.2.7' }], capacity: { cpu: '2' } },
    };
    const r = planNext(matchStages(stages, node)!, node, env);
    assert.ok(r.ok, r.ok ? '' : r.error);
    const status = r.ok ? (r.plan.patches[0]!.patch as { status: Record<string, unknown> }).status : {};
    assert.deepEqual(status.addresses, [{ type: 'InternalIP', address: '192.0.2.7' }]);
    assert.deepEqual(status.allocatable, { cpu: '2' });
    assert.equal(status.daemonEndpoints, undefined);
  });
});
