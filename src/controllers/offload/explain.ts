/**
 * `troupe explain job/<name>`: burst offloading's decision for a Job, from what the offload
 * controller writes on it (src/controllers/offload/keys.ts): whether troupe may offload it,
 * why it did or did not, where it runs (GPU, price, remote pod) and what it has cost so far.
 */
import type { JobStatus } from '../../kube/builtin.ts';
import { realClock } from '../../lib/clock.ts';
import type { KubeObject } from '../../runtime/index.ts';
import type { CapabilityExplain } from '../capability.ts';
import * as OFFLOAD from './keys.ts';

function jobPhase(st: JobStatus): string {
  const done = st.conditions?.find(
    (c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True',
  );
  if (done) return done.type === 'Complete' ? 'Complete' : `Failed${done.reason ? ` (${done.reason})` : ''}`;
  if (st.active) return `${st.active} active`;
  return 'Pending';
}

/** The USD a remote pod at `perHour` has cost from `since` until `until` (epoch ms). */
function spend(perHour: number, since: number, until: number): string {
  const hours = Math.max(0, until - since) / 3_600_000;
  return `${(perHour * hours).toFixed(4)} USD over ${(hours * 60).toFixed(1)} min`;
}

/**
 * `virtualPod` is the Job's stand-in pod (`<job>-runpod`) while it exists: it carries the
 * remote container's status and first start.
 */
export function explainJob(job: KubeObject, virtualPod?: KubeObject, now = realClock.now()): string {
  const a = job.metadata.annotations ?? {};
  const labels = job.metadata.labels ?? {};
  const st = (job.status ?? {}) as JobStatus;
  const lines = [`Job ${job.metadata.namespace}/${job.metadata.name}: ${jobPhase(st)}`];
  const managed = a[OFFLOAD.MANAGED] === 'true' || labels[OFFLOAD.MANAGED] === 'true';
  if (!managed) {
    lines.push(
      `  Offload: not managed: troupe offloads only Jobs annotated ${OFFLOAD.MANAGED}: "true" (and asking for a GPU)`,
    );
    return lines.join('\n');
  }
  if (a[OFFLOAD.OFFLOADED] === 'true') {
    lines.push(
      `  Offload: offloaded${a[OFFLOAD.REASON] ? ` (${a[OFFLOAD.REASON]})` : ''}${a[OFFLOAD.PROVIDER] ? ` to ${a[OFFLOAD.PROVIDER]}` : ''}${a[OFFLOAD.STATE] ? `, ${a[OFFLOAD.STATE]}` : ''}`,
    );
    const gpu = a[OFFLOAD.GPU_TYPE];
    const price = a[OFFLOAD.COST_PER_HR];
    if (gpu || price) lines.push(`  GPU: ${gpu ?? '?'}${price ? ` at ${price} USD/h` : ''}`);
    const v = virtualPod?.metadata.annotations ?? {};
    const remoteStatus = v[OFFLOAD.REMOTE_STATUS];
    if (a[OFFLOAD.POD_ID])
      lines.push(
        `  Remote pod: ${a[OFFLOAD.POD_ID]}${remoteStatus ? `, last seen ${remoteStatus}` : ''}${a[OFFLOAD.REMOTE_TERMINATED] ? ', terminated' : ''}`,
      );
    // From the remote container's first start; once the stand-in is gone, the Job's own run.
    const started = v[OFFLOAD.REMOTE_STARTED_AT]
      ? Number(v[OFFLOAD.REMOTE_STARTED_AT])
      : Date.parse(st.startTime ?? '');
    if (price && Number.isFinite(started)) {
      const failedAt = st.conditions?.find(
        (c) => c.type === 'Failed' && c.status === 'True',
      )?.lastTransitionTime;
      const end = st.completionTime ? Date.parse(st.completionTime) : failedAt ? Date.parse(failedAt) : now;
      lines.push(
        `  Spend so far: ${spend(Number(price), started, end)}${v[OFFLOAD.REMOTE_STARTED_AT] ? '' : " (from the Job's start)"}`,
      );
    }
    if (a[OFFLOAD.EXIT_CODE])
      lines.push(`  Exit code: ${a[OFFLOAD.EXIT_CODE]}${a[OFFLOAD.EXIT_CODE_ASSUMED] ? ' (assumed)' : ''}`);
    return lines.join('\n');
  }
  if (a[OFFLOAD.ERROR]) {
    lines.push(
      `  Offload: not offloaded: ${a[OFFLOAD.ERROR]}${a[OFFLOAD.ERROR_CLASS] ? ` (${a[OFFLOAD.ERROR_CLASS]})` : ''}${a[OFFLOAD.RETRY_AT] ? `; retried at ${a[OFFLOAD.RETRY_AT]}` : ''}`,
    );
    return lines.join('\n');
  }
  lines.push(
    `  Offload: managed, runs locally for now${a[OFFLOAD.STATE] ? ` (${a[OFFLOAD.STATE]})` : ''}: troupe offloads it when annotated ${OFFLOAD.OFFLOAD}: "true", when more managed Jobs than --pending-job-threshold are pending, or once it has been pending longer than --max-pending-time`,
  );
  return lines.join('\n');
}

const JOB = { apiVersion: 'batch/v1', kind: 'Job' };
const POD = { apiVersion: 'v1', kind: 'Pod' };

/** `troupe explain job/<name>`, and the offload line of `troupe explain pod/<name>`. */
export const offloadExplain: CapabilityExplain = {
  kinds: [
    {
      kind: JOB,
      names: ['job', 'jobs'],
      usage: 'job',
      explain: async (r, job) => {
        const { name, namespace } = job.metadata;
        const stand = await r.list(POD, namespace, `${OFFLOAD.JOB_NAME_LABEL}=${name}`);
        return explainJob(
          job,
          stand?.find((p) => p.metadata.annotations?.[OFFLOAD.EXTERNAL] === 'true'),
        );
      },
    },
  ],
  pod: {
    lines: async (_r, pod) => {
      const a = pod.metadata.annotations ?? {};
      const remote = a[OFFLOAD.POD_ID];
      if (!remote) return [];
      return [
        `Offloaded: remote pod ${remote}${a[OFFLOAD.REMOTE_STATUS] ? `, ${a[OFFLOAD.REMOTE_STATUS]}` : ''}`,
      ];
    },
  },
};
