import { BoundedCache } from './bounded-cache.js';
import { ALL_RULES, COMPILED_SIGNAL_RULES, Flag, UNINSPECTABLE_INDEX, UNKNOWN_HOST_INDEX, alternativeHolds, type CompiledAlternative, type CompiledSignalRule } from './field-matchers.js';
import { dequoteShell } from './normalize.js';
import { DEFAULT_CONFIG, type GateConfig } from './options.js';
import { PATTERN_RULES, URL_AUTHORITY, type PatternRule } from './pattern-rules.js';
import { TargetFacts, readProposal, targetClauses, targetSignature, targetView, type KnownViews, type ProposalViews } from './proposal-views.js';
import { CRISIS_SUPPORT_COMPANIONS } from './signal-rules.js';
import { COMMAND_RULES } from './command-rules.js';
import { Findings } from './findings.js';
import { moneyFindings } from './money.js';
import { LATEST_RULES_VERSION, type RulesVersion } from './rules-version.js';
import { setAnalysisVersion } from './analysis-version.js';
import { callFindings, type ToolKind } from './tool-registry.js';
import { analyzeShell } from './command-analysis.js';
import { SIGNAL_RULES } from './signal-rules.js';
import { sqlArgumentFindings, structuredUnboundedFindings } from './sql-rules.js';
import type { DecideContext, Proposal, Tier } from './types.js';

/** What the classifier found: the tier, the risk score and the rules behind them. */
export interface Classification {
  /** Highest tier of the rules that fired; 0 when none did. */
  readonly tier: Tier;
  /** Sum of the weights of the rules that fired. */
  readonly risk: number;
  /** Ids of the rules that fired, in table order (pattern rules first). */
  readonly rules: readonly string[];
  /** A clearly destructive pattern fired (blocked with RCE_RISK). */
  readonly destructive: boolean;
  /** A crisis support action, with nothing else about it that needs a human. */
  readonly crisisSupport: boolean;
  /** A crisis decision action. */
  readonly crisisDecision: boolean;
}

const CRISIS_SUPPORT_INDEX = ALL_RULES.findIndex((rule) => rule.id === 'crisis.support');
const CRISIS_DECISION_INDEX = ALL_RULES.findIndex((rule) => rule.id === 'crisis.decision');
const SUPPORT_COMPANION = Uint8Array.from(ALL_RULES, (rule) => (CRISIS_SUPPORT_COMPANIONS.has(rule.id) ? 1 : 0));

/**
 * Scratch of one classification: decide() is synchronous and never
 * re-entered, so one module-level instance serves every call.
 */
const fired = new Uint8Array(ALL_RULES.length);
const tally = { tier: 0 as Tier, risk: 0, destructive: false };
const NET_FETCH_INDEX = PATTERN_RULES.findIndex((rule) => rule.id === 'pattern.net_fetch');

const FINANCIAL_INDEX = ALL_RULES.findIndex((rule) => rule.id === 'context.financial');
const moneyScratch = new Findings();
const sqlScratch = new Findings();
/**
 * The clause of `behaviour.credentials` that reads credential words in
 * argument values. Version 2 reads the arguments of the tools it knows by
 * meaning (a path to a key file, a secret store, a token printer), so for
 * them the word alone (`grep -rn password src/`) is no longer a finding.
 */
const CREDENTIAL_PHRASE_CLAUSE = ((): number => {
  const rule = SIGNAL_RULES.find((r) => r.id === 'behaviour.credentials');
  const compiled = COMPILED_SIGNAL_RULES.find((r) => r.rule.id === 'behaviour.credentials');
  const clause = rule?.when[2]?.[0];
  if (rule === undefined || compiled === undefined || rule.when.length !== 4 || clause === undefined || !('field' in clause) || clause.field.join() !== 'argValues' || !clause.matches.test('api_key')) {
    throw new Error('behaviour.credentials no longer has its argument-phrase clause third');
  }
  return compiled.alternatives[2]?.need ?? 0;
})();


/** The clause of `behaviour.credentials` that reads credential words in argument names. */
const CREDENTIAL_KEY_CLAUSE = ((): number => {
  const compiled = COMPILED_SIGNAL_RULES.find((r) => r.rule.id === 'behaviour.credentials');
  return compiled?.alternatives[1]?.need ?? 0;
})();

/** Version 9: the only credential-like argument name is `token`/`tokens` holding a number. */
function countOnlyTokens(args: unknown): boolean {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return false;
  let tokens = false;
  for (const name in args) {
    if (!Object.hasOwn(args, name)) continue;
    const value = (args as Record<string, unknown>)[name];
    if (/^tokens?$/i.test(name)) {
      if (typeof value !== 'number' && !(typeof value === 'string' && /^\d{1,9}$/.test(value))) return false;
      tokens = true;
    } else if (/cred|pass|secret|key|cookie|auth|mnemonic|seed|token/i.test(name)) return false;
  }
  return tokens;
}

