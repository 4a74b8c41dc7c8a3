#!/usr/bin/env node
// Benchmark of the pure gate's decide() at 100k grants, beside Cedar
// (@cedar-policy/cedar-wasm, Node.js build) deciding the same grants in the
// same run. Not a test. Build first: `npx tsc -b packages/gate`.
//
//   node scripts/bench/gate.mjs                 100k grants, 100k requests per stream (Cedar pre-parse takes a minute or so)
//   BENCH_GATE_GRANTS=20000 BENCH_GATE_REQUESTS=50000 node scripts/bench/gate.mjs
//   BENCH_GATE_CEDAR=0 node scripts/bench/gate.mjs   decide() alone
//   BENCH_GATE_PARSE_SHARE=0 ...                     without the parse-share section (for profiling the streams)
//   BENCH_GATE_OTHER=/path/to/other/gate/dist/src/index.js BENCH_GATE_CEDAR=0 ...
//     also times decide() of another build of the gate (say, main's) on the same authority events (folded by
//     that build's evolve(), so the grant tables may differ in layout), its passes alternating with this
//     build's: an A/B comparison of a speed change that the machine's load reaches alike
//   BENCH_GATE_DUMP=out.ndjson BENCH_GATE_RULES=2 node scripts/bench/gate.mjs
//     writes every decision of both streams (and of their distinct-command variants) as JSON lines and exits:
//     a speed change must leave this file byte-identical for every frozen rules version
//
// The baseline is "indexed Cedar", given its best chance: each grant is one
// Cedar policy; the policies of each five-field key are one policy set,
// pre-parsed once (preparsePolicySet) before the clock starts, and each
// request is evaluated (statefulIsAuthorized) only against the set of its own
// five-field key, picked by a Map outside Cedar. A key without grants is
// answered "deny" by the index without calling Cedar at all. The index lookup
// and the request objects are done before the clock starts: the timed loop
// holds nothing but the Cedar call. Only the keys the request streams touch
// are pre-parsed (Cedar is never asked about the others, so pre-parsing them
// would only lengthen the setup). decide() gets no such help: each call
// classifies the proposal (normalisation, pattern, behavioural and context
// rules), looks the grant table up (exact, near miss) and builds its
// decision, refusal text and reasons. Both get a warm-up pass and the best of
// five timed passes (BENCH_GATE_PASSES), their passes alternating so that the
// machine's load reaches both alike, then one pass timing each call for the
// percentiles.
//
// Two request streams over the same grants: "uniform" (every grant equally
// likely: the worst case for caches) and "zipf" (grant popularity ~ 1/rank, as
// real agents and vendors are). Each is half exact hits, a quarter near misses
// (another recipient or scope), a quarter misses (an unknown target).
// Machines are noisy: compare the ratios of one run, not absolute numbers.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createStatement, statementHash } from '@agent-ledger/core';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const gate = await import(join(root, 'packages/gate/dist/src/index.js'));
// The shell parser alone (rules version 2 parses every command an execution tool proposes), for the parse share.
const shellSyntax = await import(join(root, 'packages/gate/dist/src/shell-syntax.js'));
const other = process.env.BENCH_GATE_OTHER === undefined ? null : await import(process.env.BENCH_GATE_OTHER);
const cedar = createRequire(import.meta.url)('@cedar-policy/cedar-wasm/nodejs');

const GRANTS = Number(process.env.BENCH_GATE_GRANTS ?? 100_000);
const REQUESTS = Number(process.env.BENCH_GATE_REQUESTS ?? 100_000);
const WITH_CEDAR = process.env.BENCH_GATE_CEDAR !== '0';
/** Timed passes per function and stream (the best one counts). */
const PASSES = Number(process.env.BENCH_GATE_PASSES ?? 5);
/** Rules version decide() uses (default: the gate's latest); BENCH_GATE_RULES=1 measures version 1 for comparison. */
const RULES = process.env.BENCH_GATE_RULES === undefined ? undefined : { rulesVersion: Number(process.env.BENCH_GATE_RULES) };
const NOW = Date.parse('2026-11-22T10:00:00.000Z');
const DAY = 86_400_000;
const log = (line) => process.stderr.write(`${line}\n`);

