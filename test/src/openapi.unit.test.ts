import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validate as strictValidate } from '@readme/openapi-parser';
import { Validator } from '@seriousme/openapi-schema-validator';
import { openApiDocument } from '@agent-ledger/ledger';

type Operation = { operationId?: string; parameters?: { name: string; in: string; required?: boolean }[]; responses: Record<string, { content?: Record<string, { schema?: unknown }> }> };

test('OpenAPI: /openapi.json passes the strict validator (@readme/openapi-parser: schema and spec rules) and the OAS 3.1 JSON Schema', async () => {
  const result = await strictValidate(structuredClone(openApiDocument()) as never);
  assert.deepEqual(result.valid ? [] : result.errors, [], 'no validation errors');
  assert.equal(result.valid, true);
  assert.deepEqual(result.warnings, []);
  const schemaCheck = await new Validator().validate(structuredClone(openApiDocument()));
  assert.equal(schemaCheck.valid, true, JSON.stringify(schemaCheck.errors));
});

test('OpenAPI: the validator is strict: an undeclared path parameter and a duplicate operationId are errors', async () => {
  const missing = structuredClone(openApiDocument()) as { paths: Record<string, { get: Operation }> };
  const receipts = missing.paths['/v1/receipts/{partition}/{index}'] as { get: Operation };
  receipts.get.parameters = [];
  const refused = await strictValidate(missing as never);
  assert.equal(refused.valid, false);
  assert.match(JSON.stringify(refused), /missing path parameter/);
  const duplicate = structuredClone(openApiDocument()) as { paths: Record<string, { get: Operation }> };
  (duplicate.paths['/v1/pending'] as { get: Operation }).get.operationId = 'getProposal';
  assert.equal((await strictValidate(duplicate as never)).valid, false);
});

test('OpenAPI: every operation has an operationId, declares each {param} of its path, and every 2xx answer a schema', () => {
  const document = openApiDocument() as { paths: Record<string, Record<string, Operation>> };
  const ids = new Set<string>();
  const paths = Object.keys(document.paths);
  for (const required of ['/v1/proposals/{hash}', '/v1/receipts/{partition}/{index}', '/v1/statements/{id}', '/v1/pending', '/v1/decisions/{proposal}']) assert.ok(paths.includes(required), required);
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      assert.match(operation.operationId ?? '', /^[a-z][A-Za-z]+$/, `${method} ${path} operationId`);
      assert.ok(!ids.has(operation.operationId as string), `duplicate ${operation.operationId}`);
      ids.add(operation.operationId as string);
      const templated = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      const declared = (operation.parameters ?? []).filter((p) => p.in === 'path');
      assert.deepEqual(declared.map((p) => p.name).sort(), [...templated].sort(), `${path} path parameters`);
      for (const p of declared) assert.equal(p.required, true, `${path} ${p.name} required`);
      for (const [status, response] of Object.entries(operation.responses)) {
        if (!status.startsWith('2')) continue;
        const media = Object.values(response.content ?? {});
        assert.ok(media.length > 0 && media.every((m) => m.schema !== undefined), `${method} ${path} ${status} has a schema`);
      }
    }
  }
  // Query parameters the routes read are declared.
  const query = (path: string) => (document.paths[path]?.['get']?.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name).sort();
  assert.deepEqual(query('/v1/pending'), ['limit']);
  assert.deepEqual(query('/v1/enforcement'), ['agentId', 'limit']);
  assert.deepEqual(query('/v1/consistency'), ['from', 'partition', 'to']);
  assert.deepEqual(query('/v1/decisions/{proposal}'), ['waitMs']);
  assert.deepEqual(query('/v1/checkpoints/latest'), ['partition']);
});
