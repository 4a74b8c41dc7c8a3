import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  PartitionChain,
  createStatement,
  formatTrailer,
  nodeEd25519,
  partitionOf,
  sequencerNoteSigner,
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
  type TrustRoot,
} from '@agent-ledger/core';
import { newSigner, readTrustRoot, synthesizeDemo } from '@agent-ledger/ledger';

/** A demo bundle written to a temporary directory, with its lines and trust root. */
export interface DemoBundle {
  readonly dir: string;
  readonly bundlePath: string;
  readonly trustRootPath: string;
  readonly trustRoot: TrustRoot;
  readonly lines: string[];
}

/** Synthesizes a small valid demo ledger for tests. */
export async function makeDemoBundle(events: number, options: { checkpointEvery?: number; eventPartitions?: number; seed?: number } = {}): Promise<DemoBundle> {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-test-'));
  const bundlePath = join(dir, 'bundle.ndjson');
  const trustRootPath = join(dir, 'trust-root.json');
  await synthesizeDemo({
    events,
    out: bundlePath,
    trustRootOut: trustRootPath,
    checkpointEvery: options.checkpointEvery ?? 40,
    eventPartitions: options.eventPartitions ?? 3,
    seed: options.seed ?? 11,
  });
  const lines = readFileSync(bundlePath, 'utf8').split('\n');
  if (lines.at(-1) === '') lines.pop();
  return { dir, bundlePath, trustRootPath, trustRoot: readTrustRoot(trustRootPath), lines };
}

/** Repository root, from a compiled test file in test/dist/. */
export const repoRoot = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..', '..');

/**
 * A hand-driven ledger for tests that need exact control: statements signed
 * by known keys, sequenced into their partitions, checkpoints where asked,
 * rendered as bundle lines with a signed trailer.
 */
export class TestLedger {
  readonly origin = 'ledger.test/unit';
  readonly roots = [newSigner('root:1'), newSigner('root:2'), newSigner('root:3')];
  readonly admin = newSigner('admin:alice');
  readonly admin2 = newSigner('admin:bob');
  readonly sequencer = newSigner('sequencer:main');
  readonly gate = newSigner('service:gate');
  readonly agent = newSigner('agent:billing-bot');
  readonly approver = newSigner('approver:dana');
  readonly trustRoot: TrustRoot;
  readonly eventPartitions: number;
  /** The authority rules version checkpoints are signed under (the genesis's; a test writing its own genesis sets it). */
  readonly authorityRulesVersion: number;
  clock = Date.parse('2026-11-01T08:00:00.000Z');
  readonly #chains: PartitionChain[];
  readonly #lines: string[][];
  readonly #checkpoints: number[];

  constructor(options: { eventPartitions?: number; freshnessMs?: number; genesis?: boolean; authorityRulesVersion?: number } = {}) {
    this.eventPartitions = options.eventPartitions ?? 2;
    this.authorityRulesVersion = options.authorityRulesVersion ?? 1;
    this.trustRoot = { v: 1, origin: this.origin, rootKeys: this.roots.map((r) => r.keyId), threshold: 2 };
    this.#chains = Array.from({ length: this.eventPartitions + 1 }, (_, p) => new PartitionChain(p));
    this.#lines = this.#chains.map(() => []);
    this.#checkpoints = this.#chains.map(() => 0);
    if (options.genesis !== false) {
      this.say(
        'genesis',
        {
          origin: this.origin,
          eventPartitions: this.eventPartitions,
          freshnessMs: options.freshnessMs ?? 300_000,
          rootKeys: this.trustRoot.rootKeys,
          rootThreshold: 2,
          keys: [
            { keyId: this.admin.keyId, principal: this.admin.principal, roles: ['admin'] },
            { keyId: this.admin2.keyId, principal: this.admin2.principal, roles: ['admin'] },
            { keyId: this.sequencer.keyId, principal: this.sequencer.principal, roles: ['sequencer'] },
            { keyId: this.gate.keyId, principal: this.gate.principal, roles: ['service'] },
            { keyId: this.agent.keyId, principal: this.agent.principal, roles: ['agent'] },
            { keyId: this.approver.keyId, principal: this.approver.principal, roles: ['approver'] },
          ],
        },
        this.roots[0] as Signer,
        { extraSigners: [this.roots[1] as Signer] },
      );
    }
  }

