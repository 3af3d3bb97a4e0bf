/** `troupe simulate --record FILE`: a trace of a live cluster, written as a scenario file. */
import { writeFile } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { stringify } from 'yaml';
import { parseGoDuration } from '../kube/duration.ts';
import { loadKubeConfig } from '../runtime/index.ts';
import { recordCluster } from '../simulate/record.ts';
import { untilSignal } from './options.ts';

export async function recordTrace(
  file: string,
  flags: { kubeconfig?: string; duration?: string; namespace?: string; quiet?: boolean },
): Promise<void> {
  let durationMs: number | undefined;
  if (flags.duration !== undefined) {
    durationMs = parseGoDuration(flags.duration);
    if (durationMs === undefined || durationMs <= 0)
      throw new Error(`--duration "${flags.duration}": not a positive duration (use e.g. 30s, 10m or 2h)`);
  }
  const { kubeConfig } = loadKubeConfig({ kubeconfig: flags.kubeconfig });
  const stop = new AbortController();
  void untilSignal().then(() => stop.abort());
  const timer = durationMs === undefined ? undefined : setTimeout(() => stop.abort(), durationMs);
  const rec = await recordCluster(kubeConfig, {
    namespace: flags.namespace,
    signal: stop.signal,
    onWatching: () => {
      if (!flags.quiet)
        process.stderr.write(
          `recording pods and nodes${flags.namespace ? ` of namespace ${flags.namespace}` : ''} ${
            durationMs === undefined ? 'until Ctrl+C' : `for ${flags.duration}`
          }\n`,
        );
    },
  }).finally(() => clearTimeout(timer));
  const name =
    basename(file, extname(file))
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 63) || 'recorded';
  const doc = rec.scenario(name, Date.now());
  await writeFile(
    file,
    `# A trace recorded by troupe simulate --record; replay it with: troupe simulate ${file}\n${stringify(doc)}`,
  );
  if (!flags.quiet) process.stderr.write(`wrote ${file}: ${(doc.workload as unknown[]).length} gangs\n`);
}
