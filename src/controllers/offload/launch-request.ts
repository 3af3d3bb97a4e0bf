/**
 * The shell around `buildLaunchRequest`: reads the Secrets and ConfigMaps the Job's
 * container references (each once) and builds what the provider launches, with a fresh
 * exit marker. The result carries Secret values: it is handed to the provider, never logged.
 */
import { randomBytes } from 'node:crypto';
import type { KubeObject } from '../../runtime/index.ts';
import type { OffloadContext } from './context.ts';
import { readJobConfig } from './core.ts';
import type { Job } from './types.ts';
import { type BuildResult, buildLaunchRequest, type ReferencedData, referencedObjects } from './workload.ts';

const SECRET = { apiVersion: 'v1', kind: 'Secret' };
const CONFIGMAP = { apiVersion: 'v1', kind: 'ConfigMap' };

async function readRefs(c: OffloadContext, job: Job): Promise<ReferencedData> {
  const refs: ReferencedData = { secrets: {}, configMaps: {} };
  const wanted = referencedObjects(job);
  for (const name of wanted.secrets) {
    const s = await c.client.tryGet<KubeObject & { data?: Record<string, string> }>(
      SECRET,
      name,
      job.metadata.namespace,
      { signal: c.signal },
    );
    refs.secrets[name] = s
      ? Object.fromEntries(
          Object.entries(s.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]),
        )
      : undefined;
  }
  for (const name of wanted.configMaps) {
    const cm = await c.client.tryGet<KubeObject & { data?: Record<string, string> }>(
      CONFIGMAP,
      name,
      job.metadata.namespace,
      { signal: c.signal },
    );
    refs.configMaps[name] = cm ? { ...(cm.data ?? {}) } : undefined;
  }
  return refs;
}

export async function buildRequest(c: OffloadContext, job: Job): Promise<BuildResult> {
  const refs = await readRefs(c, job);
  return buildLaunchRequest(job, readJobConfig(job), refs, {
    clusterName: c.opts.clusterName,
    marker: `troupe-exit-${randomBytes(9).toString('hex')}`,
    defaultDiskGb: c.opts.defaultDiskGb,
    defaultCloud: c.opts.cloud,
  });
}