/** Version 10: a tool named for searching code (search_codebase, codebase_search, code_search, semantic_search, grep_repo, ...). */
function isCodeSearchTool(tool: string): boolean {
  const name = tool.toLowerCase().replace(/^mcp__[^_]+(?:_[^_]+)*?__/, '').replace(/[^a-z0-9]+/g, '_');
  return /(?:^|_)(?:search|grep|find|query|lookup)(?:_|$)|(?:^|_)(?:codebase_?search|code_?search|semantic_?search)(?:_|$)/.test(name) && /(?:^|_)(?:code|codebase|repo|repository|source|sources|files?|project|workspace|symbols?|semantic)(?:_|$)|codebase/.test(name);
}
const codeSearchToolMemo = new BoundedCache<boolean>(4096, 256);

/** Version-2 rules fired on the current proposal (same scratch discipline as `fired`). */
const firedCommand = new Uint8Array(COMMAND_RULES.length);
let commandFired = false;

function fireCommand(index: number, out: string[]): void {
  if (firedCommand[index] === 1) return;
  const rule = COMMAND_RULES[index] as (typeof COMMAND_RULES)[number];
  firedCommand[index] = 1;
  commandFired = true;
  out.push(rule.id);
  if (rule.tier > tally.tier) tally.tier = rule.tier;
  tally.risk += rule.weight;
  if (rule.block === true) tally.destructive = true;
}

function fire(index: number, out: string[]): void {
  if (fired[index] === 1) return;
  const rule = ALL_RULES[index] as (typeof ALL_RULES)[number];
  fired[index] = 1;
  out.push(rule.id);
  if (rule.tier > tally.tier) tally.tier = rule.tier;
  tally.risk += rule.weight;
  if (rule.block === true) tally.destructive = true;
}

function fireAll(indexes: readonly number[], out: string[]): void {
  for (let i = 0; i < indexes.length; i++) fire(indexes[i] as number, out);
}

/** Pattern rules that fire on a command (normal form), by index; remembered per distinct command. */
function matchPatterns(kind: 'shell' | 'sql', normal: string): readonly number[] {
  const dequoted = dequoteShell(normal);
  const fired: number[] = [];
  for (let i = 0; i < PATTERN_RULES.length; i++) {
    const rule = PATTERN_RULES[i] as PatternRule;
    if (kind === 'sql' && rule.on !== 'sql') continue;
    if (patternMatches(rule, normal) || (dequoted !== normal && patternMatches(rule, dequoted))) fired.push(i);
  }
  return fired;
}
const shellPatternMemo = new BoundedCache<readonly number[]>(16_384, 1024);
const sqlPatternMemo = new BoundedCache<readonly number[]>(16_384, 1024);
const matchShell = (normal: string): readonly number[] => matchPatterns('shell', normal);
const matchSql = (normal: string): readonly number[] => matchPatterns('sql', normal);

function patternMatches(rule: PatternRule, text: string): boolean {
  for (const hint of rule.hints) if (text.indexOf(hint) !== -1) return rule.pattern.test(text);
  return false;
}

/** True when a URL in `command` names a host outside `known`, or when no URL can be read at all. */
function reachesUnknownHost(command: string, known: ReadonlySet<string>): boolean {
  URL_AUTHORITY.lastIndex = 0;
  let found = false;
  for (let m = URL_AUTHORITY.exec(command); m !== null; m = URL_AUTHORITY.exec(command)) {
    found = true;
    let host = m[1] ?? '';
    const at = host.lastIndexOf('@');
    if (at !== -1) host = host.slice(at + 1);
    if (host.startsWith('[')) {
      const close = host.indexOf(']');
      host = host.slice(1, close === -1 ? undefined : close);
    } else {
      const colon = host.indexOf(':');
      if (colon !== -1) host = host.slice(0, colon);
    }
    if (host.endsWith('.')) host = host.slice(0, -1);
    if (!isKnownHost(host, known)) return true;
  }
  return !found;
}

function isKnownHost(host: string, known: ReadonlySet<string>): boolean {
  if (known.has(host)) return true;
  for (const k of known) if (host.length > k.length && host.endsWith(k) && host.charCodeAt(host.length - k.length - 1) === 46) return true;
  return false;
}

/** True when `words` contains the word sequence `needle` (both in word form). */
function containsWords(words: string, needle: string): boolean {
  if (needle === '') return false;
  for (let at = words.indexOf(needle); at !== -1; at = words.indexOf(needle, at + 1)) {
    const end = at + needle.length;
    if ((at === 0 || words.charCodeAt(at - 1) === 32) && (end === words.length || words.charCodeAt(end) === 32)) return true;
  }
  return false;
}

