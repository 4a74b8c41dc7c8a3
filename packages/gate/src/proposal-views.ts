import { BoundedCache } from './bounded-cache.js';
import { FactBit, Field, WORD_FORM, matchMask } from './field-matchers.js';
import { normalizeText, wordForm } from './normalize.js';

/**
 * Limits on what the gate reads of a proposal's arguments (untrusted input).
 * Past them the rest is not read and `uninspectable` is set, which raises the
 * tier (pattern.uninspectable_input): what the gate cannot read, a human must.
 * 8 KiB also bounds the work of the pattern rules on hostile text.
 */
export const ARGS_LIMITS = Object.freeze({ maxDepth: 8, maxNodes: 1024, maxScanChars: 8192 });

/**
 * Argument names whose values are the command itself, read first and joined
 * by spaces (`{command: "rm", args: ["-rf", "/"]}` reads `rm -rf /`); other
 * members follow after ` ; `, a command separator, so they cannot complete a
 * pattern begun in the command.
 */
const COMMAND_KEYS: readonly string[] = ['command', 'cmd', 'program', 'executable', 'script', 'code', 'source', 'sql', 'statement', 'query', 'argv', 'args', 'arguments', 'input', 'stdin'];
const COMMAND_SLOT: ReadonlyMap<string, number> = new Map(COMMAND_KEYS.map((name, slot) => [name, slot]));
/** Values of the command keys of the object being read, by slot (reused; emptied after each read). */
const commandScratch: string[] = COMMAND_KEYS.map(() => '');

/** Tools whose arguments are a command to run (canonical names: word form, words joined by `_`). */
const EXEC_TOOLS: ReadonlySet<string> = new Set([
  'shell', 'bash', 'sh', 'zsh', 'fish', 'ksh', 'dash', 'terminal', 'console', 'exec', 'execute', 'run', 'run_command', 'run_shell',
  'shell_exec', 'execute_command', 'command', 'cmd', 'subprocess', 'process', 'spawn', 'ssh', 'powershell', 'pwsh', 'python', 'python3',
  'node', 'nodejs', 'deno', 'bun', 'ruby', 'perl', 'php', 'code', 'code_interpreter', 'repl', 'eval', 'script', 'computer', 'docker_exec',
  'kubectl_exec', 'container_exec', 'bash_tool', 'shell_tool', 'terminal_tool',
]);
/** Tools whose arguments are database statements. */
const SQL_TOOLS: ReadonlySet<string> = new Set([
  'sql', 'db', 'database', 'postgres', 'postgresql', 'psql', 'pg', 'mysql', 'mariadb', 'sqlite', 'sqlite3', 'mssql', 'sqlserver', 'oracle',
  'bigquery', 'snowflake', 'redshift', 'clickhouse', 'duckdb', 'mongo', 'mongodb', 'mongosh', 'redis', 'cassandra', 'cql', 'query',
  'sql_query', 'run_sql', 'execute_sql', 'db_query', 'database_query',
]);

/** Principal mentions of an agent: `agent:<name>`, `agent://<name>` (read in targets). */
const AGENT_PRINCIPAL = /(?:^|[^a-z0-9._@-])agent:(?:\/\/)?([a-z0-9][a-z0-9._@-]{0,127})/g;
/** Workspace paths and URIs: `workspace://<name>`, `workspaces/<name>`, `agents/<name>` (read in targets, commands, arguments). */
const AGENT_PATH = /(?:^|[^a-z0-9._-])(?:workspace:\/\/|(?:workspaces|agents)\/)([a-z0-9][a-z0-9._@-]{0,127})/g;

/** One field of a proposal, read once per distinct value. */
export interface FieldView {
  readonly normal: string;
  readonly word: string;
  /** One bit per matcher of the field (field-matchers.ts) that matches. */
  readonly mask: number;
}

/** A field that can name agents (the target, the arguments): the names it mentions. */
export interface NamingFieldView extends FieldView {
  readonly agentNames: readonly string[];
}

/** The tool: its field view and what kind of tool it is. */
export interface ToolView extends FieldView {
  readonly exec: boolean;
  readonly sql: boolean;
}

/** The proposing agent. */
export interface AgentView {
  readonly normal: string;
  /** The name part (`agent:billing-bot` -> `billing-bot`). */
  readonly name: string;
  /** The name in word form (`billing bot`). */
  readonly nameWords: string;
}

/**
 * What the classifier reads of one proposal: each field normalised, in word
 * form and matched; the arguments flattened to text; what kind of tool it
 * is. Nothing here is read from the query or the labels.
 */
