import { BoundedCache } from './bounded-cache.js';
import { FactBit, Field, WORD_FORM, actionClauseBits, clauseBits, fieldClauses, matchMask } from './field-matchers.js';
import { normalizeText, wordForm } from './normalize.js';
import { callVerbs, isSqlToolName, toolKind, type ToolKind } from './tool-registry.js';
import { changesDocuments, namesDatabase } from './sql-rules.js';

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
  /** The signal-rule clauses the value satisfies (field-matchers.ts, clauseBits). */
  readonly clauses: number;
}

/** A field that can name agents (the target, the arguments): the names it mentions. */
export interface NamingFieldView extends FieldView {
  readonly agentNames: readonly string[];
}

/**
 * What the classifier needs of the target, packed into one small integer: a
 * memo whose values are numbers costs no object to read, and the target is
 * the most varied field, its memo the one least likely to be in cache.
 * Bits 0-7 are the target's clause bits renumbered ({@link targetClauses}),
 * then the two flags below, then from bit {@link TargetFacts.signatureShift}
 * the signature of its words ({@link wordBits}). The whole view is read
 * ({@link targetView}) only when these do not settle a flag.
 */
export const TargetFacts = {
  /** The target says self, myself or own (FactBit.targetSelfWords). */
  selfWords: 1 << 8,
  /** The target names agents (its view's `agentNames` is not empty). */
  namesAgents: 1 << 9,
  signatureShift: 10,
} as const;

/** The recipient: its field view, and whether it names nobody or the user (not "other people"). */
export interface RecipientView extends FieldView {
  readonly selfWord: boolean;
}

/** Recipients that are not "other people": nobody, the user being served, the agent itself. */
const SELF_RECIPIENTS: ReadonlySet<string> = new Set([
  '', '-', 'none', 'null', 'nil', 'n/a', 'na', 'nobody', 'no one', 'self', 'me', 'myself', 'user', 'the user', 'current user',
  'current-user', 'current_user', 'end user', 'end-user', 'requester', 'requestor', 'caller',
]);

/**
 * Views of a proposal's fields that the caller already holds (decide() reads
 * them from the grant table, which computed them when the grant was folded):
 * each, when set, is the view of the proposal's own value of the field.
 * -1 / null: not known, read from the proposal.
 */
export interface KnownViews {
  targetFacts: number;
  agent: AgentView | null;
  recipient: RecipientView | null;
  scope: number;
}

/** The tool: its field view and what kind of tool it is. */
export interface ToolView extends FieldView {
  readonly exec: boolean;
  readonly sql: boolean;
  /** What the tool does with its arguments (tool-registry.ts, rules version 2). */
  readonly kind: ToolKind;
  /** The tool's name names a database (tool-registry.ts, isSqlToolName). */
  readonly sqlName: boolean;
  /** Version 5: either part of the tool's name names a database (`mcp__mysql__execute`; sql-rules.ts, namesDatabase). */
  readonly databaseName: boolean;
  /** Version 5: the tool's name says it changes documents (`update_many`; sql-rules.ts, changesDocuments). */
  readonly changesDocuments: boolean;
}

