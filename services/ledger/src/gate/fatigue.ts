import { canonicalJson, type BodyOf, type Entry } from '@agent-ledger/core';

/**
 * Settings of the confirmation-fatigue signals. Both signals are derived from
 * the log alone (statement bodies and sequencer times), so an auditor can
 * re-derive them from an exported bundle (SPEC.md section 4, `grant.suggested`
 * and `approval.rushed`).
 */
export interface FatigueSettings {
  /** Approved confirmations of one exact operation after which a grant is suggested (0: never). */
  readonly suggestAfter: number;
  /** Length of the window a suggestion proposes, from the approval that completed it (ms). */
  readonly suggestWindowMs: number;
  /** Minimum reading time of an operation of up to {@link READING_UNIT_BYTES} bytes (ms; 0: no rubber-stamp signal). */
  readonly minReadMs: number;
}

/** Defaults: a suggestion after 3 identical approvals, proposing an 8-hour window; 2 s to read an operation. */
export const DEFAULT_FATIGUE: FatigueSettings = { suggestAfter: 3, suggestWindowMs: 8 * 3_600_000, minReadMs: 2_000 };

/** The minimum reading time grows by one `minReadMs` per this many bytes of the operation. */
export const READING_UNIT_BYTES = 512;
/** The minimum reading time never exceeds this (a tier-4 request has 10 s in all). */
export const MAX_MIN_READ_MS = 10_000;
/** Highest tier a grant is suggested for: the same line as batch approval. */
export const MAX_SUGGESTED_TIER = 2;
/** Most operations, requests and answers the fold remembers (oldest forgotten first). */
const MEMORY = 100_000;

/**
 * Size of what an approver must read: the UTF-8 length of the canonical JSON
 * of the operation as the agent signed it (tool, action, target, recipient,
 * scope, arguments, query).
 */
export function operationBytes(body: BodyOf<'proposal.submitted'>): number {
  const { tool, actionType, targetResource, recipient, scope, args, query } = body;
  return Buffer.byteLength(canonicalJson({ tool, actionType, targetResource, recipient, scope, args, query }), 'utf8');
}

/** `min(MAX_MIN_READ_MS, minReadMs × ceil(bytes / READING_UNIT_BYTES))`, at least one unit. */
export function minimumReadingMs(bytes: number, minReadMs: number): number {
  return Math.min(MAX_MIN_READ_MS, minReadMs * Math.max(1, Math.ceil(bytes / READING_UNIT_BYTES)));
}

/** A statement the gate should sign because of an entry. */
export type FatigueSignal =
  | { readonly type: 'grant.suggested'; readonly body: BodyOf<'grant.suggested'> }
  | { readonly type: 'approval.rushed'; readonly body: BodyOf<'approval.rushed'> };

interface Operation {
  readonly agentId: string;
  readonly key: string;
  readonly fields: Pick<BodyOf<'proposal.submitted'>, 'actionType' | 'targetResource' | 'recipient' | 'scope'>;
  readonly bytes: number;
}

interface OpenRequest {
  readonly hash: string;
  readonly proposal: string;
  readonly tier: number;
  readonly deadlineMs: number;
  readonly sequencedAtMs: number;
}

/** A Map that forgets its oldest key past {@link MEMORY}. */
function remember<K, V>(map: Map<K, V>, key: K, value: V): void {
  map.set(key, value);
  if (map.size > MEMORY) {
    const oldest = map.keys().next();
    if (oldest.done !== true) map.delete(oldest.value);
  }
}

/**
 * Confirmation fatigue as a fold over the events stream. It never changes a
 * decision; it only says which signal statements an entry calls for:
 *
 * - `approval.rushed` for a self-signed or platform `approve` answering an
 *   open request, sequenced less than the operation's minimum reading time
 *   after the later of the request's and the same approver's previous
 *   approval on this partition (so a batch of approvals faster than one can
 *   read is caught even when the requests waited long);
 * - `grant.suggested` for the final `allow` decision that brings the approved
 *   confirmations of one exact operation (agent, action, target, recipient,
 *   scope) at tier <= {@link MAX_SUGGESTED_TIER} to `suggestAfter`, naming
 *   their requests. A request named by a suggestion on the log is never
 *   counted again.
 *
 * Every input is a sequenced entry of one partition (an agent's statements
 * all live in one), and the fold is keyed by statement hashes, so folding an
 * entry twice (a catch-up read followed by a redelivery) returns the same
 * signals instead of new ones: the caller sends each at most once per
 * process, and the Kafka transaction of its output makes that once overall.
 */
export class FatigueFold {
  readonly #settings: FatigueSettings;
  readonly #operations = new Map<string, Operation>();
  /** Open requests by proposal hash. */
  readonly #requests = new Map<string, OpenRequest>();
  /** Per `partition approver`: sequencer time of their latest approval. */
  readonly #lastApproval = new Map<string, number>();
  /** Per operation key: approved, not yet suggested request hashes with their tier. */
  readonly #approved = new Map<string, Map<string, number>>();
  /** Request hashes already named by a suggestion (sent or on the log). */
  readonly #suggested = new Map<string, true>();
  /** Signals computed per entry hash (bounded), returned again when the entry is folded again. */
  readonly #signals = new Map<string, FatigueSignal[]>();
  readonly #folded = new Map<string, true>();

  constructor(settings: Partial<FatigueSettings> = {}) {
    this.#settings = { ...DEFAULT_FATIGUE, ...settings };
  }

