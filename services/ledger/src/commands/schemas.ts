import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { KNOWN_CODES, LedgerError, ReasonCode } from '@agent-ledger/refusals';
import { BODY_SCHEMAS, BundleLineSchema, EnvelopeSchema, STATEMENT_TYPES, TrustRootSchema } from '@agent-ledger/core';
import { Exit, exitStatusOf } from '../cli-error.js';
import { reportFailureJson, reportSuccess } from './json-output.js';

/** Every generated JSON Schema document, by file name. */
export function generatedSchemas(): Map<string, unknown> {
  const files = new Map<string, unknown>();
  const doc = (id: string, schema: z.ZodType): unknown => ({ $id: `https://agent-ledger.dev/schemas/${id}`, ...z.toJSONSchema(schema, { target: 'draft-2020-12' }) });
  for (const type of STATEMENT_TYPES) files.set(`statement.${type}.schema.json`, doc(`statement.${type}.schema.json`, BODY_SCHEMAS[type]));
  files.set('envelope.schema.json', doc('envelope.schema.json', EnvelopeSchema));
  files.set('bundle-line.schema.json', doc('bundle-line.schema.json', BundleLineSchema));
  files.set('trust-root.schema.json', doc('trust-root.schema.json', TrustRootSchema));
  files.set('reason-code.schema.json', {
    $id: 'https://agent-ledger.dev/schemas/reason-code.schema.json',
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    description: 'A refusal reason code (packages/refusals/CODES.md).',
    type: 'string',
    enum: [...KNOWN_CODES],
  });
  return files;
}

/**
 * `ledger schemas --out DIR [--check]`: writes the JSON Schema of every
 * statement type, generated from the zod schemas; with --check, exits 1 when
 * the files on disk differ (CI runs this so the schemas cannot drift): with
 * `--json` the failure object SCHEMA_INVALID with the report and its `stale` files.
 */
export function schemasCommand(options: { out: string; check?: boolean; json?: boolean }): number {
  const files = generatedSchemas();
  mkdirSync(options.out, { recursive: true });
  const stale: string[] = [];
  for (const [name, schema] of files) {
    const text = `${JSON.stringify(schema, null, 2)}\n`;
    const path = join(options.out, name);
    let current: string | undefined;
    try {
      current = readFileSync(path, 'utf8');
    } catch {
      current = undefined;
    }
    if (current === text) continue;
    if (options.check === true) stale.push(name);
    else writeFileSync(path, text);
  }
  const extra = readdirSync(options.out).filter((f) => f.endsWith('.schema.json') && !files.has(f));
  stale.push(...extra.map((f) => `${f} (not generated)`));
  if (options.check === true && stale.length > 0) {
    // The files on disk do not match the schemas their zod sources generate: invalid content (exit 1).
    const drift = new LedgerError(ReasonCode.SCHEMA_INVALID, `schemas drifted from the zod sources: ${stale.join(', ')} (run: npm run schemas)`);
    if (options.json === true) return reportFailureJson(drift, { checked: true, out: options.out, schemas: files.size, stale });
    process.stderr.write(`schemas drifted from the zod sources: ${stale.join(', ')}\nrun: npm run schemas\n`);
    return exitStatusOf(drift);
  }
  reportSuccess(options.json, [`${files.size} schemas ${options.check === true ? 'up to date' : `written to ${options.out}`}`], { checked: options.check === true, out: options.out, schemas: files.size, stale: [] });
  return Exit.ok;
}
