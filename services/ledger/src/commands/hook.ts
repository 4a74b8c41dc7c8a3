import { LedgerError, OperationalCode, OperationalError, formatRefusal } from '@agent-ledger/refusals';
import { MAX_HOOK_INPUT_BYTES, parsePreToolUse, preToolUseOutput, toolCallOf } from '../hook/claude-code.js';
import { executorClient, readExecutorConfig } from '../hook/config.js';
import { Permission, judgeToolCall, type Verdict } from '../hook/executor.js';
import { flushSpool, spoolFailOpen } from '../hook/spool.js';

/** Reads stdin to its end, at most `limit` bytes. */
async function readStdin(limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > limit) throw new OperationalError(OperationalCode.BAD_ARGUMENT, `the hook input is larger than ${limit} bytes`);
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function denial(err: unknown): Pick<Verdict, 'permission' | 'reason'> {
  if (err instanceof LedgerError) return { permission: Permission.deny, reason: formatRefusal(err.code, err.message) };
  if (err instanceof OperationalError) return { permission: Permission.deny, reason: `${err.code}: ${err.message}; failing closed: the call does not run` };
  return { permission: Permission.deny, reason: `${OperationalCode.INTERNAL}: ${(err as Error).message ?? String(err)}; failing closed: the call does not run` };
}

/**
 * `ledger hook claude-code --config FILE`: Claude Code's PreToolUse hook. Reads
 * the event on stdin, signs a proposal for the exact tool call with the
 * agent's key, waits for the signed decision within the configured budget
 * (a `verify_first` waits for the human), and prints Claude Code's answer:
 * `hookSpecificOutput.permissionDecision` `allow`, `deny` (the reason is the
 * refusal text with its code, and the decision's log position) or, in fail mode `ask`,
 * `ask`. Always exits 0 with that JSON: any failure of its own (bad input, bad
 * configuration, the ledger unreachable under fail mode `closed`, no decision
 * in time, a decision or receipt that does not verify) is a deny. Only when it
 * cannot even write its answer does it exit 2, which Claude Code also reads
 * as a block.
 */
export async function hookClaudeCodeCommand(options: { readonly config: string }): Promise<number> {
  let answer: Pick<Verdict, 'permission' | 'reason'>;
  try {
    const config = readExecutorConfig(options.config);
    const input = parsePreToolUse(await readStdin(MAX_HOOK_INPUT_BYTES));
    const call = toolCallOf(input);
    const client = executorClient(config);
    const spool = `${options.config}.spool.ndjson`;
    // Calls a fail-open mode let run while the ledger was away go on the log first.
    await flushSpool(spool, client);
    // The budget counts from the process start: Claude Code's timeout does.
    const budgetMs = Math.max(1000, config.budgetMs - Math.round(process.uptime() * 1000));
    const verdict = await judgeToolCall(call, { client, failMode: config.failMode, budgetMs });
    if (verdict.failedOpen) spoolFailOpen(spool, call, config.failMode, verdict.reason);
    answer = verdict;
  } catch (err) {
    answer = denial(err);
  }
  try {
    process.stdout.write(`${JSON.stringify(preToolUseOutput(answer))}\n`);
    return 0;
  } catch (err) {
    process.stderr.write(`${denial(err).reason}\n`);
    return 2;
  }
}
