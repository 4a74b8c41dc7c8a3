import { hookClaudeCodeCommand } from '../commands/hook.js';

/**
 * The hook's fast start: Claude Code runs `ledger hook claude-code --config
 * FILE` before every tool call, so `bin/ledger.js` loads this module alone
 * (not the whole CLI) when the arguments are exactly that. Any other shape
 * (`--help`, a typo) goes through the full CLI and its usage errors.
 * @returns true when it handled the arguments
 */
export async function runHookFast(argv: readonly string[]): Promise<boolean> {
  if (argv.length !== 4 || argv[0] !== 'hook' || argv[1] !== 'claude-code' || argv[2] !== '--config' || argv[3] === undefined) return false;
  process.exitCode = await hookClaudeCodeCommand({ config: argv[3] });
  return true;
}
