import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { OperationalCode, OperationalError } from '@agent-ledger/refusals';
import { parseStrictJson } from '@agent-ledger/core';

/** Marks the hook entries this project writes, so setup replaces its own and leaves others alone. */
export const HOOK_MARK = ' hook claude-code ';

/** One command hook in Claude Code's settings (`hooks.PreToolUse[].hooks[]`). */
interface CommandHook {
  type: 'command';
  command: string;
  timeout?: number;
}

type Settings = Record<string, unknown> & { hooks?: Record<string, unknown> };

/** Shell-quotes a word for the command line Claude Code runs with the shell. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

function readSettings(path: string): Settings {
  if (!existsSync(path)) return {};
  let value: unknown;
  try {
    value = parseStrictJson(readFileSync(path, 'utf8'));
  } catch (err) {
    // Never overwrite settings we cannot read: the user's other settings would be lost.
    throw new OperationalError(OperationalCode.BAD_CONFIGURATION, `${path} is not JSON (${(err as Error).message}); fix or move it, then run setup again`, { cause: err });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new OperationalError(OperationalCode.BAD_CONFIGURATION, `${path} is not a JSON object`);
  const settings = value as Settings;
  if (settings.hooks !== undefined && (typeof settings.hooks !== 'object' || settings.hooks === null || Array.isArray(settings.hooks))) {
    throw new OperationalError(OperationalCode.BAD_CONFIGURATION, `${path}: "hooks" is not an object`);
  }
  if (settings.hooks?.PreToolUse !== undefined && !Array.isArray(settings.hooks.PreToolUse)) {
    throw new OperationalError(OperationalCode.BAD_CONFIGURATION, `${path}: "hooks.PreToolUse" is not an array`);
  }
  return settings;
}

/**
 * Puts the ledger's PreToolUse hook into a Claude Code settings file
 * (`.claude/settings.json`), for every tool (`matcher: "*"`), keeping every
 * other setting and hook: an earlier ledger hook entry is replaced, not
 * duplicated. Written to a temporary file and renamed, so a crash leaves the
 * old file whole.
 * @returns the settings as written
 */
export function installPreToolUseHook(path: string, command: string, timeoutSeconds: number): Settings {
  const settings = readSettings(path);
  const hooks: Record<string, unknown> = { ...(settings.hooks ?? {}) };
  const groups = ((hooks.PreToolUse as unknown[] | undefined) ?? []).flatMap((group): unknown[] => {
    if (typeof group !== 'object' || group === null) return [group];
    const entries = (group as { hooks?: unknown }).hooks;
    if (!Array.isArray(entries)) return [group];
    const kept = entries.filter((h) => !(typeof (h as CommandHook | null)?.command === 'string' && ` ${(h as CommandHook).command} `.includes(HOOK_MARK)));
    if (kept.length === entries.length) return [group];
    return kept.length === 0 ? [] : [{ ...(group as object), hooks: kept }];
  });
  const ours: CommandHook = { type: 'command', command, timeout: timeoutSeconds };
  // First, so a deny is reached before other hooks' allows matter (Claude Code: deny wins over allow in any case).
  hooks.PreToolUse = [{ matcher: '*', hooks: [ours] }, ...groups];
  const next: Settings = { ...settings, hooks };
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(next, null, 2)}\n`);
  renameSync(temporary, path);
  return next;
}
