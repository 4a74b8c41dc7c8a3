/**
 * Versions of the gate's rules (classifier tables, precedence, thresholds).
 * A classification and a decision name the version that made them
 * (`rulesVersion`; absent on statements written before versions existed,
 * which means 1). The project keeps every released version: `verify-chain`
 * replays each decision with the version it names, so tuning a weight or
 * adding a rule is a new version and never makes an old bundle fail.
 *
 * Version 2 reads commands, paths and tools by meaning (command-rules.ts);
 * the rulebook's version 2 also blocks a proposal whose key is revoked.
 * Version 3 is version 2 with the working directory tracked across `cd`,
 * fewer false alarms on everyday commands (`history`, `cat /etc/passwd`, an
 * API token in an Authorization header, `npm publish --dry-run`, reading a
 * certificate) and more paths and programs read (agent hook settings, more
 * shell startup files, browser stores read by sqlite3, `gh gist create`,
 * pushes to a remote added in the same command, recursive re-permissioning
 * of /, timestamp forgery, glob-named programs, deleting `.git`).
 * Version 4 is version 3 with wider reading of options and wrappers: the
 * tty flag of `docker run -it`, options after an rclone destination,
 * escape fields of a pod spec given to `kubectl run --overrides`/`patch`,
 * package uploads by every registry client (twine, gem, poetry, ...),
 * connection-string variables (DATABASE_URL, *_DSN), a decoded value used
 * as an argument, code that evaluates what it downloads (PowerShell IEX),
 * crypto miners, payment providers' CLIs, and an MCP tool named after a
 * program given its argv as an array.
 */
export const RULES_VERSIONS = [1, 2, 3, 4] as const;

/** One released rules version. */
export type RulesVersion = (typeof RULES_VERSIONS)[number];

/** The version new decisions are made with. */
export const LATEST_RULES_VERSION: RulesVersion = 4;

/** True when `value` names a released rules version. */
export function isRulesVersion(value: unknown): value is RulesVersion {
  return typeof value === 'number' && (RULES_VERSIONS as readonly number[]).includes(value);
}
