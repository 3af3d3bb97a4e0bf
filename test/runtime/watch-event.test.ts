import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseWatchEvent, withoutManagedFields } from '../../src/runtime/watch-event.ts';

const fields = [
  {
    manager: 'kubelet',
    operation: 'Update',
    fieldsType: 'FieldsV1',
    // Brackets, braces, quotes and backslashes inside strings must not end the array early.
    fieldsV1: { 'f:status': { 'k:{"ip":"10.0.0.1"}': {}, 'v:"a]}\\\\"': {}, 'v:"\\"]"': {} } },
  },
];
const line = (metadata: Record<string, unknown>, spec: Record<string, unknown> = { nodeName: 'n' }) =>
  JSON.stringify({ type: 'MODIFIED', object: { apiVersion: 'v1', kind: 'Pod', metadata, spec } });
type Event = { type: string; object: { metadata: Record<string, unknown>; spec: Record<string, unknown> } };

test('the object’s own managedFields are cut before decoding; the rest decodes as it was', () => {
  const meta = { name: 'p', annotations: { note: '"managedFields":[' }, managedFields: fields, uid: 'u' };
  const event = parseWatchEvent<Event>(line(meta), true);
  assert.equal(event.object.metadata.managedFields, 0);
  assert.deepEqual({ ...event.object.metadata, managedFields: fields }, meta);
  assert.deepEqual(event.object.spec, { nodeName: 'n' });
  // As the first member of metadata too.
  const first = parseWatchEvent<Event>(line({ managedFields: fields, name: 'p' }), true);
  assert.deepEqual(first.object.metadata, { managedFields: 0, name: 'p' });
});

test('nothing is cut when not asked, without managedFields, or when the match is not the object’s own', () => {
  const text = line({ name: 'p', managedFields: fields });
  assert.deepEqual(parseWatchEvent<Event>(text, false).object.metadata.managedFields, fields);
  const none = line({ name: 'p', annotations: { a: '"managedFields":[1]' } });
  assert.equal(withoutManagedFields(none), none);
  // A namesake in the spec comes first in the text: it is cut, the check sees that the
  // object's own were not, and the event is decoded in full.
  const nested = line(
    { name: 'p', managedFields: fields },
    { template: { metadata: { managedFields: fields } } },
  );
  const flipped = nested
    .replace(/"metadata":\{"name":"p".*?\},"spec"/, '"spec"')
    .replace(/\}\}$/, `,"metadata":${JSON.stringify({ name: 'p', managedFields: fields })}}}`);
  assert.ok(flipped.indexOf('"spec"') < flipped.indexOf('"metadata"'));
  assert.deepEqual(JSON.parse(flipped).object.metadata.managedFields, fields);
  assert.notEqual(withoutManagedFields(flipped), flipped, 'the spec’s namesake is the first match');
  assert.deepEqual(parseWatchEvent(flipped, true), JSON.parse(flipped));
  // Only a namesake, no own managedFields: decoded in full as well.
  const onlyNested = line({ name: 'p' }, { template: { metadata: { managedFields: fields } } });
  assert.deepEqual(parseWatchEvent(onlyNested, true), JSON.parse(onlyNested));
});

test('a bookmark or an error event decodes as it is', () => {
  const bookmark = '{"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"7"}}}';
  assert.deepEqual(parseWatchEvent(bookmark, true), JSON.parse(bookmark));
  const error = '{"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired"}}';
  assert.deepEqual(parseWatchEvent(error, true), JSON.parse(error));
});

test('a malformed line is refused as JSON.parse refuses it, cut or not', () => {
  const whole = line({ name: 'p', managedFields: fields });
  for (const bad of [whole.slice(0, -3), `${whole.slice(0, -2)},}}`, whole.replace('"spec"', 'spec')]) {
    assert.throws(() => JSON.parse(bad), SyntaxError);
    assert.throws(() => parseWatchEvent(bad, true), SyntaxError);
  }
});