// A deterministic PRNG (mulberry32): the same grants and requests every run.
let seed = 0x9e3779b9;
function random() {
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = (list) => list[Math.floor(random() * list.length)];

// --- a realistic grant table --------------------------------------------------
// Kinds of operation agents hold grants for, and what their tool calls look like.
const KINDS = [
  { weight: 30, tool: 'payments', actionType: 'payment.send', target: (i) => `payments/vendors/v${i}`, recipient: (i) => `vendor-${i}`, scope: () => `invoice:2026-${pick(['10', '11', '12'])}`, args: () => ({ amountUsd: Math.floor(random() * 90_000) + 100, invoice: `INV-${Math.floor(random() * 1e6)}` }) },
  { weight: 25, tool: 'email', actionType: 'email.send', target: () => 'mail/outbound', recipient: (i) => `customer-${i}@example.com`, scope: (i) => `ticket:${i}`, args: () => ({ subject: 'Your request', body: 'Hello, your request has been handled. Kind regards.' }) },
  { weight: 20, tool: 'shell', actionType: 'shell.exec', target: (i) => `host/build-${i}`, recipient: () => 'none', scope: () => pick(['workspace', 'main', 'release']), args: () => ({ command: pick(['ls -la /srv/app', 'npm test', 'git push origin main', 'git push --force origin main', 'systemctl restart app', 'make build']) }) },
  { weight: 15, tool: 'http', actionType: 'http.post', target: (i) => `api/partners/p${i}`, recipient: (i) => `partner-${i}`, scope: () => pick(['orders:write', 'inventory:sync']), args: (i) => ({ method: 'POST', url: `https://partner-${i}.example/api/orders`, body: { sku: 'A-1', qty: 3 } }) },
  { weight: 10, tool: 'db', actionType: 'db.query', target: (i) => `db/replica-${i}`, recipient: () => 'none', scope: () => 'read', args: () => ({ sql: 'SELECT id, status FROM orders WHERE updated_at > now() - interval 1 day' }) },
];
const KIND_TOTAL = KINDS.reduce((n, k) => n + k.weight, 0);
function pickKind() {
  let roll = random() * KIND_TOTAL;
  for (const kind of KINDS) if ((roll -= kind.weight) < 0) return kind;
  return KINDS[0];
}

const AGENTS = Array.from({ length: 1000 }, (_, i) => `agent:bot-${i}`);
const keyOf = (o) => JSON.stringify([o.agentId, o.actionType, o.targetResource, o.recipient, o.scope]);
const grants = [];
const byKey = new Map();
for (let n = 0; n < GRANTS; n++) {
  const kind = pickKind();
  const k = Math.floor(random() * 5000);
  const op = { agentId: pick(AGENTS), actionType: kind.actionType, targetResource: kind.target(k), recipient: kind.recipient(k), scope: kind.scope(k), tool: kind.tool, args: kind.args(k) };
  const roll = random();
  // 85% inside their window, 10% expired, 5% not yet valid; 8% block grants.
  const window = roll < 0.85 ? [NOW - 30 * DAY, NOW + 30 * DAY] : roll < 0.95 ? [NOW - 60 * DAY, NOW - DAY] : [NOW + DAY, NOW + 60 * DAY];
  const grant = { grantId: `g${n}`, ...op, notBefore: window[0], expiresAt: window[1], effect: random() < 0.08 ? 'block' : 'allow', tier: 3 };
  grants.push(grant);
  const key = keyOf(op);
  const list = byKey.get(key);
  if (list === undefined) byKey.set(key, [grant]);
  else list.push(grant);
}

// --- the authority stream: genesis, then a proposal and a co-signature per grant
const alice = { principal: 'admin:alice', keyId: 'a'.repeat(64) };
const bob = { principal: 'admin:bob', keyId: 'b'.repeat(64) };
const issued = new Date(NOW - 90 * DAY);
const events = [];
const say = (type, body, author) => {
  const statement = createStatement(type, body, author, issued);
  const event = { statement, index: events.length, statementHash: statementHash(statement), sequencedAt: issued.getTime() };
  events.push(event);
  return event;
};
say('genesis', { origin: 'bench.example/gate', eventPartitions: 4, freshnessMs: 60_000, rootKeys: ['c'.repeat(64)], rootThreshold: 1, keys: [{ keyId: alice.keyId, principal: alice.principal, roles: ['admin'] }, { keyId: bob.keyId, principal: bob.principal, roles: ['admin'] }],
  // Bench windows reach 60 days at tier 3: a policy that allows them (the default caps tier 3 at 30 days).
  grantPolicy: { cosigners: [1, 1, 1, 1, 2], maxLifetimeMs: Array(5).fill(365 * DAY), cosignWindowMs: DAY } }, { principal: 'root:one', keyId: 'c'.repeat(64) });
for (const g of grants) {
  const proposed = say('grant.proposed', { grantId: g.grantId, agentId: g.agentId, actionType: g.actionType, targetResource: g.targetResource, recipient: g.recipient, scope: g.scope, notBefore: new Date(g.notBefore).toISOString(), expiresAt: new Date(g.expiresAt).toISOString(), effect: g.effect, tier: g.tier, parentGrantId: null }, alice);
  say('grant.cosigned', { grantId: g.grantId, grant: proposed.statementHash }, bob);
}
let started = performance.now();
const state = gate.initialState();
for (const event of events) gate.evolve(state, event);
const foldMs = performance.now() - started;
// The other build folds its own state: the two builds' grant tables need not share a layout.
const otherState = other === null ? null : other.initialState();
if (other !== null) for (const event of events) other.evolve(otherState, event);
const eventCount = events.length;
events.length = 0; // a gate keeps the grant table, not the statements
if (state.grants.size !== GRANTS) throw new Error(`folded ${state.grants.size} grants, expected ${GRANTS}`);

// --- request streams ------------------------------------------------------------
const zipfRank = Array.from({ length: GRANTS }, (_, i) => i).sort(() => random() - 0.5);
const zipfCumulative = new Float64Array(GRANTS);
for (let r = 0, sum = 0; r < GRANTS; r++) zipfCumulative[r] = sum += 1 / (r + 1);
function zipfGrant() {
  const roll = random() * zipfCumulative[GRANTS - 1];
  let lo = 0;
  let hi = GRANTS - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (zipfCumulative[mid] < roll) lo = mid + 1;
    else hi = mid;
  }
  return grants[zipfRank[lo]];
}
function stream(name, pickGrant) {
  const requests = [];
  const kinds = { hit: 0, near: 0, miss: 0 };
  for (let n = 0; n < REQUESTS; n++) {
    const g = pickGrant();
    const roll = random();
    const kind = roll < 0.5 ? 'hit' : roll < 0.75 ? 'near' : 'miss';
    kinds[kind] += 1;
    let proposal = { agentId: g.agentId, tool: g.tool, actionType: g.actionType, targetResource: g.targetResource, recipient: g.recipient, scope: g.scope, args: g.args, query: 'please handle this for me', labels: [] };
    if (kind === 'near') proposal = random() < 0.5 ? { ...proposal, recipient: `${g.recipient}-other` } : { ...proposal, scope: `${g.scope}-other` };
    if (kind === 'miss') proposal = { ...proposal, targetResource: `${g.targetResource}/unknown-${n}` };
    requests.push({ kind, command: { now: NOW, channel: pick(['api', 'cli', 'web', 'telegram', 'discord']), context: { environment: pick(['production', 'staging']), crisis: false }, proposal } });
  }
  return { name, requests, kinds };
}
const streams = [stream('uniform', () => grants[Math.floor(random() * GRANTS)]), stream('zipf', zipfGrant)];
if (process.env.BENCH_GATE_DUMP !== undefined) {
  const { writeFileSync } = await import('node:fs');
  const lines = [];
  for (const s of streams) {
    for (const variant of [(text) => text, (text, n) => `${text} run-${n}`, (text, n) => `${text} # run ${n}`]) {
      s.requests.forEach(({ command }, n) => {
        const args = typeof command.proposal.args.command === 'string' ? { command: variant(command.proposal.args.command, n) } : command.proposal.args;
        lines.push(JSON.stringify(gate.decide({ ...command, proposal: { ...command.proposal, args } }, state, RULES)));
      });
    }
  }
  writeFileSync(process.env.BENCH_GATE_DUMP, `${lines.join('\n')}\n`);
  log(`wrote ${lines.length} decisions to ${process.env.BENCH_GATE_DUMP}`);
  process.exit(0);
}

