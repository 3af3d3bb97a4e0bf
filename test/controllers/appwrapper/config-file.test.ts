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
      ['kind: ConfigMap\ndata: {a: "x", b: "y"}', /must hold exactly one data key/],
    ];
    for (const [yaml, re] of cases) assert.throws(() => configFromOperatorFile(parse(yaml)), re, yaml);
    assert.throws(
      () => read('appwrapper: {faultTolerance: {admissionGracePeriod: 10m}}'),
      /admissionGracePeriod 10m0s exceeds warmupGracePeriod 5m0s/,
    );
  });
});
