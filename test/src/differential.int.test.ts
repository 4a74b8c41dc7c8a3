import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import {
  PartitionChain,
  createStatement,
  formatTrailer,
  nodeEd25519,
  partitionOf,
  sequencerNoteSigner,
  sha256Hex,
  signCheckpoint,
  signNote,
  signStatement,
  statementHash,
  toBase64,
  type BodyOf,
  type Entry,
  type Envelope,
  type Signer,
  type StatementType,
  LATEST_AUTHORITY_RULES_VERSION,
} from '@agent-ledger/core';
import { createKafkaBus } from '@agent-ledger/kafka';
import { exportCommand, newSigner, prng, topicNames, type LedgerHome } from '@agent-ledger/ledger';
import { verifyBundle } from '@agent-ledger/verifier';
import { freshHome, proposal, start } from './live.js';

// The differential test of issue "one rulebook": thousands of random valid and
// invalid statements go to the live ledger, half through the API and half
// straight onto the intake topic. The exported log must verify, every valid
// statement must be on it, and every invalid one must be an `intake.rejected`
// entry whose code is the code verify-chain gives when the same statement is
// admitted at that place instead (re-sequenced offline over the same
// authority prefix at the same sequencing time).

const STATEMENTS = Number(process.env.LEDGER_DIFFERENTIAL_STATEMENTS ?? 5000);
/** Offline re-admissions checked per category (each is one small bundle verified in process). */
const OFFLINE_PER_CATEGORY = 6;
/** Restricts the inputs to one path (for investigating a failure). */
const ONLY_VIA = process.env.LEDGER_DIFFERENTIAL_VIA as 'api' | 'intake' | undefined;

type Via = 'api' | 'intake';

/** One input sent to the live ledger. */
interface Sent {
  readonly category: string;
  readonly via: Via;
  readonly raw: Buffer;
  readonly inputHash: string;
  /** Statement id and hash when the bytes carry a statement. */
  readonly id: string | null;
  readonly hash: string | null;
  /** `admit`, or the code the rules give it. */
  readonly expected: 'admit' | string;
  /** Ledger partition the input was sent to. */
  readonly partition: number;
  /** The envelope, when the bytes are one (for the offline re-admission). */
  readonly envelope: Envelope | null;
  /** An earlier input this one replays or follows (offline context). */
  readonly context: Sent | null;
  apiStatus?: number;
  apiCode?: string | null;
}

function envelopeOf(type: StatementType, body: unknown, author: { principal: string; keyId: string }, signers: readonly Signer[], issuedAt = new Date()): Envelope {
  const statement = createStatement(type, body as BodyOf<typeof type>, author, issuedAt);
  return signStatement(statement, signers, nodeEd25519) as Envelope;
}

function flipSignature(envelope: Envelope): Envelope {
  const sig = Buffer.from(envelope.signatures[0]?.sig ?? '', 'base64');
  sig[5] = (sig[5] ?? 0) ^ 0x40;
  return { ...envelope, signatures: [{ keyId: envelope.signatures[0]?.keyId ?? '', sig: sig.toString('base64') }] };
}

