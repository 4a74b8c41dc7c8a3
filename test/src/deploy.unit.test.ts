import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv, type ValidateFunction } from 'ajv';
import ts from 'typescript';
import { parse, parseAllDocuments } from 'yaml';
import { ROLES } from '@agent-ledger/ledger';

/**
 * The deployment material under deploy/: the Compose file against the
 * Compose Specification's JSON schema (the copy the dclint package ships),
 * the Kubernetes manifests against the Kubernetes API types (the
 * kubernetes-types package, generated from the OpenAPI spec) by the
 * TypeScript checker, whose excess-property check refuses a misspelt field
 * at any depth as `kubectl apply --validate=strict` does, and the systemd
 * units' shape (deploy-systemd.local.test.ts runs systemd-analyze on them).
 */

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const DEPLOY = join(ROOT, 'deploy');
const require = createRequire(import.meta.url);

type Json = Record<string, unknown>;

let compiled: ValidateFunction | undefined;

/** The Compose Specification schema validator (draft-07, as dclint compiles it). */
function composeValidator(): ValidateFunction {
  if (compiled !== undefined) return compiled;
  const schemaPath = join(dirname(require.resolve('dclint/package.json')), 'schemas', 'compose.schema.json');
  const schema = JSON.parse(readFileSync(schemaPath, 'utf8')) as Json;
  // The file names draft-07 by its https address; Ajv knows the meta-schema by its canonical http one.
  schema['$schema'] = 'http://json-schema.org/draft-07/schema#';
  const ajv = new Ajv({ allErrors: true, strict: false, allowUnionTypes: true });
  compiled = ajv.compile(schema);
  return compiled;
}

