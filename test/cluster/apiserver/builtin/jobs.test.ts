import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { jobStatusString } from '../../../../src/cluster/apiserver/builtin/jobs.ts';
import { create, created, messages, mutate, rtFor, update } from './harness.ts';

// biome-ignore lint/suspicious/noExplicitAny: tests reach into loose JSON
type Any = any;

const jobs = rtFor('jobs', 'batch');

function job(
  spec: Record<string, unknown> = {},
  templateSpec: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'pi' },
    spec: {
      template: {
        spec: { restartPolicy: 'Never', containers: [{ name: 'pi', image: 'perl:5.34' }], ...templateSpec },
      },
      ...spec,
    },
  };
}

describe('job defaults and generated selector', () => {
  test('defaults', () => {
    const j = created(jobs, job()) as Any;
    assert.equal(j.spec.completions, 1);
    assert.equal(j.spec.parallelism, 1);
    assert.equal(j.spec.backoffLimit, 6);
    assert.equal(j.spec.completionMode, 'NonIndexed');
    assert.equal(j.spec.suspend, false);
    assert.equal(j.spec.manualSelector, false);
    assert.equal(j.spec.podReplacementPolicy, 'TerminatingOrFailed');
    assert.deepEqual(j.status, {});
  });

  test('parallelism alone leaves completions unset', () => {
    const j = created(jobs, job({ parallelism: 3 })) as Any;
    assert.equal(j.spec.completions, undefined);
    assert.equal(j.spec.parallelism, 3);
  });

  test('a podFailurePolicy switches podReplacementPolicy to Failed and defaults condition status', () => {
    const j = created(
      jobs,
      job({
        podFailurePolicy: { rules: [{ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget' }] }] },
      }),
    ) as Any;
    assert.equal(j.spec.podReplacementPolicy, 'Failed');
    assert.equal(j.spec.podFailurePolicy.rules[0].onPodConditions[0].status, 'True');
  });

  test('selector and template labels are generated from the uid and name', () => {
    const j = created(jobs, job()) as Any;
    const uid = j.metadata.uid;
    assert.deepEqual(j.spec.selector, { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } });
    assert.deepEqual(j.spec.template.metadata.labels, {
      'batch.kubernetes.io/controller-uid': uid,
      'batch.kubernetes.io/job-name': 'pi',
      'controller-uid': uid,
      'job-name': 'pi',
    });
    assert.deepEqual(j.metadata.labels, j.spec.template.metadata.labels);
  });

  test('manualSelector keeps the user selector, which must match', () => {
    const ok = created(
      jobs,
      job({
        manualSelector: true,
        selector: { matchLabels: { a: 'b' } },
        template: {
          metadata: { labels: { a: 'b' } },
          spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'x' }] },
        },
      }),
    ) as Any;
    assert.deepEqual(ok.spec.selector, { matchLabels: { a: 'b' } });
    const bad = create(jobs, job({ manualSelector: true, selector: { matchLabels: { a: 'b' } } }));
    assert.deepEqual(messages(bad.errors), [
      'spec.template.metadata.labels: Invalid value: {}: `selector` does not match template `labels`',
    ]);
  });

  test('a hand-written selector without manualSelector is refused', () => {
    const r = create(jobs, job({ selector: { matchLabels: { a: 'b' } } }));
    assert.ok(
      messages(r.errors).some(
        (m) =>
          m.startsWith('spec.selector: Invalid value: ') && m.endsWith(': `selector` not auto-generated'),
      ),
    );
  });
});

describe('job validation', () => {
  test('restartPolicy must be OnFailure or Never (Always is the pod default)', () => {
    const r = create(jobs, job({}, { restartPolicy: undefined }));
    assert.deepEqual(messages(r.errors), [
      'spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: "OnFailure", "Never"',
    ]);
  });

  test('counts are non-negative and completionMode supported', () => {
    const r = create(jobs, job({ backoffLimit: -1, completionMode: 'Sometimes' }));
    assert.deepEqual(messages(r.errors), [
      'spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0',
      'spec.completionMode: Unsupported value: "Sometimes": supported values: "NonIndexed", "Indexed"',
    ]);
  });
});