function namesOther(names: readonly string[], self: string): boolean {
  for (let i = 0; i < names.length; i++) if (names[i] !== self) return true;
  return false;
}

/** Flag bits of a proposal (signal-rules.ts, SignalFlag). */
function flagsOf(views: ProposalViews, crisis: boolean): number {
  const self = views.agent.name;
  const recipient = views.recipient.normal;
  let flags = 0;
  if (views.recipient.selfWord || (recipient !== '' && (recipient === views.agent.normal || recipient === self))) flags |= Flag.recipientIsSelf;
  const target = views.target;
  const agent = views.agent;
  // The packed facts settle most proposals without the target's whole view: its
  // words are read only when the agent's name could be among them (signatures).
  if (
    (target & TargetFacts.selfWords) !== 0 ||
    (agent.nameWords !== '' && (agent.nameBits & ~targetSignature(target)) === 0 && containsWords(targetView(views.targetText).word, agent.nameWords))
  ) {
    flags |= Flag.targetNamesSelf;
  }
  if (((target & TargetFacts.namesAgents) !== 0 && namesOther(targetView(views.targetText).agentNames, self)) || namesOther(views.args.agentNames, self)) flags |= Flag.namesOtherAgent;
  if (crisis) flags |= Flag.crisisMode;
  return flags;
}

/**
 * Runs every rule over one proposal and appends the ids of those that fire
 * to `out` (the decision's reasons), in table order; the result's `rules` is
 * `out` itself. The internal form of {@link classify}, used by decide(),
 * which passes the views the grant table already holds.
 * The result is scratch, refilled by the next call.
 */
export function classifyInto(
  out: string[],
  proposal: Partial<Proposal>,
  context: Partial<DecideContext>,
  config: GateConfig,
  known: KnownViews | undefined = undefined,
  rulesVersion: RulesVersion = LATEST_RULES_VERSION,
): Classification {
  const views = readProposal(proposal, context.environment, known);
  fired.fill(0);
  tally.tier = 0;
  tally.risk = 0;
  tally.destructive = false;
  if (commandFired) {
    firedCommand.fill(0);
    commandFired = false;
  }

  let kind: ToolKind = 'unknown';
  if (rulesVersion >= 2) {
    // Version 2: statements of database tools keep the SQL pattern rules; everything
    // else is read by meaning (tool registry, shell parser, path model).
    // Database programs run from a shell are read by the command analysis (psql -c, mysql -e, redis-cli).
    kind = views.tool.kind;
    const sqlText = views.sqlTool && kind !== 'exec' ? views.args.normal : kind === 'unknown' && views.tool.sqlName ? views.args.normal : '';
    if (sqlText !== '') fireAll(sqlPatternMemo.get(sqlText, matchSql), out);
    setAnalysisVersion(rulesVersion);
    // Version 5: statements of database tools (by either part of their name) that change every row (no WHERE, or one that holds for all).
    if (rulesVersion >= 5 && (sqlText !== '' || views.tool.databaseName)) {
      const sql = sqlScratch;
      sql.reset();
      // Version 6: programs the statements run are read as shell commands.
      sqlArgumentFindings(sql, proposal.args, rulesVersion >= 6 ? analyzeShell : undefined);
      structuredUnboundedFindings(sql, views.tool.changesDocuments, proposal.args);
      for (let i = 0; i < sql.list.length; i++) fireCommand(sql.list[i] as number, out);
    }
    const found = callFindings(text(proposal.tool), views.verbs, proposal.args, views.execTool, kind);
    for (let i = 0; i < found.length; i++) fireCommand(found[i] as number, out);
  } else if (views.command !== '') {
    // Pattern rules: commands of execution tools, statements of database tools.
    const indexes = views.execTool ? shellPatternMemo.get(views.command, matchShell) : sqlPatternMemo.get(views.command, matchSql);
    fireAll(indexes, out);
    if (fired[NET_FETCH_INDEX] === 1 && reachesUnknownHost(dequoteShell(views.command), config.knownHosts)) fire(UNKNOWN_HOST_INDEX, out);
  }
  if (views.uninspectable) fire(UNINSPECTABLE_INDEX, out);

  // Behavioural, context and crisis rules.
  let clauses =
    views.tool.clauses | views.action.clauses | targetClauses(views.target) | views.scope | views.recipient.clauses | views.environment.clauses | views.argKeys.clauses | views.args.clauses;
  if (rulesVersion >= 2 && kind !== 'unknown') clauses &= ~CREDENTIAL_PHRASE_CLAUSE;
  // Version 9: a numeric `tokens` argument (a documentation tool's budget) is a count, not a credential.
  if (rulesVersion >= 9 && countOnlyTokens(proposal.args)) clauses &= ~CREDENTIAL_KEY_CLAUSE;
  // Version 10: a tool that searches the project's code reads a credential word in its query as a topic ("password reset flow"), not a request for secrets.
  if (rulesVersion >= 10 && kind === 'unknown' && codeSearchToolMemo.get(text(proposal.tool), isCodeSearchTool)) clauses &= ~CREDENTIAL_PHRASE_CLAUSE;
  const flags = flagsOf(views, context.crisis === true);
  // Version 8: a payment provider's read-only tool (search, get, list, documentation) is no financial operation.
  const readOnlyMoneyTool = rulesVersion >= 8 && readOnlyToolMemo.get(text(proposal.tool), isReadOnlyTool);
  for (let r = 0; r < COMPILED_SIGNAL_RULES.length; r++) {
    const compiled = COMPILED_SIGNAL_RULES[r] as CompiledSignalRule;
    if (readOnlyMoneyTool && compiled.index === FINANCIAL_INDEX) continue;
    const alternatives = compiled.alternatives;
    for (let a = 0; a < alternatives.length; a++) {
      if (alternativeHolds(alternatives[a] as CompiledAlternative, clauses, flags, fired)) {
        fire(compiled.index, out);
        break;
      }
    }
  }

  if (rulesVersion >= 2) {
    const money = moneyScratch;
    money.reset();
    moneyFindings(money, proposal.args, fired[FINANCIAL_INDEX] === 1);
    const list = money.list;
    for (let i = 0; i < list.length; i++) fireCommand(list[i] as number, out);
  }

  let crisisSupport = fired[CRISIS_SUPPORT_INDEX] === 1 && !commandFired;
  if (crisisSupport) for (let i = 0; i < fired.length; i++) if (fired[i] === 1 && SUPPORT_COMPANION[i] === 0) crisisSupport = false;
  const result = lastClassification;
  result.tier = tally.tier;
  result.risk = tally.risk;
  result.rules = out;
  result.destructive = tally.destructive;
  result.crisisSupport = crisisSupport;
  result.crisisDecision = fired[CRISIS_DECISION_INDEX] === 1;
  return result;
}

