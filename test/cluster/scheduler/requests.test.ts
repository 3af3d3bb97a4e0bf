import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  computePodRequests,
  DEFAULT_MEMORY_REQUEST,
  quantityMilliValue,
  quantityValue,
} from '../../../src/cluster/scheduler/core/index.ts';
import type { Pod } from '../../../src/kube/builtin.ts';
import { pod } from '../../support/objects.ts';

describe('quantities', () => {
  test('decimal, binary and exponent suffixes', () => {
    assert.equal(quantityMilliValue('100m'), 100);
    assert.equal(quantityMilliValue('0.1'), 100);
    assert.equal(quantityMilliValue('1.5'), 1500);
    assert.equal(quantityMilliValue('1k'), 1_000_000);
    assert.equal(quantityMilliValue(2), 2000);
    assert.equal(quantityValue('1Gi'), 1024 ** 3);
    assert.equal(quantityValue('512Mi'), 512 * 1024 ** 2);
    assert.equal(quantityValue('1Ti'), 1024 ** 4);
    assert.equal(quantityValue('1e3'), 1000);
    assert.equal(quantityValue('1E'), 1e18);
    assert.equal(quantityValue('1M'), 1_000_000);
  });

  test('Value() rounds fractions up, as resource.Quantity does', () => {
    assert.equal(quantityValue('0.5'), 1);
    assert.equal(quantityValue('100m'), 1);
    assert.equal(quantityMilliValue('1u'), 1);
  });

  test('garbage is NaN, missing is zero', () => {
    assert.ok(Number.isNaN(quantityValue('lots')));
    assert.ok(Number.isNaN(quantityValue('1Gb')));
    assert.equal(quantityValue(undefined), 0);
  });
});

describe('effective pod requests', () => {
  test('sums app containers and takes limits for missing requests', () => {
    const r = computePodRequests(
      pod<Pod>('p', {
        spec: {
          containers: [
            { resources: { requests: { cpu: '250m', memory: '64Mi' } } },
            { resources: { limits: { cpu: '1', 'nvidia.com/gpu': '2' } } },
          ],
        },
      }),
    );
    assert.equal(r.requests.milliCPU, 1250);
    assert.equal(r.requests.memory, 64 * 1024 ** 2);
    assert.equal(r.requests.scalar?.get('nvidia.com/gpu'), 2);
  });

  test('an init container larger than the app containers sets the request', () => {
    const r = computePodRequests(
      pod<Pod>('p', {
        spec: {
          initContainers: [{ resources: { requests: { cpu: '2' } } }],
          containers: [{ resources: { requests: { cpu: '500m' } } }],
        },
      }),
    );
    assert.equal(r.requests.milliCPU, 2000);
  });

  test('sidecars add to later init steps and to the app containers', () => {
    const r = computePodRequests(
      pod<Pod>('p', {
        spec: {
          initContainers: [
            { restartPolicy: 'Always', resources: { requests: { cpu: '300m' } } },
            { resources: { requests: { cpu: '1' } } },
          ],
          containers: [{ resources: { requests: { cpu: '500m' } } }],
        },
      }),
    );
    // init step: 300m sidecar + 1 = 1300m; running: 500m + 300m = 800m.
    assert.equal(r.requests.milliCPU, 1300);
  });

  test('overhead is added on top', () => {
    const r = computePodRequests(
      pod<Pod>('p', {
        spec: {
          overhead: { cpu: '100m', memory: '10Mi' },
          containers: [{ resources: { requests: { cpu: '1' } } }],
        },
      }),
    );
    assert.equal(r.requests.milliCPU, 1100);
    assert.equal(r.requests.memory, 10 * 1024 ** 2);
  });

  test('non-zero requests default each container to 100m and 200Mi for scoring only', () => {
    const r = computePodRequests(
      pod<Pod>('p', { spec: { containers: [{}, { resources: { requests: { cpu: '1' } } }] } }),
    );
    assert.equal(r.requests.milliCPU, 1000);
    assert.equal(r.requests.memory, 0);
    assert.equal(r.nonZeroMilliCPU, 1100);
    assert.equal(r.nonZeroMemory, 2 * DEFAULT_MEMORY_REQUEST);
  });
});
