import { createReadStream, readFileSync, writeFileSync } from 'node:fs';
import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import {
  checkCheckpointSigners,
  checkpointVerifiers,
  AuthorityState,
  MerkleTree,
  canonicalJson,
  entryHash,
  envelopeHash,
  fromBase64,
  fromHex,
  headerOf,
  nodeEd25519,
  openNote,
  parseCheckpoint,
  parseStrictJson,
  parseStrictJsonBytes,
  partitionOrigin,
  readLineBatches,
  toBase64,
  verifyEnvelopeSignatures,
  verifyInclusion,
  type Entry,
  type Envelope,
  type NoteVerifier,
} from '@agent-ledger/core';
import { ReceiptSchema, loadTrust, verifyReceipt as verifyDecisionReceipt } from '@agent-ledger/client';
import { Exit, UsageError } from '../cli-error.js';
import { readTrustRoot } from '../trust-root-file.js';
import { reportFailure, reportSuccess } from './json-output.js';

/** `ledger receipt`: extracts a receipt for one entry from a bundle. */
export async function receiptCommand(options: { bundle: string; partition: number; index: number; out: string; json?: boolean }): Promise<number> {
  const tree = new MerkleTree();
  let genesis: Envelope | undefined;
  let entry: Entry | undefined;
  let checkpoint: { note: string; size: number } | undefined;
  outer: for await (const batch of readLineBatches(createReadStream(options.bundle))) {
    let start = 0;
    for (const end of batch.ends) {
      const line = parseStrictJsonBytes(batch.bytes.subarray(start, end)) as { kind?: string; partition?: number; index?: number; hash?: string; note?: string; envelope?: Envelope };
      start = end;
      if (line.kind === 'entry' && line.partition === 0 && line.index === 0) genesis = line.envelope;
      if (line.partition !== options.partition) continue;
      if (line.kind === 'entry' && typeof line.hash === 'string') {
        tree.append(fromHex(line.hash, 32));
        if (line.index === options.index) {
          const { kind: _kind, ...fields } = line;
          entry = fields as unknown as Entry;
        }
      } else if (line.kind === 'checkpoint' && typeof line.note === 'string' && tree.size > options.index) {
        checkpoint = { note: line.note, size: tree.size };
        break outer;
      }
    }
  }
  if (genesis === undefined || entry === undefined || checkpoint === undefined) {
    throw new UsageError(`no checkpointed entry ${options.partition}/${options.index} in ${options.bundle}`);
  }
  const receipt = {
    v: 1,
    entry,
    inclusionProof: tree.inclusionProof(options.index, checkpoint.size).map(toBase64),
    checkpoint: checkpoint.note,
    genesis,
  };
  writeFileSync(options.out, `${JSON.stringify(receipt, null, 2)}\n`);
  reportSuccess(options.json, [`receipt for ${options.partition}/${options.index} against checkpoint of size ${checkpoint.size} written to ${options.out}`], {
    partition: options.partition,
    index: options.index,
    checkpointSize: checkpoint.size,
    out: options.out,
  });
  return Exit.ok;
}

/** Result of checking a receipt. */
export interface ReceiptVerdict {
  readonly ok: boolean;
  readonly code: ReasonCode | null;
  readonly message: string;
}