  /** Number of authority entries so far. */
  get authoritySize(): number {
    return (this.#chains[0] as PartitionChain).size;
  }

  /** Signs and sequences a statement; returns its entry and statement hash. */
  say<T extends StatementType>(
    type: T,
    body: BodyOf<T>,
    signer: Signer,
    options: { extraSigners?: readonly Signer[]; partition?: number; issuedAtOffsetMs?: number; authorityIndex?: number } = {},
  ): { entry: Entry; hash: string } {
    this.clock += 10;
    const statement = createStatement(type, body, { principal: signer.principal, keyId: signer.keyId }, new Date(this.clock + (options.issuedAtOffsetMs ?? 0)));
    const envelope = signStatement(statement, [signer, ...(options.extraSigners ?? [])], nodeEd25519);
    return { entry: this.append(envelope, options), hash: statementHash(statement) };
  }

  /** Sequences an already-signed envelope. */
  append(envelope: Envelope, options: { partition?: number; authorityIndex?: number } = {}): Entry {
    const partition = options.partition ?? partitionOf(envelope.statement, this.eventPartitions);
    const chain = this.#chains[partition] as PartitionChain;
    const entry = chain.append(envelope, new Date(this.clock + 1), options.authorityIndex ?? this.authoritySize);
    (this.#lines[partition] as string[]).push(JSON.stringify({ kind: 'entry', ...entry }));
    return entry;
  }

  /** A proposal by the test agent with a fixed operation. */
  propose(overrides: Partial<BodyOf<'proposal.submitted'>> = {}, signer: Signer = this.agent): { entry: Entry; hash: string } {
    return this.say(
      'proposal.submitted',
      {
        agentId: signer.principal,
        tool: 'payments',
        actionType: 'payment.send',
        targetResource: 'payments/vendors/acme',
        recipient: 'acme-corp',
        scope: 'invoice:2026-11',
        args: { amountUsd: 1200 },
        query: 'pay the invoice',
        labels: [],
        channel: 'api',
        context: { environment: 'production' },
        ...overrides,
      },
      signer,
    );
  }

  /** Appends a signed checkpoint for a partition at its current size; returns the note. */
  checkpoint(partition: number): string {
    const note = signCheckpoint(this.#chains[partition] as PartitionChain, this.origin, sequencerNoteSigner(this.origin, this.sequencer, nodeEd25519), this.authorityRulesVersion);
    (this.#lines[partition] as string[]).push(JSON.stringify({ kind: 'checkpoint', partition, note }));
    this.#checkpoints[partition] = (this.#checkpoints[partition] ?? 0) + 1;
    return note;
  }

  /** Checkpoints every non-empty partition whose tail is not covered yet. */
  sealAll(): void {
    this.#chains.forEach((chain, p) => {
      const last = (this.#lines[p] as string[]).at(-1);
      if (chain.size > 0 && last !== undefined && !last.startsWith('{"kind":"checkpoint"')) this.checkpoint(p);
    });
  }

  /** The bundle lines: header, partitions, signed trailer. */
  lines(): string[] {
    const summaries = this.#chains.map((chain, p) => ({ partition: p, size: chain.size, checkpoints: this.#checkpoints[p] ?? 0, root: toBase64(chain.root()) }));
    const header = JSON.stringify({ kind: 'header', format: 'agent-ledger-bundle', version: 1, origin: this.origin, exportedAt: new Date(this.clock).toISOString(), partitions: summaries.map((s) => s.size) });
    const trailer = JSON.stringify({ kind: 'trailer', note: signNote(formatTrailer(this.origin, summaries), [sequencerNoteSigner(this.origin, this.sequencer, nodeEd25519)]) });
    return [header, ...this.#lines.flat(), trailer];
  }
}
