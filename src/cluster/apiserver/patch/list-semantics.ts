import { isObject } from '../../../lib/json.ts';
import { type GroupVersionKind, type KindRules, OBJECT_META_RULES, rulesFor } from './smp-table.ts';

/**
 * How server-side apply treats the node at a path. For a list: `map` (items keyed by `keys`,
 * each item owned field by field unless `atomicItems`), `set` (scalar items owned one by one)
 * or `atomic` (owned and replaced whole). For an object, `atomic` means the object is one value;
 * anything else (or undefined) means it is merged key by key. A list with no answer is atomic.
 */
export type ListSemantics =
  | { type: 'map'; keys: string[]; keyDefaults?: Record<string, unknown>; atomicItems?: boolean }
  | { type: 'set' }
  | { type: 'atomic' };

/**
 * Looks up the semantics of the node at `path`: field names from the object root, with list
 * items transparent (`['spec', 'containers', 'env']`). `alwaysPresent`, when given, names the
 * fields the typed object always serialises (so creating them is not an ownership change of
 * the field itself, only of its contents): the built-in kinds have some, custom resources none.
 */
export interface ListSemanticsLookup {
  (path: string[]): ListSemantics | undefined;
  alwaysPresent?: (path: string[]) => boolean;
  /**
   * The same two answers by the path's names joined with `.`, for walks that keep the joined
   * path as they go (a create's field tracking) instead of building and joining arrays.
   */
  byKey?: { semantics(key: string): ListSemantics | undefined; alwaysPresent(key: string): boolean };
}

function fromRules(rules: KindRules): ListSemanticsLookup {
  // Answers are plain data, the same for every call: made once per rule.
  const answers = new Map<string, ListSemantics | undefined>();
  const semantics = (key: string): ListSemantics | undefined => {
    if (answers.has(key)) return answers.get(key);
    const answer = semanticsOf(rules[key]);
    answers.set(key, answer);
    return answer;
  };
  const alwaysPresent = (key: string) => rules[key]?.alwaysPresent === true;
  const lookup: ListSemanticsLookup = (path) => semantics(path.join('.'));
  lookup.alwaysPresent = (path) => alwaysPresent(path.join('.'));
  lookup.byKey = { semantics, alwaysPresent };
  return lookup;
}

function semanticsOf(rule: KindRules[string] | undefined): ListSemantics | undefined {
  if (!rule) return undefined;
  switch (rule.listType) {
    case 'map':
      return {
        type: 'map',
        keys: rule.listMapKeys ?? [],
        ...(rule.listMapKeyDefaults ? { keyDefaults: rule.listMapKeyDefaults } : {}),
        ...(rule.atomic ? { atomicItems: true } : {}),
      };
    case 'set':
      return { type: 'set' };
    case 'atomic':
      return { type: 'atomic' };
    default:
      return rule.atomic ? { type: 'atomic' } : undefined;
  }
}

/** Semantics of a built-in kind from the SMP table; other kinds get ObjectMeta's alone. */
export function builtinListSemantics(gvk: GroupVersionKind | string): ListSemanticsLookup {
  const rules = rulesFor(gvk) ?? OBJECT_META_RULES;
  let lookup = builtinLookups.get(rules);
  if (!lookup) {
    lookup = fromRules(rules);
    builtinLookups.set(rules, lookup);
  }
  return lookup;
}

const builtinLookups = new WeakMap<KindRules, ListSemanticsLookup>();

type Schema = Record<string, unknown>;

/**
 * Semantics of a custom resource from its openAPIV3Schema: `x-kubernetes-list-type`,
 * `x-kubernetes-list-map-keys` (key defaults taken from the items' schema) and
 * `x-kubernetes-map-type`. Lists default to atomic, as for CRDs on a real server; metadata
 * follows ObjectMeta whatever the schema says.
 */
export function listSemanticsFromSchema(openAPIV3Schema: unknown): ListSemanticsLookup {
  const meta = fromRules(OBJECT_META_RULES);
  return (path) => {
    if (path[0] === 'metadata') return meta(path);
    let node: Schema | undefined = isObject(openAPIV3Schema) ? openAPIV3Schema : undefined;
    for (const name of path) {
      if (!node) return undefined;
      node = childSchema(node, name);
    }
    return node ? nodeSemantics(node) : undefined;
  };
}

function itemsOf(node: Schema): Schema | undefined {
  return isObject(node.items) ? node.items : undefined;
}

function childSchema(node: Schema, name: string): Schema | undefined {
  let cur: Schema | undefined = node;
  while (cur && (cur.type === 'array' || itemsOf(cur))) cur = itemsOf(cur);
  if (!cur) return undefined;
  const props = cur.properties;
  if (isObject(props) && isObject(props[name])) return props[name];
  if (isObject(cur.additionalProperties)) return cur.additionalProperties;
  return undefined;
}

function nodeSemantics(node: Schema): ListSemantics | undefined {
  if (node.type === 'array' || itemsOf(node)) {
    const items = itemsOf(node);
    switch (node['x-kubernetes-list-type']) {
      case 'map': {
        const keys = Array.isArray(node['x-kubernetes-list-map-keys'])
          ? (node['x-kubernetes-list-map-keys'] as unknown[]).map(String)
          : [];
        const props = items && isObject(items.properties) ? items.properties : {};
        const keyDefaults: Record<string, unknown> = {};
        for (const k of keys) {
          const prop = props[k];
          if (isObject(prop) && prop.default !== undefined) keyDefaults[k] = prop.default;
        }
        return {
          type: 'map',
          keys,
          ...(Object.keys(keyDefaults).length > 0 ? { keyDefaults } : {}),
          ...(items?.['x-kubernetes-map-type'] === 'atomic' ? { atomicItems: true } : {}),
        };
      }
      case 'set':
        return { type: 'set' };
      default:
        return { type: 'atomic' };
    }
  }
  if (node['x-kubernetes-map-type'] === 'atomic') return { type: 'atomic' };
  return undefined;
}
