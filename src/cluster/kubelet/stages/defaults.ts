/**
 * troupe's default stages, KWOK-equivalent: node-initialize, node-heartbeat-with-lease,
 * pod-ready, pod-complete (Job pods), pod-remove-finalizer, pod-delete. They live as YAML data
 * files next to this module so users can read, copy and override them as ordinary Stage objects.
 */

import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import type { Stage } from './types.ts';

export const DEFAULT_STAGE_NAMES = [
  'node-initialize',
  'node-heartbeat-with-lease',
  'pod-ready',
  'pod-complete',
  'pod-remove-finalizer',
  'pod-delete',
] as const;

/** Parses every Stage document in a YAML text (multi-document files allowed). */
export function parseStagesYAML(text: string): Stage[] {
  const out: Stage[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length > 0) throw new Error(doc.errors.map((e) => e.message).join('; '));
    const v = doc.toJS() as Stage | null;
    if (v && v.kind === 'Stage') out.push(v);
  }
  return out;
}

export function loadDefaultStages(): Stage[] {
  return DEFAULT_STAGE_NAMES.flatMap((name) =>
    parseStagesYAML(readFileSync(new URL(`./defaults/${name}.yaml`, import.meta.url), 'utf8')),
  );
}
