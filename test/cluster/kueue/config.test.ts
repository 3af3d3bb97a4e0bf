/** Kueue's Configuration file (`--kueue-config`): what the stand-in reads, and the errors of a bad file. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseKueueConfiguration } from '../../../src/cluster/kueue/config.ts';

const head = 'apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n';

describe('Kueue Configuration file', () => {
  test('the waitForPodsReady section as written; null backoffLimitCount is no limit', () => {
    const cfg = parseKueueConfiguration(
      `${head}waitForPodsReady:\n  timeout: 2m\n  blockAdmission: true\n  recoveryTimeout: 0s\n  requeuingStrategy:\n    timestamp: Creation\n    backoffLimitCount: null\n    backoffBaseSeconds: 5\n    backoffMaxSeconds: 60\nintegrations:\n  frameworks: [batch/job]\n`,
    );
    assert.deepEqual(cfg, {
      waitForPodsReady: {
        timeout: '2m',
        blockAdmission: true,
        recoveryTimeout: '0s',
        requeuingStrategy: { timestamp: 'Creation', backoffBaseSeconds: 5, backoffMaxSeconds: 60 },
      },
    });
  });

  test("v0.19: a Configuration without the section has waitForPodsReady on (Kueue's defaults); the feature gate turns it off", () => {
    assert.deepEqual(parseKueueConfiguration(head), { waitForPodsReady: {} });
    assert.deepEqual(
      parseKueueConfiguration(
        `${head}featureGates: {DisableWaitForPodsReady: true}\nwaitForPodsReady: {timeout: 1m}\n`,
      ),
      {},
    );
  });

  test("Kueue's kueue-manager-config ConfigMap is read as the file it holds", () => {
    const cm = `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kueue-manager-config}\ndata:\n  controller_manager_config.yaml: |\n    apiVersion: config.kueue.x-k8s.io/v1beta2\n    kind: Configuration\n    waitForPodsReady: {timeout: 90s}\n`;
    assert.deepEqual(parseKueueConfiguration(cm), { waitForPodsReady: { timeout: '90s' } });
  });

  test('a bad file is refused with the field and the fix', () => {
    const bad = (text: string, re: RegExp) => assert.throws(() => parseKueueConfiguration(text), re);
    bad(
      `${head}waitForPodsReady: {enable: true}\n`,
      /unknown field "waitForPodsReady\.enable" \(v1beta2 has no enable: the section turns waitForPodsReady on; featureGates: \{DisableWaitForPodsReady: true\} turns it off\)/,
    );
    bad(
      'apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n',
      /apiVersion: "config\.kueue\.x-k8s\.io\/v1beta1" is not read; write apiVersion: config\.kueue\.x-k8s\.io\/v1beta2, kind: Configuration/,
    );
    bad(
      `${head}waitForPodsReady: {timeout: 5 minutes}\n`,
      /waitForPodsReady\.timeout: invalid duration "5 minutes" \(use a Go duration such as 5m or 90s\)/,
    );
    bad(`${head}waitForPodsReady: {timeout: -1m}\n`, /waitForPodsReady\.timeout: invalid duration "-1m"/);
    bad(
      `${head}waitForPodsReady:\n  requeuingStrategy: {timestamp: Admission, backoffBaseSeconds: -1}\n`,
      /waitForPodsReady\.requeuingStrategy\.timestamp: must be one of "Eviction", "Creation"; waitForPodsReady\.requeuingStrategy\.backoffBaseSeconds: must be greater than or equal to 0/,
    );
    bad(`${head}waitForPodsReady: {timout: 1m}\n`, /unknown field "waitForPodsReady\.timout"/);
    bad('kind: Configuration\n', /apiVersion: required/);
    bad(`${head}waitForPodsReady: [\n`, /^Error: not valid YAML/);
    // Inside Kueue's ConfigMap: the data key named, not taken for an unreadable file.
    bad(
      'kind: ConfigMap\ndata:\n  controller_manager_config.yaml: "waitForPodsReady: ["\n',
      /^Error: the ConfigMap's data\.controller_manager_config\.yaml: not valid YAML/,
    );
    bad('- a\n', /expected a mapping: apiVersion: config\.kueue\.x-k8s\.io\/v1beta2, kind: Configuration/);
  });
});