test('live admission equals verify-chain on thousands of random valid and invalid statements', { timeout: 600_000 }, async (t) => {
  const home = freshHome();
  // Every refusal of this test must be recorded: lift the API's bound on recorded refusals (its flood guard) for this installation.
  process.env.LEDGER_API_REFUSAL_RECORD_LIMIT = '1000000/100000';
  const running = await start(home, ['api', 'sequencer', 'gate', 'projector', 'timer', 'siem']);
  delete process.env.LEDGER_API_REFUSAL_RECORD_LIMIT;
  const bus = createKafkaBus({ brokers: home.config.kafkaBrokers, clientId: `differential-${randomBytes(3).toString('hex')}`, logLevel: 'nothing' });
  const topics = topicNames(home.config.topicPrefix);
  const parts = home.config.eventPartitions;
  t.after(async () => {
    await running.stop();
    await bus.close();
  });
  const random = prng(20261124);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const agents = ['agent-billing-bot', 'agent-ops-bot', 'agent-support-bot', 'agent-deploy-bot', 'agent-build-bot'].map((name) => home.key(name));
  const admins = [home.key('admin-alice'), home.key('admin-bob')];
  const approver = home.key('approver-dana');
  const [gate, timer, bridge] = [home.key('gate'), home.key('timer'), home.key('bridge-chat')];
  const freshness = home.config.freshnessMs;

  const sent: Sent[] = [];
  const make = (category: string, via: Via, envelope: Envelope | null, raw: Buffer, expected: string, partition: number, context: Sent | null = null): Sent => {
    const statement = envelope?.statement;
    return { category, via, raw, inputHash: sha256Hex(raw), id: statement?.id ?? null, hash: statement === undefined ? null : statementHash(statement), expected, partition, envelope, context };
  };
  const asSent = (category: string, via: Via, envelope: Envelope, expected: string, context: Sent | null = null, partition?: number): Sent => {
    const raw = Buffer.from(JSON.stringify(envelope));
    return make(category, via, envelope, raw, expected, partition ?? partitionOf(envelope.statement, parts), context);
  };
  const proposalBy = (agent: Signer, issuedAt?: Date, extra: Record<string, unknown> = {}): Envelope =>
    envelopeOf('proposal.submitted', { agentId: agent.principal, ...proposal({ args: { command: pick(['ls -la', 'git status', 'npm test', 'cat README.md']), n: Math.floor(random() * 1e6) } }), ...extra }, agent, [agent], issuedAt);

  // The generators: each returns one input (or a pair, context first) of its category.
  const generators: Record<string, (via: Via) => Sent[]> = {
    valid_proposal: (via) => {
      return [asSent('valid_proposal', via, proposalBy(pick(agents)), 'admit')];
    },
    bad_signature: (via) => [asSent('bad_signature', via, flipSignature(proposalBy(pick(agents))), 'INVALID_SIGNATURE')],
    unknown_key: (via) => {
      const stranger = newSigner(pick(agents).principal);
      return [asSent('unknown_key', via, proposalBy(stranger), 'KEY_UNKNOWN')];
    },
    other_principal: (via) => {
      const [a, b] = [agents[0] as Signer, agents[1] as Signer];
      const env = envelopeOf('proposal.submitted', { agentId: b.principal, ...proposal() }, { principal: b.principal, keyId: a.keyId }, [a]);
      return [asSent('other_principal', via, env, 'KEY_ROLE')];
    },
    agent_signs_decision: (via) => {
      const agent = pick(agents);
      const env = envelopeOf(
        'decision.recorded',
        { agentId: agent.principal, proposal: randomBytes(32).toString('hex'), outcome: 'allow', code: null, tier: 0, risk: 0, authorityIndex: 0, grantId: null, grantEntry: null },
        agent,
        [agent],
      );
      return [asSent('agent_signs_decision', via, env, 'KEY_ROLE')];
    },
    approver_writes_grant: (via) => {
      const now = Date.now();
      const env = envelopeOf(
        'grant.proposed',
        {
          grantId: `g-${randomBytes(4).toString('hex')}`, agentId: (agents[0] as Signer).principal, actionType: 'payment.send', targetResource: 'payments/vendors/acme', recipient: 'acme', scope: 'invoice',
          notBefore: new Date(now - 60_000).toISOString(), expiresAt: new Date(now + 86_400_000).toISOString(), effect: 'allow', tier: 2, parentGrantId: null,
        },
        approver,
        [approver],
      );
      return [asSent('approver_writes_grant', via, env, 'KEY_ROLE')];
    },
    stale: (via) => [asSent('stale', via, proposalBy(pick(agents), new Date(Date.now() - freshness - 120_000)), 'REPLAY')],
    future: (via) => [asSent('future', via, proposalBy(pick(agents), new Date(Date.now() + freshness + 120_000)), 'REPLAY')],
    replayed: (via) => {
      const original = asSent('replayed_original', via, proposalBy(pick(agents)), 'admit');
      const copy = make('replayed', via, original.envelope, Buffer.from(original.raw), 'REPLAY', original.partition, original);
      return [original, copy];
    },
    unknown_field: (via) => {
      const agent = pick(agents);
      const env = proposalBy(agent);
      const tampered = { ...env, statement: { ...env.statement, body: { ...env.statement.body, extra: true } } };
      return [make('unknown_field', via, null, Buffer.from(JSON.stringify(tampered)), 'SCHEMA_INVALID', partitionOf(env.statement, parts))];
    },
    self_cosign: (via) => {
      const now = Date.now();
      const admin = pick(admins);
      const proposed = envelopeOf(
        'grant.proposed',
        {
          grantId: `g-${randomBytes(4).toString('hex')}`, agentId: (agents[0] as Signer).principal, actionType: 'payment.send', targetResource: 'payments/vendors/acme', recipient: 'acme', scope: 'invoice',
          notBefore: new Date(now - 60_000).toISOString(), expiresAt: new Date(now + 86_400_000).toISOString(), effect: 'allow', tier: 2, parentGrantId: null,
        },
        admin,
        [admin],
      );
      const first = asSent('grant_write', via, proposed, 'admit');
      const body = proposed.statement.body as BodyOf<'grant.proposed'>;
      const cosign = envelopeOf('grant.cosigned', { grantId: body.grantId, grant: statementHash(proposed.statement) }, admin, [admin]);
      return [first, asSent('self_cosign', via, cosign, 'SEPARATION_OF_DUTIES', first)];
    },
    agent_submits_rejection: (via) => {
      const agent = pick(agents);
      const env = envelopeOf('intake.rejected', { agentId: agent.principal, code: 'REPLAY', detail: 'forged', input: randomBytes(32).toString('hex') }, agent, [agent]);
      return [asSent('agent_submits_rejection', via, env, 'KEY_ROLE')];
    },
    // Authority rules 2 (SPEC.md section 7.3).
    one_admin_registers_admin: (via) => {
      const mallory = newSigner(`admin:m-${randomBytes(3).toString('hex')}`);
      const admin = pick(admins);
      const env = envelopeOf('key.registered', { keyId: mallory.keyId, principal: mallory.principal, roles: ['admin'] }, admin, [admin, mallory]);
      return [asSent('one_admin_registers_admin', via, env, 'SEPARATION_OF_DUTIES')];
    },
    two_admins_register_agent: (via) => {
      const fresh = newSigner(`agent:n-${randomBytes(3).toString('hex')}`);
      const env = envelopeOf('key.registered', { keyId: fresh.keyId, principal: fresh.principal, roles: ['agent'] }, admins[0] as Signer, [...admins, fresh]);
      return [asSent('two_admins_register_agent', via, env, 'admit')];
    },
    registration_without_possession: (via) => {
      const fresh = newSigner(`agent:p-${randomBytes(3).toString('hex')}`);
      const admin = pick(admins);
      const env = envelopeOf('key.registered', { keyId: fresh.keyId, principal: fresh.principal, roles: ['agent'] }, admin, [admin]);
      return [asSent('registration_without_possession', via, env, 'INVALID_SIGNATURE')];
    },
    timer_signs_decision: (via) => {
      const agent = pick(agents);
      const env = envelopeOf(
        'decision.recorded',
        { agentId: agent.principal, proposal: randomBytes(32).toString('hex'), outcome: 'allow', code: null, tier: 0, risk: 0, authorityIndex: 0, grantId: null, grantEntry: null, rulesVersion: 2 },
        timer,
        [timer],
      );
      return [asSent('timer_signs_decision', via, env, 'KEY_ROLE')];
    },
    gate_decides_under_rules_1: (via) => {
      const agent = pick(agents);
      const env = envelopeOf(
        'decision.recorded',
        { agentId: agent.principal, proposal: randomBytes(32).toString('hex'), outcome: 'allow', code: null, tier: 0, risk: 0, authorityIndex: 0, grantId: null, grantEntry: null },
        gate,
        [gate],
      );
      return [asSent('gate_decides_under_rules_1', via, env, 'POLICY_VIOLATION')];
    },
    bridge_claims_self_signed: (via) => {
      const agent = pick(agents);
      const env = envelopeOf(
        'human.response',
        { agentId: agent.principal, proposal: randomBytes(32).toString('hex'), request: randomBytes(32).toString('hex'), answer: 'approve', assurance: 'self_signed', platformIdentity: null },
        bridge,
        [bridge],
      );
      return [asSent('bridge_claims_self_signed', via, env, 'KEY_ROLE')];
    },
    // Straight to intake only: the API never chooses the wrong partition.
    misrouted: () => {
      const env = proposalBy(pick(agents));
      const right = partitionOf(env.statement, parts);
      return [asSent('misrouted', 'intake', env, 'INTEGRITY_FAILURE', null, right === 1 ? 2 : 1)];
    },
    not_json: () => {
      const raw = Buffer.from(`{"statement": ${randomBytes(6).toString('hex')}`);
      return [make('not_json', 'intake', null, raw, 'SCHEMA_INVALID', 1 + Math.floor(random() * parts))];
    },
  };
  const categories = Object.keys(generators);

  // Send: in rounds, so that both paths interleave on every partition.
  const post = async (s: Sent): Promise<void> => {
    const response = await fetch(`${running.apiUrl}/v1/statements`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: s.raw });
    s.apiStatus = response.status;
    const answer = (await response.json().catch(() => ({}))) as { error?: { code?: string } };
    s.apiCode = answer.error?.code ?? null;
  };
  while (sent.length < STATEMENTS) {
    const round: Sent[] = [];
    for (let i = 0; i < 50; i++) {
      const category = random() < 0.5 ? 'valid_proposal' : pick(categories);
      round.push(...(generators[category] as (via: Via) => Sent[])(ONLY_VIA ?? (random() < 0.5 ? 'api' : 'intake')));
    }
    // Pairs keep their order: the context goes first, on its own path.
    for (const s of round) {
      if (s.via === 'api') await post(s);
      else await bus.publish([{ topic: topics.intake, partition: s.partition, key: null, value: s.raw }]);
    }
    sent.push(...round);
  }

  // Wait until the log holds every input, admitted or rejected.
  const exportDir = home.dir;
  const bundlePath = join(exportDir, 'differential.ndjson');
  // Poll the exported log until it holds every input, or until nothing new arrives for 30 s.
  let lines: string[] = [];
  let missing: Sent[] = sent;
  for (let lastProgress = Date.now(), before = Infinity; missing.length > 0 && Date.now() - lastProgress < 30_000; ) {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await exportCommand({ out: bundlePath, home: home.dir });
    lines = readFileSync(bundlePath, 'utf8').split('\n').filter((l) => l !== '');
    const ids = new Set<string>();
    const rejectedInputs = new Set<string>();
    for (const line of lines) {
      const parsed = JSON.parse(line) as { kind: string; envelope?: Envelope };
      if (parsed.kind !== 'entry' || parsed.envelope === undefined) continue;
      const st = parsed.envelope.statement;
      if (st.type === 'intake.rejected') rejectedInputs.add((st.body as BodyOf<'intake.rejected'>).input);
      else ids.add(st.id);
    }
    missing = sent.filter((s) => !(s.expected === 'admit' ? s.id !== null && ids.has(s.id) : rejectedInputs.has(s.inputHash)));
    if (missing.length < before) lastProgress = Date.now();
    before = missing.length;
  }
  const byCategory = new Map<string, number>();
  for (const s of missing) byCategory.set(`${s.category} via ${s.via}`, (byCategory.get(`${s.category} via ${s.via}`) ?? 0) + 1);
  assert.deepEqual([...byCategory], [], 'inputs that never reached the log (admitted or rejected)');

  // 1. The whole exported log verifies.
  const report = await verifyBundle([`${lines.join('\n')}\n`], home.trustRoot, { workers: 2 });
  assert.equal(report.failure, null, report.failure?.message);

  // 2. Every invalid input is an intake.rejected with the expected code; no invalid statement was admitted.
  const entries: Entry[] = [];
  const rejections = new Map<string, Entry>();
  const admittedIds = new Map<string, Entry>();
  for (const line of lines) {
    const parsed = JSON.parse(line) as { kind: string } & Entry;
    if (parsed.kind !== 'entry') continue;
    entries.push(parsed);
    const st = parsed.envelope.statement;
    if (st.type === 'intake.rejected') rejections.set((st.body as BodyOf<'intake.rejected'>).input, parsed);
    else admittedIds.set(st.id, parsed);
  }
  const counts = new Map<string, number>();
  for (const s of sent) {
    counts.set(s.category, (counts.get(s.category) ?? 0) + 1);
    if (s.expected === 'admit') {
      assert.ok(s.id !== null && admittedIds.has(s.id), `${s.category} via ${s.via} was not admitted`);
      continue;
    }
    const rejection = rejections.get(s.inputHash);
    assert.ok(rejection !== undefined, `${s.category} via ${s.via}: no intake.rejected for it`);
    assert.equal((rejection.envelope.statement.body as BodyOf<'intake.rejected'>).code, s.expected, `${s.category} via ${s.via}`);
    if (s.via === 'api' && s.apiStatus !== undefined && s.apiStatus >= 400) assert.equal(s.apiCode, s.expected, `${s.category}: API answer`);
    if (s.id !== null && s.category !== 'replayed') assert.equal(admittedIds.has(s.id), false, `${s.category} was admitted`);
  }
  t.diagnostic(`sent ${sent.length}: ${[...counts].map(([c, n]) => `${c} ${n}`).join(', ')}; log ${entries.length} entries, ${rejections.size} rejections`);

  // 3. verify-chain gives the same code when the rejected statement is admitted in its place.
  const sequencer = home.key('sequencer');
  const authority = entries.filter((e) => e.partition === 0);
  let checked = 0;
  for (const category of categories) {
    const samples = sent.filter((s) => s.category === category && s.expected !== 'admit' && s.envelope !== null).slice(0, OFFLINE_PER_CATEGORY);
    for (const s of samples) {
      const rejection = rejections.get(s.inputHash) as Entry;
      const offline = readmitted(home, sequencer, authority, rejection, s);
      const verdict = await verifyBundle([`${offline.lines.join('\n')}\n`], home.trustRoot, { workers: 0 });
      assert.equal(verdict.ok, false, `${category}: verify-chain accepted what the sequencer rejected`);
      assert.deepEqual(
        { code: verdict.failure?.code, partition: verdict.failure?.partition, index: verdict.failure?.index },
        { code: (rejection.envelope.statement.body as BodyOf<'intake.rejected'>).code, partition: offline.at.partition, index: offline.at.index },
        `${category}: ${verdict.failure?.message}`,
      );
      checked += 1;
    }
  }
  t.diagnostic(`offline re-admissions checked: ${checked}`);
  assert.ok(checked >= 10);
});