describe('job updates', () => {
  test('template is immutable for a running job', () => {
    const j = created(jobs, job());
    const r = update(
      jobs,
      j,
      mutate(j, (x: Any) => (x.spec.template.spec.containers[0].image = 'perl:5.36')),
    );
    assert.equal(r.errors.length, 1);
    assert.equal(r.errors[0]!.field, 'spec.template');
    assert.match(r.errors[0]!.message, /: field is immutable$/);
  });

  test('a suspended, never-started job may get scheduling directives (Kueue admission)', () => {
    const j = created(jobs, job({ suspend: true }));
    const admitted = update(
      jobs,
      j,
      mutate(j, (x: Any) => {
        x.spec.template.spec.nodeSelector = { 'cloud.example/flavor': 'gpu' };
        x.spec.template.spec.tolerations = [{ key: 'gpu', operator: 'Exists', effect: 'NoSchedule' }];
        x.spec.template.spec.schedulingGates = [{ name: 'kueue.x-k8s.io/admission' }];
        x.spec.template.metadata.labels['kueue.x-k8s.io/podset'] = 'main';
        x.spec.template.metadata.annotations = { note: 'x' };
        x.spec.template.spec.affinity = {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchExpressions: [{ key: 'z', operator: 'Exists' }] }],
            },
          },
        };
        x.spec.suspend = false;
      }),
    );
    assert.deepEqual(admitted.errors, []);
    assert.equal(admitted.obj.metadata.generation, 2);
    const image = update(
      jobs,
      j,
      mutate(j, (x: Any) => (x.spec.template.spec.containers[0].image = 'other')),
    );
    assert.equal(image.errors[0]?.field, 'spec.template');
  });

  test('after the job started, directives are immutable again', () => {
    const j = mutate(
      created(jobs, job({ suspend: true })),
      (x: Any) => (x.status = { startTime: '2025-01-01T00:00:00Z' }),
    );
    const r = update(
      jobs,
      j,
      mutate(j, (x: Any) => (x.spec.template.spec.nodeSelector = { a: 'b' })),
    );
    assert.equal(r.errors[0]?.field, 'spec.template');
  });

  test('completions and selector are immutable; suspend and parallelism are not', () => {
    const j = created(jobs, job());
    assert.deepEqual(
      messages(
        update(
          jobs,
          j,
          mutate(j, (x: Any) => (x.spec.completions = 3)),
        ).errors,
      ),
      ['spec.completions: Invalid value: 3: field is immutable'],
    );
    assert.deepEqual(
      update(
        jobs,
        j,
        mutate(j, (x: Any) => {
          x.spec.suspend = true;
          x.spec.parallelism = 4;
        }),
      ).errors,
      [],
    );
  });

  test('status updates keep the spec and validate counts', () => {
    const j = created(jobs, job());
    const ok = update(
      jobs,
      j,
      { ...j, spec: { parallelism: 99 }, status: { active: 1, startTime: '2025-01-01T00:00:00Z' } },
      'status',
    );
    assert.deepEqual(ok.errors, []);
    assert.equal((ok.obj as Any).spec.parallelism, 1);
    const bad = update(jobs, j, { ...j, status: { failed: -1 } }, 'status');
    assert.deepEqual(messages(bad.errors), [
      'status.failed: Invalid value: -1: must be greater than or equal to 0',
    ]);
  });
});

describe('job table', () => {
  test('columns and cells', () => {
    assert.deepEqual(
      jobs.strategy.table!.columns.map((c) => c.name),
      ['Name', 'Status', 'Completions', 'Duration', 'Age', 'Containers', 'Images', 'Selector'],
    );
    const j = mutate(created(jobs, job()), (x: Any) => {
      x.status = {
        succeeded: 1,
        startTime: '2025-01-01T00:00:00Z',
        completionTime: '2025-01-01T00:00:42Z',
        conditions: [{ type: 'Complete', status: 'True' }],
      };
    });
    const cells = jobs.strategy.table!.cells(j, new Date('2025-01-01T00:05:00Z'));
    assert.deepEqual(cells.slice(0, 6), ['pi', 'Complete', '1/1', '42s', '5m', 'pi']);
    assert.equal(cells[7], `batch.kubernetes.io/controller-uid=${j.metadata.uid}`);
    assert.deepEqual(jobs.strategy.selectableFields!(j), { 'status.successful': '1' });
  });

  test('status column precedence', () => {
    const withConds = (...types: string[]) => ({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: {},
      status: { conditions: types.map((type) => ({ type, status: 'True' })) },
    });
    assert.equal(jobStatusString(withConds()), 'Running');
    assert.equal(jobStatusString(withConds('Suspended')), 'Suspended');
    assert.equal(jobStatusString(withConds('FailureTarget', 'Failed')), 'Failed');
    assert.equal(
      jobStatusString({ ...withConds('Suspended'), metadata: { deletionTimestamp: 'x' } }),
      'Terminating',
    );
  });

  test('parallel jobs without completions', () => {
    const j = created(jobs, job({ parallelism: 3 }));
    assert.equal(jobs.strategy.table!.cells(j, new Date('2025-01-01T00:00:00Z'))[2], '0/1 of 3');
  });
});
