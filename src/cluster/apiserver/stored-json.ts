/**
 * The JSON of a write's record (what a create or update stored, what a deletion's DELETED event
 * carries), remembered for the object the write returns so that the HTTP response sends those
 * bytes rather than serializing the same object a second time. Api registers the result when
 * it writes the record, and nothing changes that object before a response sends it; responses
 * of any other object, and Tables, are serialized as usual.
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
