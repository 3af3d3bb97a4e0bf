/**
 * A capability's `troupe status` sections reach the dashboard as tables, so a new capability
 * shows on the page without a section of its own; the page keeps its own sections for the
 * kinds it draws richer.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { capabilities } from '../../src/controllers/capabilities.ts';
import { type DashboardTable, JOB, POD, POD_GROUP, watchedKindOf } from '../../src/dashboard/kinds.ts';
import { buildSnapshot, kindId } from '../../src/dashboard/snapshot.ts';
import type { KubeObject } from '../../src/runtime/index.ts';
import { crd } from '../support/objects.ts';

const WIDGET = { apiVersion: 'example.com/v1', kind: 'Widget' };
const widgetCrd = crd('example.com', 'Widget', 'widgets');
const widgets: DashboardTable = {
  key: 'widgets',
  title: 'Widgets',
  kind: WIDGET,
  select: (o) => o.metadata.name !== 'ignored',
  row: (o) => ({ phase: String((o.status as { phase?: string } | undefined)?.phase ?? 'Pending') }),
  columns: [{ header: 'PHASE', cell: (r) => String(r.phase), phase: true }],
};
const widget = (namespace: string, name: string, phase?: string): KubeObject => ({
  ...WIDGET,
  metadata: { name, namespace },
  ...(phase ? { status: { phase } } : {}),
});

test('a table is watched through the CRD serving its kind, or as a kind the page already watches', () => {
  assert.deepEqual(watchedKindOf(WIDGET, [widgetCrd]), {
    ...WIDGET,
    crd: 'widgets.example.com',
    resource: 'widgets',
    group: 'example.com',
    namespaced: true,
  });
  assert.equal(watchedKindOf({ apiVersion: 'example.com/v2', kind: 'Widget' }, [widgetCrd]), undefined);
  assert.equal(watchedKindOf({ apiVersion: 'batch/v1', kind: 'Job' }, []), JOB);
});

test('tables of shown kinds become sections with their rows sorted; own sections are left to the page', () => {
  const objects = new Map<string, readonly KubeObject[]>([
    [kindId(WIDGET), [widget('b', 'w1', 'Ready'), widget('a', 'w2'), widget('a', 'ignored')]],
    // PodGroups are shown too, but in the page's own section, not as a table.
    [kindId(POD_GROUP), [{ ...POD_GROUP, metadata: { name: 'g', namespace: 'a' } }]],
    [kindId(POD), []],
  ]);
  const statusViews = capabilities().flatMap((c) => c.status ?? []);
  assert.ok(statusViews.some((v) => v.key === 'podGroups'));
  const snap = buildSnapshot({ kinds: [], objects }, new Date(0), [widgets, ...statusViews]);
  assert.ok(snap.podGroups);
  assert.deepEqual(snap.tables, [
    {
      key: 'widgets',
      title: 'Widgets',
      columns: [{ header: 'PHASE', phase: true }],
      rows: [
        { namespace: 'a', name: 'w2', cells: ['Pending'] },
        { namespace: 'b', name: 'w1', cells: ['Ready'] },
      ],
      omitted: 0,
    },
  ]);
  // Not shown (CRD absent or not readable): no section.
  assert.equal(buildSnapshot({ kinds: [], objects: new Map() }, new Date(0), [widgets]).tables, undefined);
});