export interface ProposalViews {
  readonly agent: AgentView;
  readonly tool: ToolView;
  readonly action: FieldView;
  readonly target: NamingFieldView;
  readonly scope: FieldView;
  readonly recipient: FieldView;
  readonly environment: FieldView;
  readonly argKeys: FieldView;
  readonly args: NamingFieldView;
  /** Normal form of the arguments when the tool runs commands or statements, else ''. */
  readonly command: string;
  readonly execTool: boolean;
  readonly sqlTool: boolean;
  readonly uninspectable: boolean;
}

function agentNames(normal: string, principals: boolean): readonly string[] {
  let names: string[] | undefined;
  const scan = (pattern: RegExp): void => {
    pattern.lastIndex = 0;
    for (let m = pattern.exec(normal); m !== null; m = pattern.exec(normal)) {
      let name = m[1] ?? '';
      while (name.endsWith('.')) name = name.slice(0, -1);
      if (name !== '') (names ??= []).push(name);
    }
  };
  if (principals && normal.indexOf('agent:') !== -1) scan(AGENT_PRINCIPAL);
  if (normal.indexOf('workspace') !== -1 || normal.indexOf('agents/') !== -1) scan(AGENT_PATH);
  return names ?? NO_NAMES;
}
const NO_NAMES: readonly string[] = Object.freeze([]);

function fieldView(field: number, raw: string): FieldView {
  const normal = normalizeText(raw);
  const word = WORD_FORM[field] === true ? wordForm(normal) : normal;
  return { normal, word, mask: matchMask(field, word) };
}

/** Canonical tool name: word form with `_` between words (`Run-Command` -> `run_command`). */
function canonicalTool(word: string): string {
  return word.indexOf(' ') === -1 ? word : word.replaceAll(' ', '_');
}

function firstWord(word: string): string {
  const space = word.indexOf(' ');
  return space === -1 ? word : word.slice(0, space);
}

// One memo per field. Values repeat across proposals (the same tools, action
// types, targets and argument shapes), so most fields are read once.
const MEMO_ENTRIES = 1_048_576;
const MEMO_KEY_LENGTH = 1024;
const toolMemo = new BoundedCache<ToolView>(MEMO_ENTRIES, MEMO_KEY_LENGTH);
const actionMemo = new BoundedCache<FieldView>(MEMO_ENTRIES, MEMO_KEY_LENGTH);
const targetMemo = new BoundedCache<NamingFieldView>(MEMO_ENTRIES, MEMO_KEY_LENGTH);
const scopeMemo = new BoundedCache<FieldView>(MEMO_ENTRIES, MEMO_KEY_LENGTH);
const environmentMemo = new BoundedCache<FieldView>(MEMO_ENTRIES, MEMO_KEY_LENGTH);
const argKeysMemo = new BoundedCache<FieldView>(MEMO_ENTRIES, MEMO_KEY_LENGTH);
const argsMemo = new BoundedCache<NamingFieldView>(MEMO_ENTRIES, MEMO_KEY_LENGTH);
const agentMemo = new BoundedCache<AgentView>(MEMO_ENTRIES, MEMO_KEY_LENGTH);

const readTool = (raw: string): ToolView => {
  const view = fieldView(Field.tool, raw);
  const canonical = canonicalTool(view.word);
  const first = firstWord(view.word);
  return { ...view, exec: EXEC_TOOLS.has(canonical) || EXEC_TOOLS.has(first), sql: SQL_TOOLS.has(canonical) || SQL_TOOLS.has(first) };
};
const readAction = (raw: string): FieldView => fieldView(Field.action, raw);
const readTarget = (raw: string): NamingFieldView => {
  const view = fieldView(Field.target, raw);
  return { ...view, agentNames: agentNames(view.normal, true) };
};
const readScope = (raw: string): FieldView => fieldView(Field.scope, raw);
const readRecipient = (raw: string): FieldView => fieldView(Field.recipient, raw);
const readEnvironment = (raw: string): FieldView => fieldView(Field.environment, raw);
/** Argument names arrive joined by NUL; each is put in word form, joined by ' | '. */
const readArgKeys = (joined: string): FieldView => {
  let word = '';
  for (const key of joined.split('\u0000')) {
    const w = wordForm(normalizeText(key));
    if (w !== '') word = word === '' ? w : `${word} | ${w}`;
  }
  return { normal: word, word, mask: matchMask(Field.argKeys, word) };
};
const readArgs = (raw: string): NamingFieldView => {
  let normal = normalizeText(raw);
  // NFKC can expand text (one ligature can become many letters); the caller flags the overflow.
  if (normal.length > ARGS_LIMITS.maxScanChars) normal = normal.slice(0, ARGS_LIMITS.maxScanChars);
  return { normal, word: normal, mask: matchMask(Field.argValues, normal), agentNames: agentNames(normal, false) };
};
const readAgent = (raw: string): AgentView => {
  const normal = normalizeText(raw);
  const colon = normal.indexOf(':');
  const name = colon === -1 ? normal : normal.slice(colon + 1);
  return { normal, name, nameWords: wordForm(name) };
};