// --- Cedar: one pre-parsed policy set per five-field key, picked by an index outside Cedar
const literal = (value) => JSON.stringify(value);
function policyText(g) {
  const scope = `principal == Agent::${literal(g.agentId)}, action == Action::${literal(g.actionType)}, resource == Resource::${literal(g.targetResource)}`;
  return `${g.effect === 'allow' ? 'permit' : 'forbid'} (${scope}) when { context.recipient == ${literal(g.recipient)} && context.scope == ${literal(g.scope)} && context.now >= ${g.notBefore} && context.now < ${g.expiresAt} };`;
}
const cedarIndex = new Map();
let preparseMs = 0;
if (WITH_CEDAR) {
  started = performance.now();
  for (const s of streams) {
    for (const { command } of s.requests) {
      const key = keyOf(command.proposal);
      const list = byKey.get(key);
      if (list === undefined || cedarIndex.has(key)) continue;
      const id = `k${cedarIndex.size}`;
      const staticPolicies = {};
      for (const g of list) staticPolicies[g.grantId] = policyText(g);
      const answer = cedar.preparsePolicySet(id, { staticPolicies });
      if (answer.type !== 'success') throw new Error(`cedar preparse ${id}: ${JSON.stringify(answer.errors)}`);
      cedarIndex.set(key, id);
      if (cedarIndex.size % 10_000 === 0) log(`  cedar: pre-parsed ${cedarIndex.size} policy sets (${((performance.now() - started) / 1000).toFixed(0)} s)`);
    }
  }
  preparseMs = performance.now() - started;
}
for (const s of streams) {
  // The index's answer, looked up before the clock starts: the call to make, or null (no grants: deny without Cedar).
  s.cedarCalls = s.requests.map(({ command }) => {
    const p = command.proposal;
    const id = cedarIndex.get(keyOf(p));
    if (id === undefined) return null;
    return { principal: { type: 'Agent', id: p.agentId }, action: { type: 'Action', id: p.actionType }, resource: { type: 'Resource', id: p.targetResource }, context: { recipient: p.recipient, scope: p.scope, now: command.now }, preparsedPolicySetId: id, entities: [] };
  });
}
/** Indexed Cedar's decision on request i of stream s: 'allow' or 'deny'. */
function indexedCedar(s, i) {
  const call = s.cedarCalls[i];
  if (call === null) return 'deny';
  const answer = cedar.statefulIsAuthorized(call);
  if (answer.type !== 'success') throw new Error(`cedar: ${JSON.stringify(answer.errors)}`);
  return answer.response.decision;
}

