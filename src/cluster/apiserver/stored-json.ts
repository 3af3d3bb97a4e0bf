/**
 * The JSON a write stored, remembered for the object the write returns so that the HTTP
 * response sends those bytes rather than serializing the same object a second time. Only a
 * write's own result is registered, and the handler sends it unchanged; anything else is
 * serialized as usual.
 */
import type { KubeObject } from './types.ts';

const storedJson = new WeakMap<KubeObject, string>();

export function rememberStoredJson(obj: KubeObject, json: string): void {
  storedJson.set(obj, json);
}

/** The object's JSON: as stored when it is a write's result, else freshly serialized. */
export function jsonOf(obj: KubeObject): string {
  return storedJson.get(obj) ?? JSON.stringify(obj);
}
