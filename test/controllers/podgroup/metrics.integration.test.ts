/**
 * The podgroup controller's metrics, scraped from the manager's /metrics over HTTP while
 * the controller runs against the bare embedded API server (the test plays scheduler and
 * kubelet by writing pod status).
 */

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type ApiServerHandle, startApiServer } from '../../../src/cluster/apiserver/server.ts';
import {
  GROUP_LABEL,
  PODGROUP_KIND,
  type PodGroup,
  podGroupControllers,
} from '../../../src/controllers/podgroup/index.ts';
import { Client, type KubeObject, kubeConfigFromString, Manager } from '../../../src/runtime/index.ts';
import { scrapeUntil } from '../../runtime/scrape.ts';
import { waitFor } from '../../support/wait.ts';
import { createNamespace, installPodGroupCrd, POD, waitForPhase } from './harness.ts';

const PHASES = ['Pending', 'Running', 'Recovering', 'Unschedulable', 'Completed', 'Unknown'];

function member(ns: string, name: string, node?: string): KubeObject {
  return {
    ...POD,
    metadata: {
      name,
      namespace: ns,
      labels: { [GROUP_LABEL]: 'gang' },
      // The deadlock policy restarts only members a controller will recreate.
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'StatefulSet',
          name: 'gang',
          uid: '00000000-0000-0000-0000-000000000001',
          controller: true,
        },
      ],
    },
    spec: { ...(node ? { nodeName: node } : {}), containers: [{ name: 'worker', image: 'fake-image' }] },
  };
}

describe('podgroup metrics', () => {
  let server: ApiServerHandle;
  let client: Client;
  let manager: Manager;

  before(async () => {
    server = await startApiServer();
    client = Client.fromKubeConfig(kubeConfigFromString(server.kubeconfig));
    await installPodGroupCrd(client);
    manager = new Manager({
      kubeConfig: kubeConfigFromString(server.kubeconfig),
      healthProbeAddress: '127.0.0.1:0',
      processMetrics: false,
    });
    for (const c of podGroupControllers()) manager.add(c);
    await manager.start();
  });
  after(async () => {
    await manager?.stop();
    await client?.rest.close();
    await server?.close();
  });

  const setStatus = (ns: string, name: string, status: Record<string, unknown>) =>
    client.patchStatus({ ...POD, metadata: { name, namespace: ns } }, { status });
  const createGroup = (ns: string, spec: PodGroup['spec']) =>
    client.create({ ...PODGROUP_KIND, metadata: { name: 'gang', namespace: ns }, spec });

  test('groups by phase, ready labels, phase transitions and deadlock restarts', async () => {
    const ns = await createNamespace(client, 'pgm');
    await createGroup(ns, { minMember: 2 });
    await waitForPhase(client, ns, 'gang', 'Pending');
    for (const name of ['a', 'b']) {
      await client.create(member(ns, name, 'node-a'));
      await setStatus(ns, name, { phase: 'Running' });
    }
    await waitForPhase(client, ns, 'gang', 'Running');
    let s = await scrapeUntil(
      manager,
      'a running gang with both members labelled',
      (s) =>
        s.value('troupe_podgroup_groups', { phase: 'Running' }) === 1 &&
        s.value('troupe_podgroup_ready_labels_total') === 2,
    );
    for (const phase of PHASES.filter((p) => p !== 'Running'))
      assert.equal(s.value('troupe_podgroup_groups', { phase }), 0, phase);
    assert.equal(s.value('troupe_podgroup_phase_transitions_total', { from: 'None', to: 'Pending' }), 1);
    assert.equal(s.value('troupe_podgroup_phase_transitions_total', { from: 'Pending', to: 'Running' }), 1);
    assert.equal(s.value('troupe_podgroup_deadlock_restarts_total'), 0);

    await client.delete({ ...POD, metadata: { name: 'b', namespace: ns } });
    await waitForPhase(client, ns, 'gang', 'Recovering', 'PodDeleted');
    s = await scrapeUntil(manager, 'the gang recovering', (s) => {
      return s.value('troupe_podgroup_groups', { phase: 'Recovering' }) === 1;
    });
    assert.equal(s.value('troupe_podgroup_groups', { phase: 'Running' }), 0);
    assert.equal(
      s.value('troupe_podgroup_phase_transitions_total', { from: 'Running', to: 'Recovering' }),
      1,
    );

    // A second gang, stuck half placed, restarted by its deadlock policy.
    const stuck = await createNamespace(client, 'pgm');
    await createGroup(stuck, { minMember: 2, deadlockPolicy: { action: 'Restart', timeoutSeconds: 1 } });
    await client.create(member(stuck, 'a', 'node-a'));
    await setStatus(stuck, 'a', { phase: 'Running' });
    await client.create(member(stuck, 'b'));
    await setStatus(stuck, 'b', {
      phase: 'Pending',
      conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: 'no GPU' }],
    });
    await waitFor('the restart to be recorded', async () => {
      const pg = await client.tryGet<PodGroup>(PODGROUP_KIND, 'gang', stuck);
      return pg?.status?.restarts === 1;
    });
    s = await scrapeUntil(manager, 'the restart counted', (s) => {
      return s.value('troupe_podgroup_deadlock_restarts_total') === 1;
    });
    assert.equal(
      PHASES.reduce((sum, phase) => sum + (s.value('troupe_podgroup_groups', { phase }) ?? 0), 0),
      2,
    );
    assert.equal(s.value('troupe_podgroup_ready_labels_total'), 2);
  });
});
