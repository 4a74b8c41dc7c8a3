import { BoundedCache } from './bounded-cache.js';
import { analysis } from './analysis-version.js';
import { R, type Findings } from './findings.js';
import { canonicalToolName } from './tool-registry.js';
import { destroysData } from './rules-v12.js';
import { turnsProtectionOff } from './rules-v9.js';

/**
 * Rules version 5: statements that change every row. An UPDATE or DELETE
 * without a WHERE clause, or with one that holds for every row (`WHERE 1=1`,
 * `WHERE true`), and a document store's `updateMany({})`. Read in the
 * statements of database tools and of database clients run from a shell
 * (`psql -c`, here-documents fed to `mysql`). Version 1's SQL pattern rules
 * (drop, truncate, `DELETE FROM t;`) stay as they are beside it.
 */

/** `UPDATE [ONLY] table [alias] SET` or `DELETE FROM table`, at the start of a statement (after a CTE's parenthesis too). */
const CHANGES_ROWS = /(?:^|[\s(;"'`])(?:update\s+(?:only\s+)?[^\s;]+(?:\s+(?:as\s+)?[a-z_][\w]*)?\s+set\s|delete\s+from\s+[^\s;]+)/i;
/** A WHERE clause that restricts nothing: `1=1`, `true`, `'a'='a'`, `1`, `0=0`, `id=id`. */
const ALWAYS_TRUE = /\bwhere\s+(?:(\d+)\s*=\s*\1|true|1|not\s+false|'([^']*)'\s*=\s*'\2'|([a-z_][\w.]*)\s*=\s*\3)\s*(?:;|$|\)|"|\b(?:returning|limit|order)\b)/i;
const WHERE = /\bwhere\b/i;
/** Document stores: an update or delete of every document (`updateMany({}, ...)`, `deleteMany({})`, `remove({})`). */
const EVERY_DOCUMENT = /\b(?:updatemany|deletemany|remove|update)\(\s*\{\s*\}\s*[,)]/i;

/** True when one statement changes rows without restricting them. */
function unbounded(statement: string): boolean {
  if (!CHANGES_ROWS.test(statement)) return false;
  return !WHERE.test(statement) || ALWAYS_TRUE.test(statement);
}

/** True when `text` (one or more statements) changes every row of a table or every document of a collection. */
function changesEveryRow(text: string): boolean {
  const bounded = text.length > 65_536 ? text.slice(0, 65_536) : text;
  if (EVERY_DOCUMENT.test(bounded)) return true;
  // Statements end at `;`; a statement's WHERE must be its own.
  let start = 0;
  for (let count = 0; start <= bounded.length && count < 256; count++) {
    const end = bounded.indexOf(';', start);
    if (unbounded(bounded.slice(start, end === -1 ? bounded.length : end + 1))) return true;
    if (end === -1) return false;
    start = end + 1;
  }
  return false;
}
/** Statements repeat call after call (a tool's fixed queries): each text is read once (bounded). */
const statementMemo = new BoundedCache<boolean>(16_384, 4096);

/**
 * Version 6: statements that run a program. PostgreSQL's `COPY ... TO/FROM
 * PROGRAM`, SQL Server's `xp_cmdshell`, MySQL's `sys_exec`/`sys_eval` UDFs,
 * functions in an untrusted procedural language (plpython3u, plperlu,
 * pltclu, C), and the shell escapes of the clients themselves (psql and
 * mysql `\! cmd`, mysql `system cmd`, sqlite `.shell`/`.system`).
 */
const RUNS_PROGRAM = /\b(?:to|from)\s+program\b|\bxp_cmdshell\b|\bsys_(?:exec|eval|bineval)\s*\(|\blanguage\s+['"]?(?:plpython[23]?u|plperlu|pltclu|plsh|c)\b|(?:^|[\n;])\s*(?:\\!|system\s(?!\s*(?:reload|flush|drop|start|stop|sync|restart|kill|enable|disable|wait|unfreeze|shutdown|freeze)\b)|\.(?:shell|system)\s)|(?:^|\s)\.(?:shell|system)\s/i;
/** The program texts of a statement, as far as they are literals (`PROGRAM 'curl ... | sh'`, `xp_cmdshell 'whoami'`, `\\! cmd`). */
const PROGRAM_TEXT = /\bprogram\s+[eE]?'((?:[^']|'')*)'|\bprogram\s+"([^"]*)"|\bxp_cmdshell\s*\(?\s*N?'((?:[^']|'')*)'|\bsys_(?:exec|eval)\s*\(\s*'((?:[^']|'')*)'|(?:^|[\n;])\s*(?:\\!|system\s(?!\s*(?:reload|flush|drop|start|stop|sync|restart|kill|enable|disable|wait|unfreeze|shutdown|freeze)\b)|\.(?:shell|system)\s)([^\n;]*)|(?:^|\s)\.(?:shell|system)\s([^\n;]*)/gi;
/**
 * Version 6: statements that grant privileges: GRANT ... TO, CREATE or ALTER
 * of a user, role or login, role membership (ALTER ROLE ... ADD MEMBER,
 * sp_addrolemember, sp_addsrvrolemember), and a row change that sets a role,
 * an admin flag or a permission (`UPDATE users SET role = 'admin'`, an
 * INSERT into a roles or permissions table).
 */
const GRANTS_PRIVILEGE = /(?:^|[;(\n])\s*(?:grant\s[^;]{1,512}?\bto\s|(?:create|alter)\s+(?:user|role|login)\s|alter\s+(?:server\s+)?role\s+\S+\s+add\s+member\b)|\bsp_add(?:srv)?rolemember\b|\bupdate\s+[^;]{1,256}?\bset\s+(?:(?!\bwhere\b)[^;]){0,512}?\b(?:roles?|user_role|user_type|account_type|is_admin|admin|is_superuser|superuser|is_staff|permissions?|privileges?|access_level|acl|scopes?)\s*=|\binsert\s+into\s+[`"[]?[\w.]*(?:role|admin|permission|privilege|membership)[\w]*/i;

/** What version 6 reads in statements: bits (1 runs a program, 2 grants privileges) and the program texts. */
interface StatementFacts {
  readonly bits: number;
  readonly programs: readonly string[];
}
const NO_PROGRAMS: readonly string[] = Object.freeze([]);
const PLAIN_STATEMENT: StatementFacts = Object.freeze({ bits: 0, programs: NO_PROGRAMS });

function statementFacts(text: string): StatementFacts {
  const bounded = text.length > 65_536 ? text.slice(0, 65_536) : text;
  const bits = (RUNS_PROGRAM.test(bounded) ? 1 : 0) | (GRANTS_PRIVILEGE.test(bounded) ? 2 : 0);
  if (bits === 0) return PLAIN_STATEMENT;
  const programs: string[] = [];
  if ((bits & 1) !== 0) {
    PROGRAM_TEXT.lastIndex = 0;
    for (let m = PROGRAM_TEXT.exec(bounded); m !== null && programs.length < 16; m = PROGRAM_TEXT.exec(bounded)) {
      const quoted = m[1] ?? m[3] ?? m[4];
      const program = quoted !== undefined ? quoted.replace(/''/g, "'") : (m[2] ?? m[5] ?? m[6] ?? '');
      if (program.trim() !== '') programs.push(program);
    }
  }
  return Object.freeze({ bits, programs: Object.freeze(programs) });
}
/** Version 6's facts by statement text (bounded; a separate memo: version 5's answers are not these). */
const statementFactsMemo = new BoundedCache<StatementFacts>(16_384, 4096);

/**
 * Reads statements: `destructive.sql_unbounded` when `text` (one or more
 * statements) changes every row of a table; from version 6 also
 * `execution.database_program` (and the findings of the program it runs,
 * read by `runShell`) and `privilege.database_grant`.
 */
export function sqlFindings(findings: Findings, text: string, runShell?: (command: string) => readonly number[]): void {
  if (text.length === 0) return;
  if (statementMemo.get(text, changesEveryRow)) findings.add(R.sqlUnbounded);
  // Version 9: a statement that turns a protection off (triggers, row level security, replication role, policies, BYPASSRLS).
  if (analysis.v9 && turnsProtectionOff(text)) findings.add(R.databaseProtection);
  // Version 12: columns dropped, every row deleted by a mutation, history vacuumed away, schemas dropped.
  if (analysis.v12 && destroysData(text)) findings.add(R.database);
  if (!analysis.v6) return;
  const facts = statementFactsMemo.get(text, statementFacts);
  if (facts.bits === 0) return;
  if ((facts.bits & 2) !== 0) findings.add(R.databaseGrant);
  if ((facts.bits & 1) !== 0) {
    findings.add(R.databaseProgram);
    if (runShell !== undefined) for (let i = 0; i < facts.programs.length; i++) findings.addAll(runShell(facts.programs[i] as string));
  }
}

/** Argument names that hold statements. */
const STATEMENT_KEY = /^(?:query|queries|sql|statement|statements|stmt|command|commands|q|script|cypher|aql|filter|update)$/i;

/** Nodes {@link sqlArgumentFindings} may still visit (synchronous, never re-entered). */
let statementBudget = 0;

/** The shell reading of programs that statements run (version 6; set by sqlArgumentFindings for its walk). */
let statementShell: ((command: string) => readonly number[]) | undefined;

function visitStatements(findings: Findings, value: unknown, key: string, depth: number): void {
  if (depth > 8 || --statementBudget < 0) return;
  if (typeof value === 'string') {
    if (STATEMENT_KEY.test(key)) sqlFindings(findings, value, statementShell);
  } else if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) visitStatements(findings, value[i], key, depth + 1);
  } else if (typeof value === 'object' && value !== null) {
    for (const name in value) if (Object.hasOwn(value, name)) visitStatements(findings, (value as Record<string, unknown>)[name], name, depth + 1);
  }
}

/**
 * Reads the statements of a database tool's arguments (strings under
 * statement names, at any depth; bounded walk). `runShell`: the reading of a
 * program a statement runs (version 6).
 */
export function sqlArgumentFindings(findings: Findings, args: unknown, runShell?: (command: string) => readonly number[]): void {
  statementBudget = 256;
  statementShell = runShell;
  visitStatements(findings, args, 'query', 0);
  statementShell = undefined;
}

/** Tool names (server and tool part) that name a database: `mcp__mysql__execute` runs statements though its tool part says "execute". */
const DATABASE_TOOL = /(?:^|__|[._/:-])(?:postgres|postgresql|pg|mysql|mariadb|sqlite|mssql|sqlserver|oracle|db|database|supabase|neon|planetscale|cockroach|cockroachdb|bigquery|snowflake|redshift|clickhouse|duckdb|mongo|mongodb|dynamodb|firestore|sql)(?:__|[._/:-]|$)/i;

/** True when a tool's whole name names a database (read once per tool name: proposal-views.ts keeps it in the tool's view). */
export function namesDatabase(tool: string): boolean {
  return DATABASE_TOOL.test(tool);
}

/** A document store's tool that changes documents (`update_many`, `delete_many`, `remove`). */
const CHANGING_TOOL = /(?:^|_)(?:update|delete|remove|replace)(?:_many|_all|_documents|_items|_rows)?$/;
const FILTER_KEY = /^(?:filter|query|where|selector|condition|match)$/i;

/** True when a tool's name (its tool part) says it changes documents (read once per tool name: proposal-views.ts keeps it in the tool's view). */
export function changesDocuments(tool: string): boolean {
  return CHANGING_TOOL.test(canonicalToolName(tool));
}

/** Adds `destructive.sql_unbounded` when a database tool that changes documents (`changing`: {@link changesDocuments}) is given an empty filter (`{"filter": {}}`). */
export function structuredUnboundedFindings(findings: Findings, changing: boolean, args: unknown): void {
  if (!changing || typeof args !== 'object' || args === null || Array.isArray(args)) return;
  for (const key in args) {
    if (!Object.hasOwn(args, key) || !FILTER_KEY.test(key)) continue;
    const filter = (args as Record<string, unknown>)[key];
    const empty = (typeof filter === 'object' && filter !== null && !Array.isArray(filter) && Object.keys(filter).length === 0) || (typeof filter === 'string' && /^\s*(?:\{\s*\}|\*|)\s*$/.test(filter));
    if (empty) findings.add(R.sqlUnbounded);
  }
}
