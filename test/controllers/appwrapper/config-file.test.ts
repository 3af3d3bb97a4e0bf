/**
 * Upstream's operator configuration file (AppWrapper v1.2.1 pkg/config/config.go and
 * config/default/config.yaml) read by configFromOperatorFile, with upstream's defaults and a
 * clear error for each malformed value.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import {
  configFromOperatorFile,
  DEFAULT_AUTOPILOT,
  resolveConfig,
} from '../../../src/controllers/appwrapper/config.ts';

const read = (yaml: string) => resolveConfig(configFromOperatorFile(parse(yaml)));

describe('the operator configuration file', () => {
  test("upstream's defaults: autopilot labels WARN/TESTING/EVICT on nvidia.com/gpu, weight 50", () => {
    const c = resolveConfig();
    assert.deepEqual(c.autopilot, DEFAULT_AUTOPILOT);
    assert.deepEqual(
      c.autopilot.resourceTaints['nvidia.com/gpu']?.map((t) => `${t.key}=${t.value}:${t.effect}`),
      [
        'autopilot.ibm.com/gpuhealth=WARN:PreferNoSchedule',
        'autopilot.ibm.com/gpuhealth=TESTING:NoSchedule',
        'autopilot.ibm.com/gpuhealth=EVICT:NoExecute',
      ],
    );
  });

  test('the config.yaml document: appwrapper section read, the others left to troupe’s flags', () => {
    const c = read(`
controllerManager:
  health: {bindAddress: ":8081"}
  leaderElection: true
appwrapper:
  defaultQueueName: default-queue
  userRBACAdmissionCheck: false
  schedulerName: scheduler-plugins-scheduler
  faultTolerance: {admissionGracePeriod: 30000000000, warmupGracePeriod: 10m, retryLimit: 1}
  autopilot:
    monitorNodes: false
    resourceTaints:
      nvidia.com/gpu:
      - {key: autopilot.ibm.com/gpuhealth, value: ERR, effect: NoExecute}
`);
    assert.equal(c.defaultQueueName, 'default-queue');
    assert.equal(c.userRBACAdmissionCheck, false);
    assert.equal(c.schedulerName, 'scheduler-plugins-scheduler');
    assert.equal(c.faultTolerance.admissionGracePeriodMs, 30_000);
    assert.equal(c.faultTolerance.warmupGracePeriodMs, 600_000);
    assert.equal(c.faultTolerance.retryLimit, 1);
    assert.equal(c.autopilot.monitorNodes, false);
    assert.equal(c.autopilot.injectAntiAffinities, true);
    assert.deepEqual(c.autopilot.resourceTaints, {
      'nvidia.com/gpu': [{ key: 'autopilot.ibm.com/gpuhealth', value: 'ERR', effect: 'NoExecute' }],
    });
  });

  test('the ConfigMap upstream deploys (one data key) is read the same way', () => {
    const c = read(`
kind: ConfigMap
apiVersion: v1
metadata: {name: appwrapper-operator-config}
data:
  config.yaml: |
    appwrapper:
      defaultQueueName: team-queue
`);
    assert.equal(c.defaultQueueName, 'team-queue');
  });

  test('bad input is refused with the field and the fix', () => {
    const cases: [string, RegExp][] = [
      [
        'appwrapper: {enableKueueIntegrations: true}',
        /appwrapper\.enableKueueIntegrations was removed in AppWrapper v1\.1\.0.*remove it/,
      ],
      ['appwrapper: {kueueJobReconciller: {}}', /appwrapper\.kueueJobReconciller was removed/],
      [
        'appwrapper: {faultTolerance: {warmupGracePeriod: soon}}',
        /appwrapper\.faultTolerance\.warmupGracePeriod: "soon" is not a duration/,
      ],
      [
        'appwrapper: {userRBACAdmissionCheck: "yes"}',
        /appwrapper\.userRBACAdmissionCheck: expected true or false/,
      ],
      [
        'appwrapper: {autopilot: {resourceTaints: {nvidia.com/gpu: [{key: k, effect: Sometimes}]}}}',
        /resourceTaints\.nvidia\.com\/gpu\[0\]\.effect: expected NoExecute, NoSchedule or PreferNoSchedule/,
      ],
      [
        'appwrapper: {autopilot: {preferNoScheduleWeight: 500}}',
        /preferNoScheduleWeight: expected an integer from 1 to 100/,
      ],
      ['appwraper: {}', /unknown section "appwraper"/],
      [
        'appwrapper: {slackQueueName: slack-queue}',
        /appwrapper\.slackQueueName was removed in AppWrapper v1\.1\.0 \(upstream dropped its slack ClusterQueue monitor\); remove it/,
      ],
      [
        'appwrapper: {defaultQueueNmae: q}',
        /unknown field appwrapper\.defaultQueueNmae \(upstream's fields there: autopilot, userRBACAdmissionCheck/,
      ],
      ['appwrapper: {faultTolerance: {retryLimt: 1}}', /unknown field appwrapper\.faultTolerance\.retryLimt/],
      ['appwrapper: {faultTolerance: [1m]}', /appwrapper\.faultTolerance: expected a mapping/],
      ['appwrapper: {autopilot: [true]}', /appwrapper\.autopilot: expected a mapping/],
      ['appwrapper: {autopilot: {monitorNode: false}}', /unknown field appwrapper\.autopilot\.monitorNode/],
      ['kind: ConfigMap\ndata: {a: "x", b: "y"}', /must hold exactly one data key/],
    ];
    for (const [yaml, re] of cases) assert.throws(() => configFromOperatorFile(parse(yaml)), re, yaml);
    assert.throws(
      () => read('appwrapper: {faultTolerance: {admissionGracePeriod: 10m}}'),
      /admissionGracePeriod 10m0s exceeds warmupGracePeriod 5m0s/,
    );
  });
});

describe('the file is read over the defaults, as upstream unmarshals it over NewAppWrapperConfig()', () => {
  const nvidia = DEFAULT_AUTOPILOT.resourceTaints['nvidia.com/gpu'];

  test('resourceTaints merges by resource: adding amd.com/gpu keeps the nvidia.com/gpu defaults', () => {
    const c = read(`
appwrapper:
  autopilot:
    resourceTaints:
      amd.com/gpu:
      - {key: autopilot.ibm.com/gpuhealth, value: EVICT, effect: NoExecute}
`);
    assert.deepEqual(c.autopilot.resourceTaints, {
      'nvidia.com/gpu': nvidia,
      'amd.com/gpu': [{ key: 'autopilot.ibm.com/gpuhealth', value: 'EVICT', effect: 'NoExecute' }],
    });
    // The rest of the autopilot section keeps its defaults too.
    assert.equal(c.autopilot.injectAntiAffinities, true);
    assert.equal(c.autopilot.monitorNodes, true);
    assert.equal(c.autopilot.preferNoScheduleWeight, 50);
  });

  test('each section merges field by field: one fault-tolerance value leaves the others', () => {
    const c = read('appwrapper: {faultTolerance: {resetPause: 5s}}');
    assert.deepEqual(c.faultTolerance, { ...resolveConfig().faultTolerance, retryPausePeriodMs: 5000 });
    assert.deepEqual(c.autopilot, DEFAULT_AUTOPILOT);
    assert.equal(c.userRBACAdmissionCheck, true);
  });

  test('null: a scalar keeps its default; a map, list or pointer is emptied', () => {
    const c = read(`
appwrapper:
  userRBACAdmissionCheck: null
  defaultQueueName: null
  faultTolerance: {retryLimit: null, warmupGracePeriod: null}
  autopilot:
    monitorNodes: null
    preferNoScheduleWeight: null
    resourceTaints: {nvidia.com/gpu: null}
`);
    assert.equal(c.userRBACAdmissionCheck, true);
    assert.equal(c.defaultQueueName, '');
    assert.equal(c.faultTolerance.retryLimit, 3);
    assert.equal(c.faultTolerance.warmupGracePeriodMs, 300_000);
    assert.equal(c.autopilot.monitorNodes, true);
    // ptr.Deref(PreferNoScheduleWeight, 1) in upstream's resource_management.go.
    assert.equal(c.autopilot.preferNoScheduleWeight, 1);
    assert.deepEqual(c.autopilot.resourceTaints, { 'nvidia.com/gpu': [] });
    assert.deepEqual(read('appwrapper: {autopilot: {resourceTaints: null}}').autopilot.resourceTaints, {});
    // A nil Autopilot: upstream neither injects nor monitors (its `Autopilot != nil` checks).
    const off = read('appwrapper: {autopilot: null}').autopilot;
    assert.equal(off.injectAntiAffinities, false);
    assert.equal(off.monitorNodes, false);
  });

  test('field names match case-insensitively, as encoding/json matches them; of two, the later wins', () => {
    const c = read(`
appwrapper:
  DefaultQueueName: first
  defaultqueuename: team-queue
  FaultTolerance: {RetryLimit: 2}
  AutoPilot: {MonitorNodes: false}
`);
    assert.equal(c.defaultQueueName, 'team-queue');
    assert.equal(c.faultTolerance.retryLimit, 2);
    assert.equal(c.autopilot.monitorNodes, false);
    assert.throws(() => read('appwrapper: {SlackQueueName: q}'), /appwrapper\.SlackQueueName was removed/);
  });

  test('a taint value that is not a string is refused, naming it', () => {
    assert.throws(
      () =>
        read(
          'appwrapper: {autopilot: {resourceTaints: {amd.com/gpu: [{key: k, value: 3, effect: NoExecute}]}}}',
        ),
      /appwrapper\.autopilot\.resourceTaints\.amd\.com\/gpu\[0\]\.value: expected a string, got 3/,
    );
  });
});