/**
 * Flattens argument values to text, bounded by ARGS_LIMITS. One instance is
 * reused for every proposal (decide() is synchronous and not re-entered).
 */
class ArgsReader {
  nodes = 0;
  chars = 0;
  overflow = false;
  keys = '';

  reset(): void {
    this.nodes = 0;
    this.chars = 0;
    this.overflow = false;
    this.keys = '';
  }

  #key(name: string): void {
    this.keys = this.keys === '' ? name : `${this.keys}\u0000${name}`;
  }

  read(value: unknown, depth: number): string {
    if (this.overflow) return '';
    if (++this.nodes > ARGS_LIMITS.maxNodes || depth > ARGS_LIMITS.maxDepth || this.chars > ARGS_LIMITS.maxScanChars) {
      this.overflow = true;
      return '';
    }
    switch (typeof value) {
      case 'string':
        this.chars += value.length;
        return value;
      case 'number':
      case 'boolean':
      case 'bigint':
        return String(value);
      case 'object': {
        if (value === null) return '';
        if (Array.isArray(value)) {
          let out = '';
          for (let i = 0; i < value.length && !this.overflow; i++) {
            const part = this.read(value[i], depth + 1);
            if (part !== '') out = out === '' ? part : `${out} ${part}`;
          }
          return out;
        }
        return this.members(value as Record<string, unknown>, depth, false);
      }
      default:
        return '';
    }
  }

  /** An object's members: at the top level command keys first (in COMMAND_KEYS order), joined by spaces, then the rest after ' ; '. */
  members(object: Record<string, unknown>, depth: number, commandFirst: boolean): string {
    let rest = '';
    let commandParts = 0;
    for (const name in object) {
      if (this.overflow) break;
      if (!Object.hasOwn(object, name)) continue;
      this.#key(name);
      const part = this.read(object[name], depth + 1);
      if (commandFirst) {
        const slot = COMMAND_SLOT.get(name);
        if (slot !== undefined) {
          commandScratch[slot] = part;
          commandParts += 1;
          continue;
        }
      }
      if (part !== '') rest = rest === '' ? part : `${rest} ; ${part}`;
    }
    if (commandParts === 0) return rest;
    let head = '';
    for (let slot = 0; slot < commandScratch.length; slot++) {
      const part = commandScratch[slot] as string;
      if (part !== '') head = head === '' ? part : `${head} ${part}`;
      commandScratch[slot] = '';
    }
    if (head === '') return rest;
    return rest === '' ? head : `${head} ; ${rest}`;
  }
}

const reader = new ArgsReader();

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** Builds the views of a proposal. Total: any input shape gives views, never an exception of its own. */
export function readProposal(
  proposal: { readonly agentId?: unknown; readonly tool?: unknown; readonly actionType?: unknown; readonly targetResource?: unknown; readonly recipient?: unknown; readonly scope?: unknown; readonly args?: unknown },
  environment: unknown,
): ProposalViews {
  reader.reset();
  const rawArgs = proposal.args;
  let argsText = '';
  if (typeof rawArgs === 'object' && rawArgs !== null && !Array.isArray(rawArgs)) argsText = reader.members(rawArgs as Record<string, unknown>, 0, true);
  else if (rawArgs !== undefined) argsText = reader.read(rawArgs, 0);
  let uninspectable = reader.overflow;
  if (argsText.length > ARGS_LIMITS.maxScanChars) {
    argsText = argsText.slice(0, ARGS_LIMITS.maxScanChars);
    uninspectable = true;
  }
  // Short argument texts (amounts, ids) are mostly distinct: reading them again costs less than a lookup among many.
  const args = argsText.length <= 64 ? readArgs(argsText) : argsMemo.get(argsText, readArgs);
  if (args.normal.length === ARGS_LIMITS.maxScanChars && argsText.length < ARGS_LIMITS.maxScanChars) uninspectable = true;

  const tool = toolMemo.get(text(proposal.tool), readTool);
  const action = actionMemo.get(text(proposal.actionType), readAction);
  const execTool = tool.exec || (action.mask & FactBit.execAction) !== 0;
  const sqlTool = tool.sql || (action.mask & FactBit.sqlAction) !== 0;
  return {
    agent: agentMemo.get(text(proposal.agentId), readAgent),
    tool,
    action,
    target: targetMemo.get(text(proposal.targetResource), readTarget),
    scope: scopeMemo.get(text(proposal.scope), readScope),
    recipient: readRecipient(text(proposal.recipient)),
    environment: environmentMemo.get(text(environment), readEnvironment),
    argKeys: argKeysMemo.get(reader.keys, readArgKeys),
    args,
    command: execTool || sqlTool ? args.normal : '',
    execTool,
    sqlTool,
    uninspectable,
  };
}
