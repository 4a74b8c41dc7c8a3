import { LedgerError, OperationalCode, OperationalError, ReasonCode, formatRefusal } from '@agent-ledger/refusals';
import { ToolRefusedError, type LedgerClient } from '@agent-ledger/client';
import { FailMode, proposalFor, type ToolCall } from './tool-call.js';

/** What the executor does with a call: run it, refuse it, or leave it to the user (fail mode `ask` only). */
export const Permission = { allow: 'allow', deny: 'deny', ask: 'ask' } as const;
/** One of {@link Permission}. */
export type Permission = (typeof Permission)[keyof typeof Permission];

/** A decision's place on the log. */
export interface LogPosition {
  readonly partition: number;
  readonly index: number;
}

/** The executor's answer for one tool call. */
export interface Verdict {
  readonly permission: Permission;
  /** For a refusal its formatRefusal text; for an outage `CODE: detail`; for an allow a short note. */
  readonly reason: string;
  /** The refusal or operational code, null on allow. */
  readonly code: ReasonCode | OperationalCode | null;
  /** The signed proposal's statement hash, once it was accepted. */
  readonly proposal: string | null;
  /** Where the decision is on the log, when one was received. */
  readonly decision: LogPosition | null;
  /** True when the ledger could not be reached and the fail mode let the call run or go to the user. */
  readonly failedOpen: boolean;
}

/** Options of {@link judgeToolCall}. */
export interface ExecutorOptions {
  /** The agent's SDK client: its signer is the agent key, and it pins the ledger's trust document (receipts are verified against it). */
  readonly client: LedgerClient;
  /** What to do when the ledger cannot be reached (default closed). */
  readonly failMode?: FailMode;
  /** The whole time the executor may take to answer, in ms: a call with no signed decision by then is refused. */
  readonly budgetMs: number;
  /** Called with the signed proposal's hash as soon as the API accepted it. */
  readonly onProposed?: (proposalHash: string) => void;
}

function where(position: LogPosition): string {
  return `decision at partition ${position.partition}, index ${position.index}`;
}

function refused(code: ReasonCode, detail: string, proposal: string | null, decision: LogPosition | null): Verdict {
  return { permission: Permission.deny, reason: formatRefusal(code, detail), code, proposal, decision, failedOpen: false };
}

function operational(err: OperationalError, detail: string, proposal: string | null): Verdict {
  return { permission: Permission.deny, reason: `${err.code}: ${detail}`, code: err.code, proposal, decision: null, failedOpen: false };
}

/** An outage before the proposal was accepted: the fail mode decides, and says so. */
function outage(err: OperationalError, failMode: FailMode): Verdict {
  const what = `the ledger could not be reached (${err.message})`;
  if (failMode === FailMode.closed) return operational(err, `${what}; failing closed: the call does not run`, null);
  const permission = failMode === FailMode.open ? Permission.allow : Permission.ask;
  const then = failMode === FailMode.open ? 'the call runs without a decision' : 'the user decides';
  return { permission, reason: `${err.code}: ${what}; fail mode ${failMode}: ${then} (recorded on the log when it is back)`, code: err.code, proposal: null, decision: null, failedOpen: true };
}

/**
 * Judges one tool call before it runs: signs a proposal with the agent's key,
 * submits it, waits for the signed decision (a `verify_first` waits for the
 * human answer or the timer's signed denial, within `budgetMs`), verifies it
 * (its receipt, offline, against the trust document the client pins) and
 * answers. Every path that is not a verified
 * allow is a deny, except an outage before the proposal was accepted, which
 * the configured fail mode decides. Never throws.
 */
export async function judgeToolCall(call: ToolCall, options: ExecutorOptions): Promise<Verdict> {
  const failMode = options.failMode ?? FailMode.closed;
  const deadline = Date.now() + options.budgetMs;
  let proposal: string | null = null;
  try {
    const body = proposalFor(call, failMode);
    let submitted;
    try {
      submitted = await options.client.propose(body);
    } catch (err) {
      if (err instanceof OperationalError && (err.code === OperationalCode.UNAVAILABLE || err.code === OperationalCode.CLIENT_TIMEOUT || err.code === OperationalCode.INTERNAL)) {
        return outage(err, failMode);
      }
      throw err;
    }
    proposal = submitted.statementHash;
    options.onProposed?.(proposal);
    const remaining = deadline - Date.now();
    if (remaining <= 0) return operational(new OperationalError(OperationalCode.CLIENT_TIMEOUT, 'budget spent'), `no signed decision within ${options.budgetMs} ms; the call does not run`, proposal);
    // The final decision and its receipt, verified offline against the pinned trust (SPEC.md section 10):
    // the log, the signed checkpoint, the inclusion proof, the gate key valid at the entry's authority
    // index, the binding to this proposal, freshness. What does not verify is refused and recorded on
    // the log (`execution.refused`) by the client: a ToolRefusedError below.
    const decision = await options.client.decide({ proposalHash: proposal }, { timeoutMs: remaining });
    const position = decision.position;
    if (decision.outcome === 'allow') {
      return { permission: Permission.allow, reason: `allowed by the ledger (${where(position)})`, code: null, proposal, decision: position, failedOpen: false };
    }
    if (decision.outcome === 'verify_first') {
      // Not a final answer: nothing runs on it.
      return refused(ReasonCode.HUMAN_DENIED, `no human answer yet (${where(position)}); the call does not run`, proposal, position);
    }
    const code = decision.code ?? ReasonCode.POLICY_VIOLATION;
    const text = decision.refusal ?? formatRefusal(code, `${decision.outcome} by the ledger`);
    return { permission: Permission.deny, reason: `${text} (${where(position)})`, code, proposal, decision: position, failedOpen: false };
  } catch (err) {
    if (err instanceof ToolRefusedError) {
      // The executor's own refusal: the decision or its receipt did not verify. The client recorded it on the log.
      const recorded = err.record?.position ? `recorded at partition ${err.record.position.partition}, index ${err.record.position.index}` : 'not yet on the log';
      return refused(err.code, `the decision does not verify: ${err.detail} (refusal ${recorded})`, proposal, err.position);
    }
    if (err instanceof LedgerError) return refused(err.code, err.message, proposal, null);
    if (err instanceof OperationalError) {
      const detail = err.code === OperationalCode.CLIENT_TIMEOUT
        ? `no signed decision within ${options.budgetMs} ms (proposal ${proposal?.slice(0, 16) ?? 'not accepted'}); the call does not run`
        : `${err.message}; the proposal was ${proposal === null ? 'not accepted' : `accepted (${proposal.slice(0, 16)})`}: failing closed, the call does not run`;
      return operational(err, detail, proposal);
    }
    return { permission: Permission.deny, reason: `${OperationalCode.INTERNAL}: ${(err as Error).message ?? String(err)}; failing closed, the call does not run`, code: OperationalCode.INTERNAL, proposal, decision: null, failedOpen: false };
  }
}