/** The result of {@link classifyInto}: one object, refilled by every call (read it before the next). */
const lastClassification: { -readonly [K in keyof Classification]: Classification[K] } = { tier: 0, risk: 0, rules: [], destructive: false, crisisSupport: false, crisisDecision: false };

/**
 * Classifies a proposal with the pattern, behavioural and context rules
 * (tables in pattern-rules.ts and signal-rules.ts), under `rulesVersion`
 * (default the latest; version 2 reads commands, paths and tools by meaning:
 * command-rules.ts). Reads the tool, the five
 * operation fields, the arguments and `context.environment` /
 * `context.crisis`, all normalised first; never the query or the labels.
 */
export function classify(proposal: Proposal, context: DecideContext = {}, config: GateConfig = DEFAULT_CONFIG, rulesVersion: RulesVersion = LATEST_RULES_VERSION): Classification {
  const result = classifyInto([], proposal, context, config, undefined, rulesVersion);
  return { tier: result.tier, risk: result.risk, rules: result.rules, destructive: result.destructive, crisisSupport: result.crisisSupport, crisisDecision: result.crisisDecision };
}

/** Version 8: a tool whose own words only read (search, get, list, retrieve, read, documentation) and none change or move money. */
function isReadOnlyTool(tool: string): boolean {
  const own = tool.slice(tool.lastIndexOf('__') + (tool.includes('__') ? 2 : 0)).replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase();
  const words = own.split(/[^a-z0-9]+/).filter((w) => w !== '');
  if (words.length === 0 || words.length > 8) return false;
  const READ = /^(?:search|get|list|read|retrieve|fetch|find|lookup|describe|view|show|documentation|docs|doc|query|count|preview)$/;
  const CHANGE = /^(?:create|update|delete|remove|cancel|capture|confirm|send|pay|payout|refund|transfer|charge|void|issue|finalize|execute|run|approve|submit|make|initiate|post|put|patch|set|add|attach|detach|apply|close|reverse|withdraw|deposit|move|mark|write|upsert|modify)$/;
  return READ.test(words[0] as string) && !words.some((w) => CHANGE.test(w)) || words.every((w) => READ.test(w) || /^(?:documentation|docs|doc|api|reference|guide|guides)$/.test(w));
}
const readOnlyToolMemo = new BoundedCache<boolean>(4096, 256);

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}
