import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  type Client,
  FencedError,
  kubeConfigFromString,
  type LeaderElectionOptions,
  LeaderElector,
  type Lease,
  RestClient,
  Client as RuntimeClient,
} from '../../src/runtime/index.ts';
import { waitFor } from '../support/wait.ts';
import { createNamespace, startCluster, type TestCluster } from './cluster.ts';
import { PartitionableProxy } from './proxy.ts';

const LEASE = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease' };
// Short, but in the same proportions as the 15 s / 10 s / 2 s defaults.
const FAST = { leaseDurationMs: 1500, renewDeadlineMs: 1000, retryPeriodMs: 200 };

interface Candidate {
  elector: LeaderElector;
  started: number[];
  stopped: number[];
}

function candidate(client: Client, opts: Omit<LeaderElectionOptions, 'name'> & { name?: string }): Candidate {
  const c: Candidate = { elector: undefined as unknown as LeaderElector, started: [], stopped: [] };
  c.elector = new LeaderElector(client, {
    name: 'troupe-test',
    ...FAST,
    ...opts,
    onStartedLeading: () => {
      c.started.push(performance.now());
      opts.onStartedLeading?.();
    },
    onStoppedLeading: () => {
      c.stopped.push(performance.now());
      opts.onStoppedLeading?.();
    },
  });
  return c;
}

describe('LeaderElector against the embedded API server', () => {
  let cluster: TestCluster;
  let client: Client;

  before(async () => {
    cluster = await startCluster();
    client = cluster.client;
  });
  after(() => cluster.close());

  test('uses client-go defaults of 15 s / 10 s / 2 s', () => {
    const e = new LeaderElector(client, { name: 'x', namespace: 'default' });
    assert.deepEqual([e.leaseDurationMs, e.renewDeadlineMs, e.retryPeriodMs], [15_000, 10_000, 2_000]);
    assert.throws(
      () =>
        new LeaderElector(client, {
          name: 'x',
          namespace: 'default',
          leaseDurationMs: 5000,
          renewDeadlineMs: 5000,
        }),
      /leaseDuration must be greater/,
    );
  });

  test('exactly one candidate leads; on release another takes over', async () => {
    const ns = await createNamespace(client);
    const cands = [0, 1, 2].map((i) => candidate(client, { namespace: ns, identity: `c${i}` }));
    const runs = cands.map((c) => c.elector.run());
    const leader = await waitFor(() => cands.find((c) => c.elector.isLeader));
    assert.equal(cands.filter((c) => c.elector.isLeader).length, 1);
    // Leadership is stable while the leader renews.
    await waitFor(() => {
      const lease = cands[0]!.elector; // any candidate observes the holder
      return lease.leader === leader.elector.identity;
    });
    const lease = await client.get<Lease>(LEASE, 'troupe-test', ns);
    assert.equal(lease.spec?.holderIdentity, leader.elector.identity);
    assert.equal(lease.spec?.leaseDurationSeconds, 2);
    const transitions = lease.spec?.leaseTransitions ?? 0;

    await leader.elector.stop();
    assert.equal(leader.elector.isLeader, false);
    assert.equal(leader.stopped.length, 1);
    const next = await waitFor(() => cands.find((c) => c !== leader && c.elector.isLeader));
    assert.ok(next.started[0]! > leader.stopped[0]!, 'the successor starts after the leader stopped');
    assert.equal(cands.filter((c) => c.elector.isLeader).length, 1);
    const after = await client.get<Lease>(LEASE, 'troupe-test', ns);
    assert.equal(after.spec?.holderIdentity, next.elector.identity);
    assert.equal(after.spec?.leaseTransitions, transitions + 1);
    await Promise.all(cands.map((c) => c.elector.stop()));
    await Promise.all(runs);
    const released = await client.get<Lease>(LEASE, 'troupe-test', ns);
    assert.equal(released.spec?.holderIdentity ?? '', '', 'the last leader released the lease');
  });

  test('a leader that vanishes without releasing is replaced once the lease expires', async () => {
    const ns = await createNamespace(client);
    const a = candidate(client, { namespace: ns, identity: 'a', releaseOnCancel: false });
    void a.elector.run();
    await waitFor(() => a.elector.isLeader);
    const b = candidate(client, { namespace: ns, identity: 'b' });
    void b.elector.run();
    await waitFor(() => b.elector.leader === 'a');
    assert.equal(b.elector.isLeader, false, 'b waits while a renews');
    await a.elector.stop(); // a dies: stops renewing, leaves the lease as it is
    assert.equal((await client.get<Lease>(LEASE, 'troupe-test', ns)).spec?.holderIdentity, 'a');
    await waitFor(() => b.elector.isLeader);
    assert.ok(b.started[0]! > a.stopped[0]!);
    await b.elector.stop();
  });

  test('a partitioned leader stops acting before anyone else can take the lease', async () => {
    const ns = await createNamespace(client);
    const proxy = new PartitionableProxy();
    const proxyUrl = await proxy.start(cluster.server.url);
    const partitionedClient = new RuntimeClient(
      new RestClient(kubeConfigFromString(cluster.server.kubeconfig.replace(cluster.server.url, proxyUrl)), {
        maxRetries: 0,
      }),
    );
    try {
      const a = candidate(partitionedClient, { namespace: ns, identity: 'a' });
      void a.elector.run();
      await waitFor(() => a.elector.isLeader);
      let aWasLeaderWhenBStarted: boolean | undefined;
      const b = candidate(client, {
        namespace: ns,
        identity: 'b',
        onStartedLeading: () => {
          aWasLeaderWhenBStarted = a.elector.isLeader;
        },
      });
      void b.elector.run();
      await waitFor(() => b.elector.leader === 'a');
      proxy.partition();
      await waitFor(() => b.elector.isLeader, { timeoutMs: 20_000 });
      assert.equal(a.stopped.length, 1, 'a noticed it lost leadership');
      assert.ok(a.stopped[0]! < b.started[0]!, 'a stopped before b started');
      assert.equal(aWasLeaderWhenBStarted, false);
      assert.throws(() => a.elector.assertLeader(), FencedError);
      await Promise.all([a.elector.stop(), b.elector.stop()]);
    } finally {
      await partitionedClient.rest.close();
      await proxy.close();
    }
  });
});
