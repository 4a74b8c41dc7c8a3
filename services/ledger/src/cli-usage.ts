import { readFileSync } from 'node:fs';
import type { Command } from 'commander';

/** The version of the ledger package (services/ledger/package.json). */
export function cliVersion(): string {
  // dist/src/cli-usage.js -> services/ledger/package.json
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
  return typeof manifest.version === 'string' ? manifest.version : '0.0.0';
}

/** `ledger grant propose`: the command's full name from the program down. */
function fullName(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c !== null; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/**
 * Usage errors of every command: one typed line (`ledger: BAD_ARGUMENT: ...`),
 * then that command's usage line and where its help is, never the whole help
 * and never a stack trace (exit 2).
 */
export function configureUsageErrors(root: Command): void {
  const visit = (command: Command): void => {
    const name = fullName(command);
    command
      .configureOutput({
        outputError: (text, write) => {
          write(`ledger: BAD_ARGUMENT: ${text.replace(/^error: /, '').trimEnd()}\n`);
          write(`usage: ${name} ${command.usage()}\n`);
          write(`hint: run '${name} --help' for the options\n`);
        },
      })
      .showHelpAfterError(false);
    for (const sub of command.commands) visit(sub);
  };
  visit(root);
}