// --- timing -------------------------------------------------------------------------
const percentile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] / 1000;
let sink = 0;
/** Per-call latency of `fn` over one pass (ns per request). */
function latencies(s, fn) {
  const n = s.requests.length;
  const ns = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    sink += fn(i);
    ns[i] = Number(process.hrtime.bigint() - t);
  }
  return ns;
}
function summary(s, best, ns) {
  const byKind = {};
  for (const kind of ['hit', 'near', 'miss']) byKind[kind] = Float64Array.from(s.requests.flatMap((r, i) => (r.kind === kind ? [ns[i]] : []))).sort();
  const all = ns.slice().sort();
  return { perSecond: (s.requests.length / best) * 1000, p50: percentile(all, 0.5), p99: percentile(all, 0.99), byKind };
}
/**
 * Throughput of each function (best of `passes` passes, after a warm-up pass
 * of each) and per-call latency (one more pass each). The functions' passes
 * alternate, so a change in the machine's load reaches both alike.
 */
function measure(s, fns, passes) {
  const n = s.requests.length;
  for (const fn of fns) for (let i = 0; i < n; i++) sink += fn(i);
  const best = fns.map(() => Infinity);
  for (let pass = 0; pass < passes; pass++) {
    fns.forEach((fn, f) => {
      const t = performance.now();
      for (let i = 0; i < n; i++) sink += fn(i);
      best[f] = Math.min(best[f], performance.now() - t);
    });
  }
  return fns.map((fn, f) => summary(s, best[f], latencies(s, fn)));
}
/**
 * Throughput ratio of `a` to `b` from the sums over 1000-request chunks of
 * each chunk's best time (chunks of `a` and `b` alternating, each first on
 * every other pass, so that neither always finds the chunk's grants in the
 * cache): a pass that the scheduler interrupted loses one chunk, not the
 * pass. For A/B comparisons.
 */