/**
 * A bundle in which the rejected input is admitted where the sequencer
 * rejected it: the authority entries it was judged against (re-used as they
 * are when it is an events input; re-sequenced up to it when it is an
 * authority input), the input it replays or follows when it has one, then the
 * input itself at the rejection's sequencing time. Checkpoints and trailer are
 * signed with the installation's sequencer key.
 */
function readmitted(home: LedgerHome, sequencer: Signer, authority: readonly Entry[], rejection: Entry, s: Sent): { lines: string[]; at: Entry } {
  const parts = home.config.eventPartitions;
  const origin = home.config.origin;
  const chains = Array.from({ length: parts + 1 }, (_, p) => new PartitionChain(p));
  const lines: string[][] = chains.map(() => []);
  const noteSigner = sequencerNoteSigner(origin, sequencer, nodeEd25519);
  const append = (p: number, envelope: Envelope, at: string, authorityIndex: number): Entry => {
    const entry = (chains[p] as PartitionChain).append(envelope, new Date(at), authorityIndex);
    (lines[p] as string[]).push(JSON.stringify({ kind: 'entry', ...entry }));
    return entry;
  };
  const cut = rejection.partition === 0 ? rejection.index : rejection.authorityIndex;
  for (const entry of authority) if (entry.index < cut) append(0, entry.envelope, entry.sequencedAt, entry.index);
  const p = s.partition;
  // An authority input's context is in the re-used prefix already; an events input's is re-sequenced before it.
  if (p !== 0 && s.context !== null && s.context.envelope !== null) append(p, s.context.envelope, rejection.sequencedAt, p === 0 ? chains[0]!.size : cut);
  const at = append(p, s.envelope as Envelope, rejection.sequencedAt, p === 0 ? chains[0]!.size : cut);
  chains.forEach((chain, q) => {
    if (chain.size > 0) (lines[q] as string[]).push(JSON.stringify({ kind: 'checkpoint', partition: q, note: signCheckpoint(chain, origin, noteSigner, LATEST_AUTHORITY_RULES_VERSION) }));
  });
  const summaries = chains.map((chain, q) => ({ partition: q, size: chain.size, checkpoints: chain.size > 0 ? 1 : 0, root: toBase64(chain.root()) }));
  const header = JSON.stringify({ kind: 'header', format: 'agent-ledger-bundle', version: 1, origin, exportedAt: rejection.sequencedAt, partitions: summaries.map((x) => x.size) });
  const trailer = JSON.stringify({ kind: 'trailer', note: signNote(formatTrailer(origin, summaries), [noteSigner]) });
  return { lines: [header, ...lines.flat(), trailer], at };
}