/** The proposing agent. */
export interface AgentView {
  readonly normal: string;
  /** The name part (`agent:billing-bot` -> `billing-bot`). */
  readonly name: string;
  /** The name in word form (`billing bot`). */
  readonly nameWords: string;
  /** The signature of `nameWords` ({@link wordBits}): compared with a target's ({@link TargetFacts}). */
  readonly nameBits: number;
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
  /** The target's packed facts ({@link TargetFacts}). */
  readonly target: number;
  /** The target as given, for {@link targetView}. */
  readonly targetText: string;
  /** The scope's clause bits. */
  readonly scope: number;
  readonly recipient: RecipientView;
  readonly environment: FieldView;
  readonly argKeys: FieldView;
  readonly args: NamingFieldView;
  /** Normal form of the arguments when the tool runs commands or statements, else ''. */
  readonly command: string;
  readonly execTool: boolean;
  readonly sqlTool: boolean;
  /** Verbs named by the words of the tool and action type (tool-registry.ts, callVerbs): read for unknown tools. */
  readonly verbs: number;
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

/** Bits of a word signature ({@link wordBits}). */
const SIGNATURE_BITS = 20;

/**
 * The signature of the words of a word-form text (lowercase ASCII words,
 * single spaces): one of {@link SIGNATURE_BITS} bits, picked by a hash of the
 * word, per word. A word sequence that occurs in a text has each of its
 * words' bits in the text's signature, so a bit of the needle missing from
 * the text proves that the text does not contain it (without reading it).
 */
function wordBits(word: string): number {
  let bits = 0;
  let hash = 0;
  let length = 0;
  for (let i = 0; i < word.length; i++) {
    const c = word.charCodeAt(i);
    if (c === 32) {
      if (length > 0) bits |= 1 << ((hash >>> 0) % SIGNATURE_BITS);
      hash = 0;
      length = 0;
    } else {
      hash = (Math.imul(hash, 31) + c) | 0;
      length += 1;
    }
  }
  if (length > 0) bits |= 1 << ((hash >>> 0) % SIGNATURE_BITS);
  return bits;
}

function fieldView(field: number, raw: string): FieldView {
  const normal = normalizeText(raw);
  const word = WORD_FORM[field] === true ? wordForm(normal) : normal;
  const mask = matchMask(field, word);
  return { normal, word, mask, clauses: field === Field.action ? actionClauseBits(word, mask) : clauseBits(field, mask) };
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
const targetMemo = new BoundedCache<number>(MEMO_ENTRIES, MEMO_KEY_LENGTH);
const targetViewMemo = new BoundedCache<NamingFieldView>(MEMO_ENTRIES, MEMO_KEY_LENGTH);
const scopeMemo = new BoundedCache<number>(MEMO_ENTRIES, MEMO_KEY_LENGTH);
const environmentMemo = new BoundedCache<FieldView>(MEMO_ENTRIES, MEMO_KEY_LENGTH);
const argsMemo = new BoundedCache<NamingFieldView>(MEMO_ENTRIES, MEMO_KEY_LENGTH);
const agentMemo = new BoundedCache<AgentView>(MEMO_ENTRIES, MEMO_KEY_LENGTH);

/** What a (tool, action type) pair says, read once per distinct pair. */
interface CallView {
  readonly tool: ToolView;
  readonly action: FieldView;
  readonly execTool: boolean;
  readonly sqlTool: boolean;
  readonly verbs: number;
}
/** Call views by tool then action type: one probe per pair of the proposal's own strings, no key built (bounded: emptied when full). */
let callViews = new Map<string, Map<string, CallView>>();
let callViewCount = 0;
const CALL_VIEWS = 65_536;
const CALL_KEY_LENGTH = 256;

function readCall(tool: string, actionType: string): CallView {
  const toolView = toolMemo.get(tool, readTool);
  const action = actionMemo.get(actionType, readAction);
  return {
    tool: toolView,
    action,
    execTool: toolView.exec || (action.mask & FactBit.execAction) !== 0,
    sqlTool: toolView.sql || (action.mask & FactBit.sqlAction) !== 0,
    verbs: toolView.kind === 'unknown' ? callVerbs(tool, actionType) : 0,
  };
}

/** The view of a (tool, action type) pair. */
function callView(tool: string, actionType: string): CallView {
  let byAction = callViews.get(tool);
  const hit = byAction?.get(actionType);
  if (hit !== undefined) return hit;
  const view = readCall(tool, actionType);
  if (tool.length > CALL_KEY_LENGTH || actionType.length > CALL_KEY_LENGTH) return view;
  if (callViewCount >= CALL_VIEWS) {
    callViews = new Map();
    callViewCount = 0;
    byAction = undefined;
  }
  if (byAction === undefined) {
    byAction = new Map();
    callViews.set(tool, byAction);
  }
  byAction.set(actionType, view);
  callViewCount += 1;
  return view;
}

const readTool = (raw: string): ToolView => {
  const view = fieldView(Field.tool, raw);
  const canonical = canonicalTool(view.word);
  const first = firstWord(view.word);
  return { ...view, exec: EXEC_TOOLS.has(canonical) || EXEC_TOOLS.has(first), sql: SQL_TOOLS.has(canonical) || SQL_TOOLS.has(first), kind: toolKind(raw), sqlName: isSqlToolName(raw), databaseName: namesDatabase(raw), changesDocuments: changesDocuments(raw) };
};
const readAction = (raw: string): FieldView => fieldView(Field.action, raw);
const readTarget = (raw: string): NamingFieldView => {
  const view = fieldView(Field.target, raw);
  return { ...view, agentNames: agentNames(view.normal, true) };
};

/** The target's clause bits, in the order of bits 0-7 of its packed facts. */
const TARGET_CLAUSES = fieldClauses(Field.target);
if (TARGET_CLAUSES.length > 8) throw new RangeError('more than 8 clauses on the target field');
/** Clause bits of packed target facts, by their low byte. */
const TARGET_CLAUSE_BITS = Int32Array.from({ length: 256 }, (_, low) => {
  let bits = 0;
  TARGET_CLAUSES.forEach((bit, i) => {
    if ((low & (1 << i)) !== 0) bits |= bit;
  });
  return bits;
});

/** The clause bits of packed target facts. */
export function targetClauses(facts: number): number {
  return TARGET_CLAUSE_BITS[facts & 255] as number;
}

/** The word signature of packed target facts. */
export function targetSignature(facts: number): number {
  return facts >>> TargetFacts.signatureShift;
}

const readTargetFacts = (raw: string): number => {
  const view = readTarget(raw);
  let facts = 0;
  TARGET_CLAUSES.forEach((bit, i) => {
    if ((view.clauses & bit) !== 0) facts |= 1 << i;
  });
  if ((view.mask & FactBit.targetSelfWords) !== 0) facts |= TargetFacts.selfWords;
  if (view.agentNames.length > 0) facts |= TargetFacts.namesAgents;
  return facts | (wordBits(view.word) << TargetFacts.signatureShift);
};

/** The packed facts of a target ({@link TargetFacts}). */
export function targetFacts(raw: unknown): number {
  return targetMemo.get(text(raw), readTargetFacts);
}

/** The whole view of a target (`ProposalViews.targetText`), for what its packed facts do not settle. */
export function targetView(raw: string): NamingFieldView {
  return targetViewMemo.get(raw, readTarget);
}

const readScope = (raw: string): number => fieldView(Field.scope, raw).clauses;

/** The clause bits of a scope (for the grant table: what a proposal with this scope will need). */
export function scopeClauses(raw: string): number {
  return readScope(raw);
}

/** The view of a recipient (for the grant table; a proposal's own is read into scratch). */
export function recipientView(raw: string): RecipientView {
  const normal = normalizeText(raw);
  const mask = matchMask(Field.recipient, normal);
  return { normal, word: normal, mask, clauses: clauseBits(Field.recipient, mask), selfWord: SELF_RECIPIENTS.has(normal) };
}

/** The view of an agent id (for the grant table). */
export function agentView(raw: string): AgentView {
  return readAgent(raw);
}
const readEnvironment = (raw: string): FieldView => fieldView(Field.environment, raw);
/** Argument names arrive joined by NUL; each is put in word form, joined by ' | '. */
const readArgKeys = (joined: string): FieldView => {
  let word = '';
  for (const key of joined.split('\u0000')) {
    const w = wordForm(normalizeText(key));
    if (w !== '') word = word === '' ? w : `${word} | ${w}`;
  }
  const mask = matchMask(Field.argKeys, word);
  return { normal: word, word, mask, clauses: clauseBits(Field.argKeys, mask) };
};
/** Fills `view` with the view of the argument text `raw`, and returns it. */
function fillArgs(view: Mutable<NamingFieldView>, raw: string): NamingFieldView {
  let normal = normalizeText(raw);
  // NFKC can expand text (one ligature can become many letters); the caller flags the overflow.
  if (normal.length > ARGS_LIMITS.maxScanChars) normal = normal.slice(0, ARGS_LIMITS.maxScanChars);
  view.normal = normal;
  view.word = normal;
  view.mask = matchMask(Field.argValues, normal);
  view.clauses = clauseBits(Field.argValues, view.mask);
  view.agentNames = agentNames(normal, false);
  return view;
}
const blankArgs = (): Mutable<NamingFieldView> => ({ normal: '', word: '', mask: 0, clauses: 0, agentNames: NO_NAMES });
const readArgs = (raw: string): NamingFieldView => fillArgs(blankArgs(), raw);
const readAgent = (raw: string): AgentView => {
  const normal = normalizeText(raw);
  const colon = normal.indexOf(':');
  const name = colon === -1 ? normal : normal.slice(colon + 1);
  const nameWords = wordForm(name);
  return { normal, name, nameWords, nameBits: wordBits(nameWords) };
};

/**
 * Argument-name sequences, as a trie over the names (property names are
 * interned strings whose hashes are kept, so a walk costs no string
 * building): each node remembers the view of the names leading to it.
 * Bounded like the memos: when full it is emptied and starts again.
 */
interface ArgKeysNode {
  view: FieldView | undefined;
  next: Map<string, ArgKeysNode> | undefined;
}
const ARG_KEYS_NODES = 65_536;
let argKeysRoot: ArgKeysNode = { view: undefined, next: undefined };
let argKeysNodes = 1;

/** The names joined as {@link readArgKeys} reads them: by NUL, leading empty names dropped. */
function joinNames(names: readonly string[], count: number): string {
  let joined = '';
  for (let i = 0; i < count; i++) {
    const name = names[i] as string;
    joined = joined === '' ? name : `${joined}\u0000${name}`;
  }
  return joined;
}

/** The view of the first `count` argument names of `names`. */
function argKeysView(names: readonly string[], count: number): FieldView {
  let node = argKeysRoot;
  for (let i = 0; i < count; i++) {
    const name = names[i] as string;
    let next = node.next?.get(name);
    if (next === undefined) {
      if (name.length > MEMO_KEY_LENGTH) return readArgKeys(joinNames(names, count));
      if (argKeysNodes >= ARG_KEYS_NODES) {
        argKeysRoot = { view: undefined, next: undefined };
        argKeysNodes = 1;
        return argKeysView(names, count);
      }
      next = { view: undefined, next: undefined };
      (node.next ??= new Map()).set(name, next);
      argKeysNodes += 1;
    }
    node = next;
  }
  return (node.view ??= readArgKeys(joinNames(names, count)));
}

/**
 * Flattens argument values to text, bounded by ARGS_LIMITS. One instance is
 * reused for every proposal (decide() is synchronous and not re-entered).
 */
class ArgsReader {
  nodes = 0;
  chars = 0;
  overflow = false;
  /** Names of the members read, in order (the first `keyCount`; the array is reused). */
  readonly keys: string[] = [];
  keyCount = 0;

  reset(): void {
    this.nodes = 0;
    this.chars = 0;
    this.overflow = false;
    this.keyCount = 0;
  }

  #key(name: string): void {
    this.keys[this.keyCount++] = name;
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
const NOTHING_KNOWN: KnownViews = Object.freeze({ targetFacts: -1, agent: null, recipient: null, scope: -1 });

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

// Scratch of one reading: decide() is synchronous and never re-entered, so one
// instance of each serves every call (the views of the last proposal read).
const recipientScratch: Mutable<RecipientView> = { ...fieldView(Field.recipient, ''), selfWord: true };
const shortArgsView = blankArgs();
const views: Mutable<ProposalViews> = {
  agent: readAgent(''),
  tool: readTool(''),
  action: readAction(''),
  target: readTargetFacts(''),
  targetText: '',
  scope: readScope(''),
  recipient: recipientScratch,
  environment: readEnvironment(''),
  argKeys: readArgKeys(''),
  args: shortArgsView,
  command: '',
  execTool: false,
  sqlTool: false,
  verbs: 0,
  uninspectable: false,
};

/**
 * Builds the views of a proposal. Total: any input shape gives views, never an
 * exception of its own. The result is the same object at every call, refilled:
 * read it before the next call. `knownTargetFacts`, when not -1, are the
 * target's packed facts, already known to the caller.
 */
export function readProposal(
  proposal: { readonly agentId?: unknown; readonly tool?: unknown; readonly actionType?: unknown; readonly targetResource?: unknown; readonly recipient?: unknown; readonly scope?: unknown; readonly args?: unknown },
  environment: unknown,
  known: KnownViews = NOTHING_KNOWN,
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
  const args = argsText.length <= 64 ? fillArgs(shortArgsView, argsText) : argsMemo.get(argsText, readArgs);
  if (args.normal.length === ARGS_LIMITS.maxScanChars && argsText.length < ARGS_LIMITS.maxScanChars) uninspectable = true;

  const call = callView(text(proposal.tool), text(proposal.actionType));
  const tool = call.tool;
  const action = call.action;
  const execTool = call.execTool;
  const sqlTool = call.sqlTool;
  views.agent = known.agent ?? agentMemo.get(text(proposal.agentId), readAgent);
  views.tool = tool;
  views.action = action;
  const target = text(proposal.targetResource);
  views.target = known.targetFacts === -1 ? targetMemo.get(target, readTargetFacts) : known.targetFacts;
  views.targetText = target;
  views.scope = known.scope === -1 ? scopeMemo.get(text(proposal.scope), readScope) : known.scope;
  if (known.recipient !== null) views.recipient = known.recipient;
  else {
    // Recipients are mostly distinct (vendors, customers, partners): read each time, into scratch.
    const recipient = normalizeText(text(proposal.recipient));
    recipientScratch.normal = recipient;
    recipientScratch.word = recipient;
    recipientScratch.mask = matchMask(Field.recipient, recipient);
    recipientScratch.clauses = clauseBits(Field.recipient, recipientScratch.mask);
    recipientScratch.selfWord = SELF_RECIPIENTS.has(recipient);
    views.recipient = recipientScratch;
  }
  views.environment = environmentMemo.get(text(environment), readEnvironment);
  views.argKeys = argKeysView(reader.keys, reader.keyCount);
  // A proposal's names are not kept past the call (the array keeps its capacity).
  for (let i = 0; i < reader.keyCount; i++) reader.keys[i] = '';
  views.args = args;
  views.command = execTool || sqlTool ? args.normal : '';
  views.execTool = execTool;
  views.sqlTool = sqlTool;
  views.verbs = call.verbs;
  views.uninspectable = uninspectable;
  return views;
}
