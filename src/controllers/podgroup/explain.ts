/** `troupe explain podgroup/<name>`, and the PodGroup line of `troupe explain pod/<name>`. */

import {
  PODGROUP_KIND,
  type PodGroup,
  type PodObject,
} from '../../apis/scheduling.incubator.k8s.io/v1alpha1.ts';
import { podProgress } from '../../kube/pod.ts';
import { type CapabilityExplain, conditionLines } from '../capability.ts';
import { xPodGroupExplainKind, xPodGroupLines } from './explain-x.ts';
import { claimOf } from './membership.ts';

const POD = { apiVersion: 'v1', kind: 'Pod' };

export const podGroupExplain: CapabilityExplain = {
  kinds: [
    {
      kind: PODGROUP_KIND,
      names: ['podgroup', 'podgroups', 'pg'],
      usage: 'podgroup (pg)',
      explain: async (r, obj) => {
        const pg = obj as PodGroup;
        const name = pg.metadata.name ?? '';
        const namespace = pg.metadata.namespace ?? 'default';
        const p = r.paint;
        const st = pg.status ?? {};
        const phase = st.state?.phase ?? 'Pending';
        const min = pg.spec?.minMember ?? 1;
        const running = st.running ?? 0;
        const pods = ((await r.list<PodObject>(POD, namespace)) ?? []).filter(
          (pod) => claimOf(pod).group === name,
        );
        const lines = [
          p.bold(`PodGroup ${namespace}/${name}: ${phase}`) +
            (st.state?.reason ? ` (${st.state.reason})` : '') +
            (st.state?.message ? `: ${st.state.message}` : ''),
          `  needs ${min} member${min === 1 ? '' : 's'} running; ${running} running, ${st.succeeded ?? 0} succeeded, ${st.failed ?? 0} failed${st.restarts ? `, restarted ${st.restarts} time${st.restarts === 1 ? '' : 's'}` : ''}`,
        ];
        if (phase !== 'Running' && phase !== 'Completed' && running < min)
          lines.push(`  waiting for ${min - running} more running member${min - running === 1 ? '' : 's'}`);
        if (pg.spec?.queue) lines.push(`  queue ${pg.spec.queue}`);
        if ((st.conditions ?? []).length > 0)
          lines.push('  Conditions:', ...conditionLines(st.conditions, p));
        lines.push(`  Members (${pods.length}):`);
        if (pods.length === 0) lines.push('    none: no pod carries the group label or annotation yet');
        for (const pod of pods.sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '')))
          lines.push(`    ${pod.metadata.name}: ${podProgress(pod)}`);
        return lines.join('\n');
      },
    },
    xPodGroupExplainKind,
  ],
  pod: {
    lines: async (r, pod) => {
      const group = claimOf(pod as PodObject).group;
      if (!group) return xPodGroupLines(r, pod);
      const namespace = pod.metadata.namespace ?? 'default';
      const pg = await r.get<PodGroup>(PODGROUP_KIND, group, namespace).catch(() => undefined);
      return [
        pg
          ? `PodGroup ${namespace}/${group}: ${pg.status?.state?.phase ?? 'Pending'}, ${pg.status?.running ?? 0}/${pg.spec?.minMember ?? 1} running${pg.status?.state?.reason ? ` (${pg.status.state.reason})` : ''}${
              // Why the gang waits (a gang scheduler's verdict, say), unless it runs.
              pg.status?.state?.message && pg.status.state.phase !== 'Running'
                ? `: ${pg.status.state.message}`
                : ''
            }`
          : `PodGroup ${namespace}/${group}: named by the pod but not found`,
      ];
    },
  },
};