function chunkRatio(s, a, b, passes) {
  const n = s.requests.length;
  const chunks = Math.ceil(n / 1000);
  const best = [new Float64Array(chunks).fill(Infinity), new Float64Array(chunks).fill(Infinity)];
  for (let pass = 0; pass < passes; pass++) {
    for (let c = 0; c < chunks; c++) {
      const end = Math.min(n, (c + 1) * 1000);
      (pass % 2 === 0 ? [0, 1] : [1, 0]).forEach((f) => {
        const fn = f === 0 ? a : b;
        const t = performance.now();
        for (let i = c * 1000; i < end; i++) sink += fn(i);
        best[f][c] = Math.min(best[f][c], performance.now() - t);
      });
    }
  }
  const sum = (times) => times.reduce((total, x) => total + x, 0);
  return sum(best[1]) / sum(best[0]);
}
const fmt = (x, digits = 1) => x.toFixed(digits);
function row(name, r) {
  const kinds = Object.entries(r.byKind).map(([k, v]) => `${k} ${fmt(percentile(v, 0.5), 2)}/${fmt(percentile(v, 0.99), 2)}`).join('  ');
  return `  ${name.padEnd(34)} ${fmt(r.perSecond, 0).padStart(8)}/s  p50 ${fmt(r.p50, 2).padStart(6)} us  p99 ${fmt(r.p99, 2).padStart(7)} us   (p50/p99 us: ${kinds})`;
}