  /** Folds a sequenced events-stream entry; returns the signals it calls for (the same ones again if it was folded before). */
  evolve(entry: Entry, hash: string): readonly FatigueSignal[] {
    if (this.#folded.has(hash)) return this.#signals.get(hash) ?? [];
    remember(this.#folded, hash, true);
    const signals = this.#fold(entry, hash);
    if (signals.length > 0) remember(this.#signals, hash, signals);
    return signals;
  }

  #fold(entry: Entry, hash: string): FatigueSignal[] {
    const statement = entry.envelope.statement;
    const at = Date.parse(entry.sequencedAt);
    switch (statement.type) {
      case 'proposal.submitted': {
        const body = statement.body as BodyOf<'proposal.submitted'>;
        const fields = { actionType: body.actionType, targetResource: body.targetResource, recipient: body.recipient, scope: body.scope };
        remember(this.#operations, hash, { agentId: body.agentId, key: canonicalJson({ agentId: body.agentId, ...fields }), fields, bytes: operationBytes(body) });
        return [];
      }
      case 'confirmation.requested': {
        const body = statement.body as BodyOf<'confirmation.requested'>;
        if (!this.#operations.has(body.proposal) || this.#requests.has(body.proposal)) return [];
        remember(this.#requests, body.proposal, { hash, proposal: body.proposal, tier: body.tier, deadlineMs: Date.parse(body.deadline), sequencedAtMs: at });
        return [];
      }
      case 'human.response':
        return this.#response(entry, hash, statement.body as BodyOf<'human.response'>, at);
      case 'decision.recorded':
        return this.#decision(statement.body as BodyOf<'decision.recorded'>, at);
      case 'grant.suggested': {
        for (const request of (statement.body as BodyOf<'grant.suggested'>).requests) {
          remember(this.#suggested, request, true);
          for (const approved of this.#approved.values()) approved.delete(request);
        }
        return [];
      }
      default:
        return [];
    }
  }

  #response(entry: Entry, hash: string, body: BodyOf<'human.response'>, at: number): FatigueSignal[] {
    if (body.answer !== 'approve' || this.#settings.minReadMs <= 0) return [];
    const request = this.#requests.get(body.proposal);
    const operation = this.#operations.get(body.proposal);
    if (request === undefined || operation === undefined || request.hash !== body.request || at > request.deadlineMs) return [];
    const approver = entry.envelope.statement.author.principal;
    const key = `${entry.partition} ${approver}`;
    const since = Math.max(request.sequencedAtMs, this.#lastApproval.get(key) ?? 0);
    remember(this.#lastApproval, key, Math.max(at, this.#lastApproval.get(key) ?? 0));
    const elapsedMs = Math.max(0, at - since);
    const minReadMs = minimumReadingMs(operation.bytes, this.#settings.minReadMs);
    if (elapsedMs >= minReadMs) return [];
    return [{ type: 'approval.rushed', body: { agentId: operation.agentId, proposal: body.proposal, request: request.hash, response: hash, approver, elapsedMs, minReadMs, operationBytes: operation.bytes } }];
  }

  #decision(body: BodyOf<'decision.recorded'>, at: number): FatigueSignal[] {
    if (body.outcome === 'verify_first') return [];
    const request = this.#requests.get(body.proposal);
    const operation = this.#operations.get(body.proposal);
    this.#requests.delete(body.proposal);
    this.#operations.delete(body.proposal);
    // Only a final allow after a confirmation is a human approval; a first allow (rules or a grant) is not.
    if (request === undefined || operation === undefined || body.outcome !== 'allow') return [];
    if (this.#settings.suggestAfter <= 0 || request.tier > MAX_SUGGESTED_TIER || this.#suggested.has(request.hash)) return [];
    let approved = this.#approved.get(operation.key);
    if (approved === undefined) {
      approved = new Map();
      remember(this.#approved, operation.key, approved);
    }
    approved.set(request.hash, request.tier);
    if (approved.size < this.#settings.suggestAfter) return [];
    const requests = [...approved.keys()].slice(0, 64);
    const tier = Math.max(...approved.values());
    for (const r of requests) remember(this.#suggested, r, true);
    this.#approved.delete(operation.key);
    return [{
      type: 'grant.suggested',
      body: { agentId: operation.agentId, ...operation.fields, tier, requests, notBefore: new Date(at).toISOString(), expiresAt: new Date(at + this.#settings.suggestWindowMs).toISOString() },
    }];
  }
}

/**
 * Fatigue settings from the environment: LEDGER_SUGGEST_AFTER (approvals,
 * 0 disables suggestions), LEDGER_SUGGEST_WINDOW_MS and LEDGER_MIN_READ_MS
 * (0 disables the rubber-stamp signal). Unset values keep the defaults.
 */
export function fatigueSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): Partial<FatigueSettings> {
  const settings: { suggestAfter?: number; suggestWindowMs?: number; minReadMs?: number } = {};
  const read = (name: string, max: number): number | undefined => {
    const text = env[name];
    if (text === undefined || text === '') return undefined;
    if (!/^\d{1,10}$/.test(text) || Number(text) > max) throw new Error(`${name}: expected a whole number up to ${max}, not ${text}`);
    return Number(text);
  };
  const suggestAfter = read('LEDGER_SUGGEST_AFTER', 64);
  const suggestWindowMs = read('LEDGER_SUGGEST_WINDOW_MS', 30 * 86_400_000);
  const minReadMs = read('LEDGER_MIN_READ_MS', MAX_MIN_READ_MS);
  if (suggestAfter !== undefined) settings.suggestAfter = suggestAfter;
  if (suggestWindowMs !== undefined) settings.suggestWindowMs = suggestWindowMs;
  if (minReadMs !== undefined) settings.minReadMs = minReadMs;
  return settings;
}