/** Checks a receipt (untrusted input) against a trust root. Never throws for bad content. */
export function verifyReceipt(text: string, trustRoot: ReturnType<typeof readTrustRoot>): ReceiptVerdict {
  try {
    const parsed = ReceiptSchema.safeParse(parseStrictJson(text));
    if (!parsed.success) throw new LedgerError(ReasonCode.SCHEMA_INVALID, `receipt: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
    const receipt = parsed.data as unknown as { entry: Entry; inclusionProof: string[]; checkpoint: string; genesis: Envelope };
    // 1. The genesis is signed by the pinned roots and names the sequencer keys.
    const authority = new AuthorityState(trustRoot);
    const genesisCanonical = canonicalJson(receipt.genesis.statement);
    if (receipt.genesis.statement.type !== 'genesis') throw new LedgerError(ReasonCode.INTEGRITY_FAILURE, 'receipt genesis is not a genesis statement');
    authority.authorize(receipt.genesis.statement, verifyEnvelopeSignatures(receipt.genesis, genesisCanonical, nodeEd25519), 0);
    authority.apply(receipt.genesis.statement, 0, 0);
    const entry = receipt.entry;
    const verifiers: NoteVerifier[] = checkpointVerifiers(
      trustRoot.origin,
      entry.partition,
      [...authority.keys()].filter((k) => k.roles.includes('sequencer')).map((k) => fromHex(k.keyId, 32)),
      (pk, m, s) => nodeEd25519.verify(pk, m, s),
    );
    // 2. The checkpoint is signed by one of them and is this partition's.
    const opened = openNote(receipt.checkpoint, verifiers);
    checkCheckpointSigners(opened, trustRoot.origin, entry.partition, authority.config?.authorityRulesVersion ?? 1);
    const checkpoint = parseCheckpoint(opened.text);
    if (checkpoint.origin !== partitionOrigin(trustRoot.origin, entry.partition)) {
      throw new LedgerError(ReasonCode.CHECKPOINT_INVALID, `checkpoint is for ${checkpoint.origin}, not partition ${entry.partition}`);
    }
    // 3. The entry's signatures hold and its hash is its content's.
    const canonical = canonicalJson(entry.envelope.statement);
    verifyEnvelopeSignatures(entry.envelope, canonical, nodeEd25519);
    const hash = entryHash(headerOf(entry, envelopeHash(entry.envelope, canonical)));
    if (hash !== entry.hash) throw new LedgerError(ReasonCode.INTEGRITY_FAILURE, 'entry hash does not match its content');
    // 4. RFC 9162 section 2.1.3.2: the proof leads from the entry to the signed root.
    const proof = receipt.inclusionProof.map((p) => fromBase64(p, 32));
    if (!verifyInclusion(fromHex(hash, 32), entry.index, checkpoint.size, proof, checkpoint.rootHash)) {
      throw new LedgerError(ReasonCode.INTEGRITY_FAILURE, 'inclusion proof does not lead to the checkpoint root');
    }
    return { ok: true, code: null, message: `entry ${entry.partition}/${entry.index} is in the log of size ${checkpoint.size}` };
  } catch (err) {
    if (err instanceof LedgerError) return { ok: false, code: err.code, message: err.message };
    throw err;
  }
}

/** Options of `ledger verify-receipt`. */
export interface VerifyReceiptCommandOptions {
  /** Trust-root file: checks the receipt's inclusion only (SPEC.md section 10). */
  readonly trustRoot?: string;
  /** Pinned trust file with `proposal`: checks a decision receipt as an executor does (SPEC.md section 10.2). */
  readonly trust?: string;
  readonly proposal?: string;
  readonly agent?: string;
  readonly maxAgeMs?: number;
  readonly json?: boolean;
}

/**
 * `ledger verify-receipt`. With `--trust-root`, an entry's inclusion in
 * the log; with `--trust` and `--proposal`, a decision receipt as an
 * executor checks it before running the tool: its key valid at that index,
 * bound to that proposal, fresh. With `--json`:
 * `{"ok":true,"code":null,"message"}`, or the failure object with the
 * refusal's code (exit 1) and, as before, `code` and `message` beside it.
 */
export function verifyReceiptCommand(path: string, options: VerifyReceiptCommandOptions): number {
  if ((options.trust === undefined) === (options.trustRoot === undefined)) throw new UsageError('give --trust-root FILE, or --trust FILE with --proposal HASH');
  let verdict: ReceiptVerdict;
  if (options.trust !== undefined) {
    if (options.proposal === undefined || !/^[0-9a-f]{64}$/.test(options.proposal)) throw new UsageError('--trust needs --proposal, the 64-hex proposal hash the decision must name');
    const trust = loadTrust(options.trust);
    let value: unknown;
    try {
      value = parseStrictJson(readFileSync(path, 'utf8'));
    } catch {
      value = null; // not JSON: refused as SCHEMA_INVALID below
    }
    const checked = verifyDecisionReceipt(value, trust, { proposalHash: options.proposal, ...(options.agent === undefined ? {} : { agentId: options.agent }), ...(options.maxAgeMs === undefined ? {} : { maxAgeMs: options.maxAgeMs }) });
    verdict = checked.ok
      ? { ok: true, code: null, message: `decision ${checked.decision.outcome}${checked.decision.code === null ? '' : ` (${checked.decision.code})`} at ${checked.decision.partition}/${checked.decision.index}, signed by gate key ${checked.decision.signer.slice(0, 16)}, in the log of size ${checked.decision.checkpointSize}` }
      : { ok: false, code: checked.code, message: checked.detail };
  } else {
    verdict = verifyReceipt(readFileSync(path, 'utf8'), readTrustRoot(options.trustRoot as string));
  }
  if (verdict.ok) {
    reportSuccess(options.json, [`OK: ${verdict.message}`], { code: null, message: verdict.message });
    return Exit.ok;
  }
  // `code` and `message` stay beside `error` for scripts written against the older shape (examples/curl-agent.sh).
  const code = verdict.code ?? ReasonCode.INTEGRITY_FAILURE;
  return reportFailure(options.json, [`FAIL: ${code}: ${verdict.message}`], new LedgerError(code, verdict.message), { code, message: verdict.message });
}
