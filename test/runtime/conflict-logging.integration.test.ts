/**
 * A reconcile whose version-guarded write loses a race (409 Conflict from the API server)
 * is retried and logged at debug level, without a stack; errors stay for what a person must
 * act on, and a conflict that keeps coming back is one of those.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { ItemExponentialRateLimiter } from '../../src/lib/ratelimiter.ts';
import { createLogger, type KubeObject, Manager } from '../../src/runtime/index.ts';
import { waitFor } from '../support/wait.ts';
import { createNamespace, startCluster } from './cluster.ts';

const CONFIGMAP = { apiVersion: 'v1', kind: 'ConfigMap' };

interface LogLine {
  level: number;
  msg: string;
  err?: unknown;
  controller?: string;
}

/** A debug-level JSON logger whose lines land in `lines`. */
function capturingLogger() {
  const lines: LogLine[] = [];
  const destination = new Writable({
    write(chunk, _enc, cb) {
      for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l) as LogLine);
      cb();
    },
  });
  return { lines, log: createLogger({ level: 'debug', destination }) };
}

/**
 * A controller that writes each ConfigMap with a stale resourceVersion for its first
 * `conflicts` reconciles (a real 409 from the API server), then with the current one.
 */
async function runConflicting(conflicts: number) {
  const cluster = await startCluster();
  const ns = await createNamespace(cluster.client);
  const { lines, log } = capturingLogger();
  let attempts = 0;
  const manager = new Manager({
    kubeConfig: cluster.newKubeConfig(),
    healthProbeAddress: false,
    processMetrics: false,
    logger: log,
  });
  manager.add({
    name: 'stamp',
    for: CONFIGMAP,
    // Retries after 1 ms: the test is about the log, not the backoff.
    rateLimiter: () => new ItemExponentialRateLimiter<string>(1, 1),
    async reconcile(_key, ctx) {
      if (ctx.namespace !== ns) return;
      const cm = await ctx.client.get<KubeObject>(CONFIGMAP, ctx.name, ctx.namespace);
      if ((cm.data as Record<string, string> | undefined)?.stamped) return;
      attempts++;
      const stale = attempts <= conflicts ? { resourceVersion: '1' } : {};
      await ctx.client.update({
        ...cm,
        metadata: { ...cm.metadata, ...stale },
        data: { stamped: 'yes' },
      });
    },
  });
  await manager.start();
  await cluster.client.create({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'c', namespace: ns },
  });
  await waitFor('the ConfigMap to be stamped', async () => {
    const cm = await cluster.client.get<KubeObject>(CONFIGMAP, 'c', ns);
    return (cm.data as Record<string, string> | undefined)?.stamped === 'yes';
  });
  await manager.stop();
  await cluster.close();
  return { lines, attempts };
}

test('a conflict that a retry resolves is logged at debug, without a stack', async () => {
  const { lines, attempts } = await runConflicting(2);
  assert.equal(attempts, 3);
  const conflicts = lines.filter(
    (l) => l.msg === 'reconcile hit a write conflict; retrying with the latest object',
  );
  assert.equal(conflicts.length, 2);
  for (const l of conflicts) {
    assert.equal(l.level, 20);
    assert.equal(l.err, undefined);
  }
  assert.deepEqual(
    lines.filter((l) => l.level >= 50),
    [],
  );
});

test('a conflict that keeps coming back is an error again', async () => {
  const { lines } = await runConflicting(7);
  const errors = lines.filter((l) => l.level === 50 && l.msg === 'reconcile failed; retrying with backoff');
  // Retries 5 and 6 of the seven conflicting writes.
  assert.equal(errors.length, 2);
});
