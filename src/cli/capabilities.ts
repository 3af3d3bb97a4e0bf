/**
 * How `--controllers` selects among the capabilities (src/controllers/capabilities.ts, the
 * one list): by capability name or controller name.
 */
import { type Capability, type CapabilityValues, capabilities } from '../controllers/capabilities.ts';
import type { DashboardOptions } from '../dashboard/index.ts';
import type { ControllerDefinition } from '../runtime/index.ts';

export { type Capability, type CapabilityValues, capabilities };

/** Names of the capabilities, for tools that list them (install manifests). */
export function capabilityNames(): string[] {
  return capabilities().map((c) => c.name);
}

/** Resolves `--controllers` (`*`, capability names or controller names, comma-separated). */
export function selectControllers(
  all: Capability[],
  selector: string,
): { capabilities: Capability[]; controllers: ControllerDefinition[] } {
  const wanted = selector
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const everything = wanted.length === 0 || wanted.includes('*');
  const chosen: Capability[] = [];
  const controllers: ControllerDefinition[] = [];
  const unknown = new Set(wanted.filter((w) => w !== '*'));
  for (const cap of all) {
    const take =
      everything || wanted.includes(cap.name)
        ? cap.controllers
        : cap.controllers.filter((d) => wanted.includes(d.name));
    unknown.delete(cap.name);
    for (const d of cap.controllers) unknown.delete(d.name);
    if (take.length > 0) {
      chosen.push(cap);
      controllers.push(...take);
    }
  }
  if (unknown.size > 0) {
    const names = all.flatMap((c) => [c.name, ...c.controllers.map((d) => d.name)]);
    throw new Error(
      `--controllers: unknown controller(s) ${[...unknown].join(', ')}; known: ${[...new Set(names)].join(', ')}`,
    );
  }
  return { capabilities: chosen, controllers };
}

/** Whether `--controllers` names the capability or one of its controllers (not only `*`). */
export function askedByName(cap: Capability, selector: string): boolean {
  const wanted = selector.split(',').map((s) => s.trim());
  return wanted.includes(cap.name) || cap.controllers.some((d) => wanted.includes(d.name));
}

/** What the dashboard shows of the capabilities: their `troupe status` sections, and the CRDs serving their kinds. */
export function dashboardParts(caps: Capability[]): Pick<DashboardOptions, 'tables' | 'crds'> {
  return { tables: caps.flatMap((c) => c.status ?? []), crds: caps.flatMap((c) => c.crds) };
}
