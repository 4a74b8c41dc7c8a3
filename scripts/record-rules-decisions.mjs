#!/usr/bin/env node
// Records the decisions of one rules version, before the next version exists,
// for the frozen-version replay of packages/gate/test/corpus.unit.test.ts:
// every case of the project corpus and of the held-out sets at the cli and api
// channels (no grants), and the authorization packet with its grants.
// Build the gate first (`npx tsc -b packages/gate`).
//
//   node scripts/record-rules-decisions.mjs 9   writes test/vectors/gate/rules-v9-decisions.json
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const gate = await import(join(root, 'packages/gate/dist/src/index.js'));
const version = Number(process.argv[2]);
if (!Number.isInteger(version) || version < 1 || version > gate.LATEST_RULES_VERSION) {
  process.stderr.write(`usage: record-rules-decisions.mjs VERSION (1 to ${gate.LATEST_RULES_VERSION})\n`);
  process.exit(2);
}
const vectors = join(root, 'test/vectors/gate');
const files = ['corpus.json', ...readdirSync(vectors).filter((f) => /^corpus-heldout\d*\.json$/.test(f)).sort((a, b) => Number(a.match(/\d+/)?.[0] ?? 1) - Number(b.match(/\d+/)?.[0] ?? 1))];
const NOW = Date.parse('2026-11-22T10:00:00.000Z');
const decisions = [];
for (const file of files) {
  const corpus = JSON.parse(readFileSync(join(vectors, file), 'utf8'));
  for (const raw of corpus.cases) {
    const c = { ...corpus.defaults, ...raw, actionType: raw.actionType ?? corpus.defaults.actionType };
    const proposal = { agentId: c.agentId, tool: c.tool, actionType: c.actionType, targetResource: c.targetResource, recipient: c.recipient, scope: c.scope, args: c.args, query: '' };
    for (const channel of ['cli', 'api']) {
      decisions.push({ file, id: c.id, channel, decision: gate.decide({ now: NOW, channel, context: c.context, proposal }, gate.initialState(), { rulesVersion: version }) });
    }
  }
}
for (const s of JSON.parse(readFileSync(join(vectors, 'authorization-packet.json'), 'utf8'))) {
  const state = gate.initialState();
  s.grants.forEach((g, i) => gate.grantFromScenario(state, g, i));
  decisions.push({ file: 'authorization-packet.json', id: s.name, channel: s.channel, decision: gate.decide({ now: Date.parse(s.now), channel: s.channel, context: s.context, proposal: s.proposal }, state, { rulesVersion: version }) });
}
const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
const sets = files.length - 1;
const source = `Decisions of rules version ${version} made by the gate at commit ${commit}${version === gate.LATEST_RULES_VERSION ? ` (before version ${version + 1} existed)` : ''}: the corpus and the ${sets} held-out sets at the cli and api channels (no grants), and the authorization packet with its grants. A test replays them with rulesVersion ${version} and expects every decision byte for byte.`;
const out = join(vectors, `rules-v${version}-decisions.json`);
writeFileSync(out, JSON.stringify({ source, decisions }));
process.stdout.write(`${out}: ${decisions.length} decisions\n`);