console.log(`gate bench (rules version ${RULES?.rulesVersion ?? gate.LATEST_RULES_VERSION}): ${GRANTS} grants (${byKey.size} five-field keys, ${AGENTS.length} agents); ${REQUESTS} requests per stream; node ${process.version}; cedar ${cedar.getCedarVersion()}`);
console.log(`fold: ${eventCount} authority events in ${fmt(foldMs, 0)} ms (${fmt((eventCount / foldMs) * 1000, 0)}/s)${WITH_CEDAR ? `; cedar pre-parse: ${cedarIndex.size} policy sets (the keys with grants that the requests name) in ${fmt(preparseMs / 1000, 1)} s` : ''}`);
const findings = { block: null, allow: null, expired: null, nearMiss: false, argumentMismatch: null };
let failed = false;
for (const s of streams) {
  const outcomes = { allow: 0, verify_first: 0, block: 0 };
  for (const { command } of s.requests) outcomes[gate.decide(command, state, RULES).outcome] += 1;
  console.log(`${s.name}: hit ${s.kinds.hit}, near miss ${s.kinds.near}, miss ${s.kinds.miss}; decide() outcomes ${JSON.stringify(outcomes)}`);
  const decideOne = (i) => gate.decide(s.requests[i].command, state, RULES).tier;
  if (!WITH_CEDAR) {
    if (other === null) {
      console.log(row('decide()', measure(s, [decideOne], PASSES)[0]));
      continue;
    }
    const decideOther = (i) => other.decide(s.requests[i].command, otherState, RULES).tier;
    const [ours, theirs] = measure(s, [decideOne, decideOther], PASSES);
    console.log(row('decide()', ours));
    console.log(row('decide() of BENCH_GATE_OTHER', theirs));
    console.log(`  ratio decide/other: ${fmt(ours.perSecond / theirs.perSecond, 3)}x (best passes); ${fmt(chunkRatio(s, decideOne, decideOther, PASSES), 3)}x (best of each 1000-request chunk)`);
    continue;
  }
  // Agreement: Cedar allows exactly when the grant table has an exact, active, in-window allow grant and no such block grant.
  let agree = 0;
  let cedarCalls = 0;
  for (let i = 0; i < s.requests.length; i++) {
    if (s.cedarCalls[i] !== null) cedarCalls += 1;
    const cedarAllow = indexedCedar(s, i) === 'allow';
    const f = gate.findGrants(state, s.requests[i].command.proposal, NOW, findings);
    if (cedarAllow === (f.block === null && f.allow !== null)) agree += 1;
  }
  const [ours, indexed] = measure(s, [decideOne, (i) => indexedCedar(s, i).length], PASSES);
  console.log(row('decide()', ours));
  console.log(row('indexed cedar', indexed));
  const ratio = ours.perSecond / indexed.perSecond;
  console.log(`  indexed cedar called cedar for ${cedarCalls} requests (the rest: no grants for the key, denied by the index)`);
  console.log(`  agreement of the grant table with indexed cedar: ${agree}/${s.requests.length}`);
  console.log(`  ratio decide/indexed cedar: ${fmt(ratio, 2)}x (target >= 5x); decide p99 ${fmt(ours.p99, 2)} us (target < 100 us)`);
  if (agree !== s.requests.length) failed = true;
}
// --- parse share ------------------------------------------------------------------
// The streams above repeat six shell commands, so after the first call each is
// read from the gate's bounded memo. Here every shell command is made distinct,
// so decide() reads each one anew: once with an extra plain word (read by the
// plain-words path of shell-syntax.ts, exactly what the parser would give), and
// once with a trailing comment (which needs the full parser). The parser alone
// is then timed on the same texts.
for (const [label, distinct] of process.env.BENCH_GATE_PARSE_SHARE === '0' ? [] : [['plain words', (text, n) => `${text} run-${n}`], ['full parser', (text, n) => `${text} # run ${n}`]]) {
  const s = streams[0];
  const shellAt = [];
  const requests = s.requests.map(({ command }, n) => {
    if (typeof command.proposal.args.command !== 'string') return command;
    shellAt.push(n);
    return { ...command, proposal: { ...command.proposal, args: { command: distinct(command.proposal.args.command, n) } } };
  });
  const decideNs = new Float64Array(requests.length);
  for (let i = 0; i < requests.length; i++) {
    const t = process.hrtime.bigint();
    sink += gate.decide(requests[i], state, RULES).tier;
    decideNs[i] = Number(process.hrtime.bigint() - t);
  }
  const texts = shellAt.map((n) => distinct(s.requests[n].command.proposal.args.command, `${n}x`));
  let parseNs = 0;
  for (const text of texts) {
    const t = process.hrtime.bigint();
    sink += shellSyntax.parseShell(text).commands.length;
    parseNs += Number(process.hrtime.bigint() - t);
  }
  const shellNs = shellAt.reduce((sum, n) => sum + decideNs[n], 0);
  const allNs = decideNs.reduce((sum, x) => sum + x, 0);
  const sorted = decideNs.slice().sort();
  const shellSorted = Float64Array.from(shellAt.map((n) => decideNs[n])).sort();
  console.log(`parse share, ${label} (uniform stream, every shell command distinct: no memo hits): ${shellAt.length} shell calls of ${requests.length}`);
  console.log(`  decide() all calls p50 ${fmt(percentile(sorted, 0.5), 2)} us  p99 ${fmt(percentile(sorted, 0.99), 2)} us; shell calls p50 ${fmt(percentile(shellSorted, 0.5), 2)} us  p99 ${fmt(percentile(shellSorted, 0.99), 2)} us`);
  console.log(`  parsing alone ${fmt(parseNs / shellAt.length / 1000, 2)} us per command: ${fmt((parseNs / shellNs) * 100, 1)}% of decide() time on shell calls, ${fmt((parseNs / allNs) * 100, 1)}% of all decide() time`);
}
if (sink === 0.5) console.log('');
if (failed) process.exitCode = 1;
