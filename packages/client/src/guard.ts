import { OperationalCode, OperationalError, parseRefusal } from '@agent-ledger/refusals';
import type { CheckedDecision, LedgerClient, ProposalInput } from './client.js';
import { ToolRefusedError } from './refused.js';

/** The parts of a proposal a guarded call names; the rest take defaults. */
export type OperationInput = Pick<ProposalInput, 'tool' | 'actionType' | 'targetResource'> & Partial<Omit<ProposalInput, 'tool' | 'actionType' | 'targetResource'>>;

/** Options of {@link guard}. */
export interface GuardOptions<A extends unknown[]> {
  /** The agent's client, with a pinned trust document. */
  readonly client: LedgerClient;
  /**
   * The operation one call performs, from its arguments: what the gate
   * judges and a grant must match. `args` defaults to `{ args: [...] }`,
   * `recipient` to `none`, `scope` to `workspace`, `query` to the tool name,
   * `channel` to `api`.
   */
  readonly describe: (...args: A) => OperationInput;
  /** Longest wait for the decision (a human's answer under verify_first included), default 60 s. */
  readonly timeoutMs?: number;
  /** Oldest decision accepted (default: the ledger's freshness window). */
  readonly maxAgeMs?: number;
  /** Told about each verified decision before the tool runs (or the refusal is thrown). */
  readonly onDecision?: (decision: CheckedDecision) => void;
}

/** A proposal body from a described operation and the call's arguments. */
function proposalOf(operation: OperationInput, args: readonly unknown[]): ProposalInput {
  return {
    recipient: 'none',
    scope: 'workspace',
    query: operation.tool,
    labels: [],
    channel: 'api',
    context: {},
    ...operation,
    args: operation.args ?? { args: JSON.parse(JSON.stringify(args ?? [])) as unknown[] },
  };
}

/**
 * Wraps an async tool so that each call is proposed to the ledger first:
 * it signs the proposal, waits for the final decision (under verify_first,
 * for the human's answer or the deadline), verifies the decision's receipt
 * offline against the pinned trust, and only on a verified `allow` runs the
 * tool and returns its result. Anything else throws a
 * {@link ToolRefusedError} (code, detail, log position) and the tool never
 * runs: a block or deny by the gate, a receipt that does not verify (then
 * recorded on the log as `execution.refused`). An unreachable ledger throws
 * an OperationalError: the tool does not run either (fail closed).
 */
export function guard<A extends unknown[], R>(tool: (...args: A) => Promise<R>, options: GuardOptions<A>): (...args: A) => Promise<R> {
  if (options.client.trust === undefined) {
    throw new OperationalError(OperationalCode.BAD_CONFIGURATION, 'guard() verifies receipts: give the client a pinned trust document (loadTrust / fetchTrust)');
  }
  return async (...args: A): Promise<R> => {
    const proposal = proposalOf(options.describe(...args), args);
    const decision = await options.client.decide(proposal, { ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }), ...(options.maxAgeMs === undefined ? {} : { maxAgeMs: options.maxAgeMs }) });
    options.onDecision?.(decision);
    if (decision.outcome !== 'allow') {
      const code = decision.code;
      // A final decision other than allow always names its code (rule of the gate); one that does not is refused all the same.
      const detail = (decision.refusal === null ? null : parseRefusal(decision.refusal)?.detail) ?? `${decision.outcome} by the gate`;
      throw new ToolRefusedError({ code: code ?? 'POLICY_VIOLATION', detail, proposal: decision.proposal, by: 'gate', position: decision.position, record: null });
    }
    return tool(...args);
  };
}
