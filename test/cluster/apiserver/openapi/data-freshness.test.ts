import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { DATA_DIR, generateOpenAPIData } from '../../../../scripts/gen-openapi.ts';

test('committed OpenAPI data matches what scripts/gen-openapi.ts generates from the installed packages', () => {
  const generated = generateOpenAPIData();
  const committed = readdirSync(DATA_DIR).filter((f) => f.endsWith('.json'));
  assert.deepEqual(committed.sort(), [...generated.keys()].sort());
  for (const [file, content] of generated) {
    assert.equal(
      readFileSync(path.join(DATA_DIR, file), 'utf8'),
      content,
      `${file} is stale: run scripts/gen-openapi.ts`,
    );
  }
});