/** Schema errors of a Compose document, one line each (empty when valid). */
function composeErrors(document: unknown): string[] {
  const validate = composeValidator();
  if (validate(document)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? e.keyword} ${JSON.stringify(e.params)}`);
}

function readCompose(): Json {
  // Merge keys (<<) are part of the file's YAML, as Compose reads it.
  return parse(readFileSync(join(DEPLOY, 'compose.yaml'), 'utf8'), { merge: true }) as Json;
}

/** Every document of every manifest under deploy/k8s, with its file. */
function readManifests(): { file: string; doc: Json }[] {
  const dir = join(DEPLOY, 'k8s');
  const out: { file: string; doc: Json }[] = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.yaml')).sort()) {
    for (const d of parseAllDocuments(readFileSync(join(dir, file), 'utf8'))) {
      if (d.errors.length > 0) throw new Error(`${file}: ${d.errors[0]?.message ?? 'YAML error'}`);
      const doc = d.toJS() as unknown;
      if (doc !== null) out.push({ file, doc: doc as Json });
    }
  }
  return out;
}

/** kubernetes-types module of an apiVersion: `apps/v1` -> `apps/v1`, `v1` -> `core/v1`, `networking.k8s.io/v1` -> `networking/v1`. */
function typesModule(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  if (slash < 0) return `core/${apiVersion}`;
  return `${apiVersion.slice(0, slash).split('.')[0] ?? ''}/${apiVersion.slice(slash + 1)}`;
}

/**
 * Type errors of Kubernetes objects against kubernetes-types: each object is
 * a fresh object literal annotated with the type of its kind, so a field the
 * API does not have is an excess-property error, a wrong type a type error,
 * a missing required field an error, an unknown kind an unresolved type.
 */
function manifestErrors(docs: readonly { file: string; doc: Json }[]): { index: number; message: string }[] {
  const lines = docs.map(({ doc }, i) => {
    const apiVersion = typeof doc['apiVersion'] === 'string' ? doc['apiVersion'] : 'unknown/v0';
    const kind = typeof doc['kind'] === 'string' && /^[A-Za-z]+$/.test(doc['kind']) ? doc['kind'] : 'UnknownKind';
    return `export const d${i}: import('kubernetes-types/${typesModule(apiVersion)}').${kind} = ${JSON.stringify(doc)};`;
  });
  const fileName = join(ROOT, 'deploy', 'k8s', '__manifests__.ts');
  const text = lines.join('\n');
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
    lib: ['lib.es2022.d.ts'],
    types: [],
    skipLibCheck: true,
  };
  const host = ts.createCompilerHost(options);
  const original = { getSourceFile: host.getSourceFile.bind(host), fileExists: host.fileExists.bind(host), readFile: host.readFile.bind(host) };
  host.getSourceFile = (name, language, onError, shouldCreate) => (name === fileName ? ts.createSourceFile(name, text, language) : original.getSourceFile(name, language, onError, shouldCreate));
  host.fileExists = (name) => name === fileName || original.fileExists(name);
  host.readFile = (name) => (name === fileName ? text : original.readFile(name));
  const program = ts.createProgram([fileName], options, host);
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const message = ts.flattenDiagnosticMessageText(d.messageText, ' ');
    if (d.file?.fileName !== fileName || d.start === undefined) return { index: -1, message };
    const index = d.file.getLineAndCharacterOfPosition(d.start).line;
    const entry = docs[index];
    const meta = (entry?.doc['metadata'] ?? {}) as Json;
    return { index, message: `${entry?.file ?? '?'}: ${String(entry?.doc['kind'])} ${String(meta['name'])}: ${message}` };
  });
}

/** The pod template of a workload, if it is one. */
function podSpec(doc: Json): Json | undefined {
  const spec = doc['spec'] as Json | undefined;
  const template = spec?.['template'] as Json | undefined;
  return template?.['spec'] as Json | undefined;
}

test('the Compose file is valid under the Compose Specification and runs every role from the one image', () => {
  const compose = readCompose();
  assert.deepEqual(composeErrors(compose), []);
  const services = compose['services'] as Record<string, Json>;
  for (const role of ROLES) {
    const running = Object.entries(services).filter(([, s]) => JSON.stringify(s['command']) === JSON.stringify(['serve', '--target', role]));
    assert.equal(running.length, 1, `one service runs the ${role} role`);
    assert.match(String(running[0]?.[1]['image']), /^agent-ledger:/);
  }
  const brokers = Object.entries(services).filter(([, s]) => String(s['image']).startsWith('apache/kafka:'));
  assert.equal(brokers.length, 3, 'three Kafka brokers');
  for (const [, broker] of brokers) {
    const env = broker['environment'] as Json;
    assert.equal(env['KAFKA_PROCESS_ROLES'], 'broker,controller');
    assert.equal(env['KAFKA_MIN_INSYNC_REPLICAS'], 2);
  }
});

test('a Compose file with a misspelt or mistyped field is refused', () => {
  const misspelt = readCompose();
  ((misspelt['services'] as Record<string, Json>)['ledger-api'] as Json)['restart_policy'] = 'always';
  assert.ok(composeErrors(misspelt).some((e) => e.includes('restart_policy')), 'an unknown service field is named');

  const mistyped = readCompose();
  const api = (mistyped['services'] as Record<string, Json>)['ledger-api'] as Json;
  api['depends_on'] = { postgres: { condition: 'service_up' } };
  assert.ok(composeErrors(mistyped).some((e) => e.includes('/services/ledger-api/depends_on')), 'a bad depends_on condition is refused');
});

test('the Kubernetes manifests type-check against the Kubernetes API types', () => {
  const docs = readManifests();
  assert.deepEqual(manifestErrors(docs).map((e) => e.message), []);
  const kinds = new Set(docs.map(({ doc }) => String(doc['kind'])));
  for (const kind of ['Namespace', 'ConfigMap', 'Deployment', 'StatefulSet', 'Service', 'PodDisruptionBudget', 'NetworkPolicy']) assert.ok(kinds.has(kind), `a ${kind}`);
});

test('every role has one workload; each container is locked down and has resource requests; the API is probed', () => {
  const docs = readManifests();
  const workloads = docs.filter(({ doc }) => doc['kind'] === 'Deployment' || doc['kind'] === 'StatefulSet');
  for (const role of ROLES) {
    const running = workloads.filter(({ doc }) => ((podSpec(doc)?.['containers'] ?? []) as Json[]).some((c) => JSON.stringify(c['args']) === JSON.stringify(['serve', '--target', role])));
    assert.equal(running.length, 1, `one workload runs the ${role} role`);
  }
  for (const { file, doc } of workloads) {
    const pod = podSpec(doc) ?? {};
    assert.equal(pod['automountServiceAccountToken'], false, file);
    assert.equal((pod['securityContext'] as Json)['runAsNonRoot'], true, file);
    for (const c of pod['containers'] as Json[]) {
      const requests = (c['resources'] as Json)['requests'] as Json;
      assert.ok(typeof requests['cpu'] === 'string' && typeof requests['memory'] === 'string', `${file}: cpu and memory requests`);
      const security = c['securityContext'] as Json;
      assert.equal(security['allowPrivilegeEscalation'], false, file);
      assert.equal(security['readOnlyRootFilesystem'], true, file);
    }
  }
  const api = workloads.find(({ doc }) => (doc['metadata'] as Json)['name'] === 'ledger-api');
  const container = (podSpec(api?.doc ?? {})?.['containers'] as Json[])[0] ?? {};
  const path = (probe: string): unknown => ((container[probe] as Json | undefined)?.['httpGet'] as Json | undefined)?.['path'];
  assert.equal(path('livenessProbe'), '/healthz');
  assert.equal(path('readinessProbe'), '/readyz');
  const pdb = docs.find(({ doc }) => doc['kind'] === 'PodDisruptionBudget');
  assert.deepEqual(((pdb?.doc['spec'] as Json)['selector'] as Json)['matchLabels'], { 'app.kubernetes.io/name': 'ledger-api' });
});

test('a manifest with a misspelt, mistyped or missing field, or an unknown kind, is refused', () => {
  const api = readManifests().filter(({ file }) => file === '40-api.yaml');
  const deployment = (): Json => structuredClone(api.find(({ doc }) => doc['kind'] === 'Deployment')?.doc ?? {});
  const container = (doc: Json): Json => ((podSpec(doc)?.['containers'] as Json[])[0] ?? {});

  const misspelt = deployment();
  const c = container(misspelt);
  c['readinesProbe'] = c['readinessProbe'];
  delete c['readinessProbe'];
  const mistyped = deployment();
  (mistyped['spec'] as Json)['replicas'] = 'four';
  const missing = deployment();
  delete container(missing)['name'];
  const unknownKind = { apiVersion: 'apps/v1', kind: 'Deploymnet', metadata: { name: 'x' } };
  // One program for all four (a type-check takes a second or two).
  const errors = manifestErrors([misspelt, mistyped, missing, unknownKind].map((doc) => ({ file: 'broken.yaml', doc })));
  const of = (index: number): string[] => errors.filter((e) => e.index === index).map((e) => e.message);
  assert.ok(of(0).some((m) => m.includes('readinesProbe') && m.includes("does not exist in type 'Container'")), `a misspelt nested field is named: ${of(0).join('; ')}`);
  assert.ok(of(1).some((m) => m.includes("'string' is not assignable to type 'number'")), `a string where a number goes: ${of(1).join('; ')}`);
  assert.ok(of(2).some((m) => m.includes("'name'")), `a container without a name: ${of(2).join('; ')}`);
  assert.ok(of(3).some((m) => m.includes('Deploymnet')), `an unknown kind: ${of(3).join('; ')}`);
});

test('one systemd unit per role, hardened, restarted on failure; a fenced sequencer stays down', () => {
  const dir = join(DEPLOY, 'systemd');
  const units = readdirSync(dir).filter((f) => f.endsWith('.service'));
  for (const role of ROLES) {
    const running = units.filter((f) => readFileSync(join(dir, f), 'utf8').includes(`ExecStart=/usr/local/bin/ledger serve --target ${role}\n`));
    assert.equal(running.length, 1, `one unit runs the ${role} role`);
  }
  for (const unit of units) {
    const text = readFileSync(join(dir, unit), 'utf8');
    for (const line of ['NoNewPrivileges=yes', 'ProtectSystem=strict', 'ReadWritePaths=/var/lib/ledger', 'User=ledger', 'Restart=on-failure', 'After=network-online.target', 'Wants=network-online.target', 'EnvironmentFile=/etc/ledger/ledger.env', 'CapabilityBoundingSet=\n']) {
      assert.ok(text.includes(line), `${unit}: ${line.trim()}`);
    }
  }
  assert.match(readFileSync(join(dir, 'ledger-sequencer.service'), 'utf8'), /^RestartPreventExitStatus=3$/m);
});
