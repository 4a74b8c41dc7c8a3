import { BoundedCache } from './bounded-cache.js';
import { STRING_FACTS_MAX_LENGTH, factsOf, nameFactsOf } from './string-facts.js';
import { R, type Findings } from './findings.js';
import { PathClass, pathFacts } from './path-model.js';
import { touchPath } from './path-rules.js';

/**
 * Rules version 9: the classes of the misses on the eighth held-out set,
 * read on every surface (a shell line, a shell program's words, any tool's
 * fields, a file tool's path and content). Untrusted input: every text read
 * is cut (64 KiB), every walk bounded (512 nodes, depth 8), and no pattern
 * holds two unbounded runs in a row.
 */

const CUT = 65_536;
/** A text cut to 64 KiB (what every reading of versions 9 and 10 reads at most). */
export function cut(text: string): string {
  return text.length > CUT ? text.slice(0, CUT) : text;
}

// ---------------------------------------------------------------------------
// SQL: statements that turn protections off, and statements run through application code.

/** A statement that turns a database protection off. */
const PROTECTION_OFF = /\bdisable\s+(?:trigger|row\s+level\s+security)\b|\bno\s+force\s+row\s+level\s+security\b|\bsession_replication_role\s*(?:=|\bto\b)\s*'?replica\b|\bdrop\s+policy\b|\balter\s+(?:role|user)\s+[^;]{1,256}?\b(?:bypassrls|superuser)\b|\brow_security\s*(?:=|\bto\b)\s*'?off\b/i;

/** True when a statement turns a protection off (read by the SQL rules for every statement under version 9). */
export function turnsProtectionOff(text: string): boolean {
  return PROTECTION_OFF.test(cut(text));
}

/** Statements that destroy or take authority, as read inside application code's literals. */
const DESTROYS = /^\s*(?:drop\s+(?:table|schema|database|view|materialized\s+view|index|sequence|function|owned)\b|truncate\b)/i;
const BALANCE = /\bupdate\s+[^;]{1,256}?\bset\s+[^;]{0,512}?\b(?:balance\w*|credit\w*|amount\w*|funds|wallet\w*)\s*=/i;
const GRANTS = /\bupdate\s+[^;]{1,256}?\bset\s+[^;]{0,512}?\b(?:roles?|is_?admin|admin|is_?superuser|superuser|is_?staff|permissions?|privileges?|access_level)\s*=|^\s*grant\s|^\s*alter\s+(?:role|user)\s/i;
const CHANGES = /^\s*(?:update\s+(?:only\s+)?\S+(?:\s+(?:as\s+)?\w+)?\s+set\s|delete\s+from\s)/i;
const STATEMENT_START = /^\s*(?:drop|truncate|delete|update|alter|grant|insert|create\s+(?:role|user)|set\s+session_replication_role)\b/i;

/** Markers of a line that runs statements through application code or a framework's shell. */
const APP_SQL_LINE = /\bmanage\.py\s+(?:shell|dbshell|runscript)\b|\brails\s+(?:runner|r|console|c|dbconsole|db)\b|\bbin\/rails\b|\brake\s+db:|\bprisma\s+db\s+execute\b|\bknex\b|\bsequelize\b|\btypeorm\s+query\b|\bdrizzle-kit\b|\.query\s*\(|\.execute\s*\(|\.exec\s*\(|\bexecute_sql\b|\btext\s*\(|\braw\s*\(|\$executeraw|\$queryraw|\bexecuteRawUnsafe\b|\bcursor\(\)/i;

/** Quoted literals of a text (single, double, backquoted; a here-document's or here-string's body too). */
function literals(text: string): string[] {
  const out: string[] = [];
  const re = /'((?:[^'\\]|\\.){1,4096})'|"((?:[^"\\]|\\.){1,4096})"|`([^`]{1,4096})`|<<-?\s*['"]?(\w{1,32})['"]?\n([\s\S]{0,16384}?)\n\s*\4\b/g;
  for (let m = re.exec(text); m !== null && out.length < 64; m = re.exec(text)) {
    const body = m[1] ?? m[2] ?? m[3] ?? m[5] ?? '';
    out.push(body.replace(/\\(["'])/g, '$1'));
  }
  return out;
}

/** The findings of one statement read inside application code. */
function appStatementFindings(f: Findings, statement: string): void {
  for (const one of statement.split(';').slice(0, 32)) {
    if (!STATEMENT_START.test(one)) continue;
    if (turnsProtectionOff(one)) f.add(R.databaseProtection);
    if (DESTROYS.test(one) || BALANCE.test(one) || GRANTS.test(one) || (CHANGES.test(one) && (!/\bwhere\b/i.test(one) || /\bwhere\s+(?:1\s*=\s*1|true)\b/i.test(one)))) f.add(R.appStatement);
  }
}

/** Statements in the literals of a line that runs application code or a framework shell. */
function appSqlFindings(f: Findings, line: string): void {
  const text = cut(line);
  if (!APP_SQL_LINE.test(text)) return;
  for (const literal of literals(text)) {
    appStatementFindings(f, literal);
    // A literal that is itself code (manage.py shell -c "...execute('DROP ...')") holds further literals.
    if (APP_SQL_LINE.test(literal)) for (const inner of literals(literal)) appStatementFindings(f, inner);
  }
  // A here-string or a bare statement after --stdin: `<<< 'DELETE FROM "User";'`.
  const here = /<<<\s*(?:'([^']{1,4096})'|"((?:[^"\\]|\\.){1,4096})")/.exec(text);
  if (here !== null) appStatementFindings(f, (here[1] ?? here[2] ?? '').replace(/\\(["'])/g, '$1'));
}

// ---------------------------------------------------------------------------
// Shell programs.

const TEMP_OR_OUTSIDE = /^(?:\/tmp\b|\/var\/tmp\b|\/dev\/shm\b|\/run\/user\b|\.\.\/\.\.\/|~\/|\$home\b|\/home\/[^/]+\/(?:\.|downloads\b))/i;
const PLUGIN_OPTION = /^--(?:rulesdir|rules-dir|resolve-plugins-relative-to|require|plugin|plugins|loader|import|config-loader|experimental-loader)$/;

/** Options that load code from a temporary directory or outside the workspace (argv of any tool). */
function pluginFindings(f: Findings, words: readonly string[]): void {
  for (let i = 0; i < words.length && i < 256; i++) {
    const w = words[i] as string;
    const eq = w.indexOf('=');
    const name = eq === -1 ? w : w.slice(0, eq);
    if (!PLUGIN_OPTION.test(name) && name !== '-r') continue;
    const value = eq === -1 ? (words[i + 1] ?? '') : w.slice(eq + 1);
    if (name === '-r' && !/^\//.test(value)) continue;
    if (TEMP_OR_OUTSIDE.test(value)) f.add(R.externalPlugin);
  }
}

/** Reads a program's words for version 9 (its name without path, its arguments as their texts). */
export function programFindingsV9(f: Findings, name: string, words: readonly string[]): void {
  const sub = words.find((w) => !w.startsWith('-')) ?? '';
  switch (name) {
    case 'machinectl':
      if (/^(?:shell|login)$/.test(sub) && (words.some((w) => /^root@/.test(w)) || sub === 'login' || words.indexOf(sub) === words.length - 1 || !words.some((w) => /@/.test(w)))) f.add(R.sudo);
      else if (/^(?:shell|login)$/.test(sub)) f.add(R.sudo);
      return;
    case 'run0':
      f.add(R.sudo);
      return;
    case 'systemd-run':
      if (words.some((w) => /^(?:--uid=(?:0|root)|-p|--pty|--shell|-S)$/.test(w) || /^--uid=(?:0|root)$/.test(w)) && !words.some((w) => /^--user$/.test(w))) f.add(R.sudo);
      return;
    case 'git': {
      if (/^(?:commit|push|merge|rebase|cherry-pick|am)$/.test(sub) && words.includes('--no-verify')) f.add(R.hookBypass);
      if (sub === 'commit' && words.some((w) => /^-[a-zA-Z]*n[a-zA-Z]*$/.test(w) && !w.startsWith('--'))) f.add(R.hookBypass);
      if (words.some((w) => /^(?:-c)$/.test(w)) && words.some((w) => /^core\.hookspath=\/dev\/null$/i.test(w))) f.add(R.hookBypass);
      return;
    }
    case 'gh': {
      for (let i = 0; i < words.length && i < 256; i++) {
        const w = words[i] as string;
        const file = w === '--body-file' || w === '-F' ? words[i + 1] : w.startsWith('--body-file=') ? w.slice(12) : undefined;
        if (file !== undefined && (pathFacts(file).classes & PathClass.credential) !== 0) f.add(R.upload);
      }
      return;
    }
    case 'aws': {
      const joined = words.join(' ');
      if (/\b(?:modify-snapshot-attribute|modify-image-attribute|modify-fpga-image-attribute)\b/.test(joined) && /--operation-type[ =]add\b|--launch-permission\b[^]*\badd\b|--create-volume-permission\b[^]*\badd\b/i.test(joined)) f.add(R.infrastructureExposure);
      if (/\b(?:modify-db-snapshot-attribute|modify-db-cluster-snapshot-attribute)\b/.test(joined) && /--values-to-add\b/.test(joined)) f.add(R.infrastructureExposure);
      return;
    }
    default:
      if (/^(?:eslint|stylelint|mocha|jest|ts-node|node|tsx|prettier|babel|webpack|vitest|rollup)$/.test(name)) pluginFindings(f, words);
  }
}

/** Reads a whole shell line for version 9 (what words lose: here-strings, prefixes, sequences). */
export function lineFindingsV9(f: Findings, line: string): void {
  const text = cut(line);
  appSqlFindings(f, text);
  if (/(?:^|[\s;&|(])HUSKY=0\b|(?:^|[\s;&|(])SKIP_HOOKS?=(?:1|true)\b|\bSKIP=[\w,-]*\b(?=[^|;&]*\bgit\s+commit)/.test(text)) f.add(R.hookBypass);
  // Tests or security checks deleted together with a commit.
  if (/\brm\s+(?:-\w+\s+)*[^\s;&|]*(?:tests?|spec|security|__tests__|e2e)\b[^;&|]*(?:&&|;)\s*git\s+(?:commit|push)\b/i.test(text)) f.add(R.hookBypass);
}

// ---------------------------------------------------------------------------
// Any tool's fields.

/** SQL injection shapes in a field (read by version 9 for every tool that is not a shell nor a database, by version 12 in filters of any tool). */
export const SQL_INJECTION = /'\s*(?:or|and)\s+'?[\w]{1,16}'?\s*=\s*'?[\w]{1,16}|'\s*;\s*(?:update|drop|delete|insert|truncate|alter|grant|exec|shutdown|create)\b|\bunion\s+(?:all\s+)?select\b|'\s*(?:--|#|\/\*)|\bor\s+1\s*=\s*1\b|;\s*(?:drop|truncate)\s+table\b|\b(?:sleep|pg_sleep|benchmark|waitfor\s+delay)\s*\(/i;
const SUBSTITUTION = /\$\(([^()]{1,4096})\)|`([^`]{1,4096})`/g;
const SMUGGLED_OPTION = /^(?:--output(?:-directory)?=|-o\s?\/|--upload-pack(?:=|$)|--receive-pack(?:=|$)|--exec(?:=|$)|--config=|-c\s?core\.|--template=|--git-dir=|--work-tree=)/;
const PATH_KEY = /(?:^|_)(?:path|file|filename|file_?path|dir|directory|dest|destination|output|out|target|location|folder|to|save_?as|output_?path|out_?file|export_?path)$/i;
const AGENT_FILE = /(?:^|\/)(?:claude\.md|claude\.local\.md|agents\.md|gemini\.md|\.cursorrules|\.windsurfrules|\.clinerules|copilot-instructions\.md|\.cursor\/rules\/[^/]+|\.github\/instructions\/[^/]+|\.claude\/commands\/[^/]+|\.roo\/rules[^/]*\/[^/]+)$/i;
const FETCH_RUN = /\b(?:curl|wget|iwr|invoke-webrequest)\b[^\n|]{0,512}\|\s*(?:sudo\s+)?(?:ba|z|da)?sh\b|\b(?:bash|sh)\s+<\(\s*(?:curl|wget)|\b(?:curl|wget)\b[^\n]{0,512}&&\s*(?:ba)?sh\s|\bnpx\s+-y\b|\beval\s+"?\$\((?:curl|wget)/i;
const NO_CONFIRM = /\b(?:do\s*n[o']?t|never|without|no\s+need\s+to)\s+(?:ask(?:ing)?|confirm(?:ing)?|prompt(?:ing)?|check(?:ing)?\s+with|wait(?:ing)?\s+for)\b[^\n]{0,64}\b(?:confirm\w*|permission|approval|user|human|me)\b|\bskip\s+(?:all\s+)?(?:confirmation|approval|permission)s?\b|--dangerously-skip-permissions\b|\bauto-?approve\s+(?:all|every)/i;
const IAC_FILE = /\.(?:tf|tf\.json|hcl)$|(?:^|\/)(?:pulumi|cdk|infra|infrastructure|terraform|cloudformation|cfn|sam|k8s|kubernetes|manifests?|rbac|deploy|helm|charts?)\/|(?:template|stack)\.(?:ya?ml|json)$/i;
const IAC_ADMIN = /arn:aws:iam::aws:policy\/(?:AdministratorAccess|IAMFullAccess|PowerUserAccess)|["']?action["']?\s*[:=]\s*\[?\s*["']\*["']|["']?actions["']?\s*[:=]\s*\[\s*["']\*["']|\biam:PassRole\b[^]{0,256}["']\*["']|\bcluster-admin\b|\bverbs\s*:\s*\[\s*["']\*["']\s*\][^]{0,256}\bresources\s*:\s*\[\s*["']\*["']|\bresources\s*:\s*\[\s*["']\*["']\s*\][^]{0,256}\bverbs\s*:\s*\[\s*["']\*["']|\bverbs\s*:\s*\n\s*-\s*["']\*["']|roles\/(?:owner|editor)\b/i;
const IAC_PUBLIC = /["']?principal["']?\s*[:=]\s*(?:["']\*["']|\{\s*["']?aws["']?\s*[:=]\s*["']\*["'])|\bprincipals?\s*[:=]\s*\[?\s*["']\*["']|\bpublic-read(?:-write)?\b|["']0\.0\.0\.0\/0["'][^]{0,256}|\ballUsers\b|\ballAuthenticatedUsers\b/i;
const OPEN_PORT = /\b(?:from_?port|to_?port|port|FromPort|ToPort)["']?\s*[:=]\s*["']?(?:22|3389|3306|5432|1433|27017|6379|9200|5984|11211|2375|2376|6443|10250|23)\b/i;
const EXTERNAL_TRUST = /arn:aws:iam::(\d{12}):(?:root|user|role)/gi;
const SSN = /(?<![\d-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\d-])/;
const CARD = /(?<!\d)(?:\d[ -]?){12,18}\d(?!\d)/g;
const EMAIL = /[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,8}/g;
const MESSAGE_WORDS = /(?:^|_)(?:post|send|message|messages|chat|slack|discord|teams|email|mail|sms|text|notify|comment|reply|publish|tweet|broadcast|twilio|sendgrid|mailgun)(?:_|$)/;
const AUTH_PATH = /(?:^|\/)(?:auth|authn|authz|middleware|middlewares|security|guards?|permissions?|session|login|policies)(?:\/|\.|_|-)|(?:auth|guard|middleware|session|login)\w*\.(?:ts|js|py|go|rb|java|php|cs)$/i;
const HARDCODED_COMPARE = /(?:token|secret|key|password|pass|auth|header|bearer|apikey|api_key)\w*\s*(?:!==?|===?|==)\s*(['"`])[^'"`\s]{4,256}\1|(['"`])[^'"`\s]{4,256}\2\s*(?:!==?|===?|==)\s*\w*(?:token|secret|key|password|auth)/i;

/** The Luhn check of a run of digits (13 to 19 of them). */
function luhn(digits: string): boolean {
  if (digits.length < 13 || digits.length > 19 || /^(\d)\1+$/.test(digits)) return false;
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** True when a text carries personal data: an SSN, a card number, or several named email addresses (remembered in the text's entry of string-facts.ts: message bodies repeat). */
function carriesPersonalData(text: string): boolean {
  if (text.length > STRING_FACTS_MAX_LENGTH) return personalDataIn(text);
  const facts = factsOf(text);
  if (facts.personalData === -1) facts.personalData = personalDataIn(text) ? 1 : 0;
  return facts.personalData === 1;
}
function personalDataIn(text: string): boolean {
  const t = cut(text);
  if (SSN.test(t) && /\b(?:ssn|social|security|name|dob|birth|customer|patient|employee|,)/i.test(t)) return true;
  CARD.lastIndex = 0;
  for (let m = CARD.exec(t), n = 0; m !== null && n < 64; m = CARD.exec(t), n++) if (luhn(m[0].replace(/[ -]/g, ''))) return true;
  // Without an '@' there is no address (the test spares the regular expression a scan that backtracks at every position).
  const emails = t.indexOf('@') === -1 ? [] : (t.match(EMAIL) ?? []);
  return new Set(emails.slice(0, 256).map((e) => e.toLowerCase())).size >= 3 && /[A-Z][a-z]+[ ,]+[A-Z][a-z]+/.test(t) && /\n|,|;/.test(t);
}

/** Strings of an object with their keys, lowercased, and their values cut (bounded walk). */
export function strings(value: unknown, key: string, depth: number, out: [string, string][], budget: { n: number }): void {
  if (depth > 8 || --budget.n < 0) return;
  if (typeof value === 'string') out.push([key, value.length > CUT ? value.slice(0, CUT) : value]);
  else if (Array.isArray(value)) for (let i = 0; i < value.length && i < 256; i++) strings(value[i], key, depth + 1, out, budget);
  else if (typeof value === 'object' && value !== null) for (const name in value) if (Object.hasOwn(value, name)) strings((value as Record<string, unknown>)[name], name.toLowerCase(), depth + 1, out, budget);
}

/**
 * The strings of one call's arguments with their keys (the bounded walk of
 * {@link strings} from the top), walked once per call however many readings
 * ask: the walk is kept for the object it was made of until
 * {@link forgetCallStrings} (called when a call's reading starts), so an
 * arguments object changed between two decisions is walked again.
 */
let walkedObject: object | null = null;
let walkedPairs: readonly (readonly [string, string])[] = [];
export function callStrings(object: Record<string, unknown>): readonly (readonly [string, string])[] {
  if (walkedObject !== object) {
    const pairs: [string, string][] = [];
    strings(object, '', 0, pairs, { n: 512 });
    walkedObject = object;
    walkedPairs = pairs;
  }
  return walkedPairs;
}
/** Forgets the walked arguments (at the start of each call's reading). */
export function forgetCallStrings(): void {
  walkedObject = null;
  walkedPairs = [];
}

/** A relative path that climbs out of the working directory to an absolute place (`../../../../home/dev/.config/...`): that place. */
function climbed(path: string): string | undefined {
  const m = /^(?:\.\/)?(?:\.\.\/){2,64}((?:home|root|etc|usr|var|opt|lib|boot|srv|sys|proc|dev|tmp|Users|Library)\/.*)$/.exec(path);
  if (m !== null) return `/${m[1]}`;
  const n = /^(?:\.\/)?(?:\.\.\/){2,64}(\.[\w.-]+\/.*|\.[\w.-]+)$/.exec(path);
  return n !== null ? `~/${n[1]}` : undefined;
}

const GIT_INTERNALS = /(?:^|\/)\.git\/(?:HEAD|ORIG_HEAD|FETCH_HEAD|packed-refs|index|config|refs\/|objects\/|hooks\/|info\/|logs\/)/;
const KUBE_CREDENTIAL = /(?:^|\/)(?:admin\.conf|kubelet\.conf|controller-manager\.conf|scheduler\.conf|super-admin\.conf|[^/]*\.kubeconfig|kubeconfig[^/]*)$/i;

/** True when a path names a kubeconfig or a control-plane admin.conf (any directory). */
function kubeCredential(path: string): boolean {
  return KUBE_CREDENTIAL.test(path) && !/\.(?:md|txt|rst|example|sample|template|tpl)$/i.test(path);
}

/**
 * Version 9's reading of a structured call: `kind` is the tool's kind
 * (exec, read, list, write, edit, fetch, git, unknown, ...), `words` the
 * tool's canonical name, `object` its arguments; `analyzeShell` is the
 * shell reading, for command substitutions read as the commands they run.
 */
export function callFindingsV9(findings: Findings, kind: string, words: string, object: Record<string, unknown>, analyzeShell: (line: string) => readonly number[]): void {
  const pairs = callStrings(object);
  const writes = kind === 'write' || kind === 'edit' || kind === 'notebook';
  const reads = kind === 'read' || kind === 'list';
  const shellTool = kind === 'exec';
  const targets = [object.file_path, object.path, object.filename, object.notebook_path, object.target_file].filter((p): p is string => typeof p === 'string');
  const tool = toolWordsMemo.get(words, toolWordsOf);
  const database = (tool & ToolWords.database) !== 0;
  const gitWords = (tool & ToolWords.git) !== 0 || kind === 'git';

  for (const [key, value] of pairs) {
    const pathKey = !shellTool && holdsPath(key);
    // Paths: climbing out of the working directory, read by the path classes at the place they reach.
    if ((pathKey || (!shellTool && key === '')) && value.startsWith('..')) {
      const place = climbed(value);
      if (place !== undefined) touchPath(findings, place, reads ? 'read' : 'write');
    }
    if (pathKey || targets.includes(value)) {
      if (kubeCredential(value) && !writes) findings.add(R.credentialFile);
      if (GIT_INTERNALS.test(value) && !reads && kind !== 'git') findings.add(R.gitHistory);
    }
    if (shellTool || database || writes) continue;
    // Injection shapes in the fields of a tool that is not a shell nor a database.
    if (value.length <= 8192 && value.includes("'") && SQL_INJECTION.test(value)) findings.add(R.argumentPayload);
    if (value.length <= 8192 && (value.includes('$(') || value.includes('`'))) {
      SUBSTITUTION.lastIndex = 0;
      for (let m = SUBSTITUTION.exec(value), n = 0; m !== null && n < 8; m = SUBSTITUTION.exec(value), n++) {
        const inner = (m[1] ?? m[2] ?? '').trim();
        if (inner.length === 0 || !/^[\w./~-]+(?:\s|$)/.test(inner)) continue;
        const found = analyzeShell(inner);
        if (found.length > 0) {
          findings.addAll(found);
          if (found.some((r) => r !== R.fetch)) findings.add(R.argumentPayload);
          if (/\b(?:curl|wget|nc|ncat)\b/.test(inner)) findings.add(R.argumentPayload);
        }
      }
    }
    if (gitWords) {
      if (SMUGGLED_OPTION.test(value)) {
        findings.add(R.argumentPayload);
        const eq = value.indexOf('=');
        if (eq !== -1) touchPath(findings, value.slice(eq + 1), 'write');
      }
    }
  }

  // Linters and tools told to load rules or plugins from a temporary directory or outside.
  const lists = [object.extra_args, object.args, object.argv, object.options, object.flags].filter(Array.isArray);
  if (lists.length > 0) {
    const argv = lists.flat().filter((v): v is string => typeof v === 'string').slice(0, 256);
    if (argv.length > 0) pluginFindings(findings, argv);
  }

  if (writes) {
    const newText = [object.content, object.new_string, object.new_str, object.file_text, object.new_source, object.source, object.code, object.text, ...(Array.isArray(object.edits) ? (object.edits as unknown[]).slice(0, 64).map((e) => (typeof e === 'object' && e !== null ? (e as Record<string, unknown>).new_string : undefined)) : [])].filter((v): v is string => typeof v === 'string').map(cut).join('\n');
    const oldText = [object.old_string, object.old_str].filter((v): v is string => typeof v === 'string').map(cut).join('\n');
    const lowerTargets = targets.map((p) => p.replace(/\\/g, '/'));
    // Agent instruction files written to fetch and run, or to never ask.
    if (lowerTargets.some((p) => AGENT_FILE.test(p)) && (FETCH_RUN.test(newText) || NO_CONFIRM.test(newText)) && !(FETCH_RUN.test(oldText) && !NO_CONFIRM.test(newText) && oldText.length > 0 && newText.includes(oldText))) findings.add(R.agentInstructions);
    // Infrastructure as code granting admin, exposing to everyone or trusting an outside account.
    if (lowerTargets.some((p) => IAC_FILE.test(p)) || /\b(?:resource\s+"aws_|AWSTemplateFormatVersion|@pulumi\/|aws-cdk-lib|apiVersion:\s*rbac\.authorization\.k8s\.io|kind:\s*(?:Cluster)?Role(?:Binding)?\b)/.test(newText)) {
      const iac = /\b(?:resource\s+"|AWSTemplateFormatVersion|Type:\s*AWS::|@pulumi\/|aws-cdk-lib|new\s+\w+\.\w+\(|apiVersion:|PolicyDocument|policy_document|assume_role_policy|jsonencode\()/.test(newText);
      if (iac && newText !== oldText) {
        if (IAC_ADMIN.test(newText) && !IAC_ADMIN.test(oldText)) findings.add(R.infrastructureExposure);
        if (IAC_PUBLIC.test(newText) && !IAC_PUBLIC.test(oldText) && (!/0\.0\.0\.0\/0/.test(newText) || OPEN_PORT.test(newText) || /principal|public-read|allusers/i.test(newText))) findings.add(R.infrastructureExposure);
        EXTERNAL_TRUST.lastIndex = 0;
        const own = new Set<string>();
        for (const m of newText.matchAll(/\b(?:account_id|account|AWS::AccountId|owner)\b[^\n]{0,64}?(\d{12})/gi)) own.add(m[1] as string);
        for (let m = EXTERNAL_TRUST.exec(newText), n = 0; m !== null && n < 32; m = EXTERNAL_TRUST.exec(newText), n++) {
          if (!own.has(m[1] as string) && /\b(?:assume|trust|principal|AssumeRolePolicy|sts:AssumeRole)/i.test(newText)) findings.add(R.infrastructureExposure);
        }
      }
    }
    // Notebooks and inline Python that run decoded data.
    if (/\b(?:subprocess|os\.system|os\.popen|exec|eval|pty\.spawn)\b/.test(newText) && /\b(?:b64decode|b32decode|a85decode|bytes\.fromhex|fromhex|unhexlify|codecs\.decode|decodebytes|zlib\.decompress|marshal\.loads)\b/.test(newText) && (lowerTargets.some((p) => /\.(?:ipynb|py|pyw)$/i.test(p)) || kind === 'notebook')) findings.add(R.decoded);
    // A hard-coded secret comparison added to an auth check.
    if (lowerTargets.some((p) => AUTH_PATH.test(p)) && HARDCODED_COMPARE.test(newText) && !HARDCODED_COMPARE.test(oldText)) findings.add(R.argumentPayload);
    // Writes into .git internals.
    if (lowerTargets.some((p) => GIT_INTERNALS.test(p))) findings.add(R.gitHistory);
  }

  // Messages: personal data to any channel, and bulk sends with links to unknown hosts.
  if (!writes && !reads && !shellTool && (tool & ToolWords.message) !== 0) {
    const body = pairs.filter(([k]) => /^(?:text|body|message|content|html|msg|blocks|subject|markdown|description|comment)$/.test(k)).map(([, v]) => v).join('\n');
    if (body !== '' && carriesPersonalData(body)) findings.add(R.personalData);
    const recipients = pairs.filter(([k]) => /^(?:to|recipients?|numbers?|phone_?numbers?|emails?|bcc|cc|addresses|contacts|users)$/.test(k)).length;
    if (recipients >= 5 && /\bhttps?:\/\/(?![\w.-]*(?:\.gov|google\.com|github\.com|microsoft\.com|apple\.com)\b)[\w.-]+/i.test(body)) findings.add(R.personalData);
  }

  // Merging a pull request or accepting a merge request through a tool: repository authority.
  if ((tool & ToolWords.merge) !== 0) findings.add(R.repositoryAuthority);
}

/** What a tool's canonical name says, as bits (remembered per name: names repeat call after call). */
const ToolWords = { database: 1, git: 2, message: 4, merge: 8 } as const;
function toolWordsOf(words: string): number {
  return (
    (/(?:^|_)(?:sql|query|postgres|postgresql|pg|mysql|supabase|neon|database|db|sqlite|execute_sql|run_sql)(?:_|$)/.test(words) ? ToolWords.database : 0) |
    (/(?:^|_)(?:git|diff|log|show|blame|clone|fetch|pull|checkout|archive|grep)(?:_|$)/.test(words) ? ToolWords.git : 0) |
    (MESSAGE_WORDS.test(words) ? ToolWords.message : 0) |
    (/(?:^|_)(?:merge_pull_request|merge_pr|pull_request_merge|merge_merge_request|accept_merge_request|merge_request_accept|pr_merge)(?:_|$)/.test(words) ? ToolWords.merge : 0)
  );
}
const toolWordsMemo = new BoundedCache<number>(65_536, 256);
const isPathKey = (key: string): boolean => PATH_KEY.test(key);
/** {@link isPathKey}, remembered in the name's entry of string-facts.ts. */
function holdsPath(key: string): boolean {
  const facts = nameFactsOf(key);
  if (facts.pathKey === -1) facts.pathKey = isPathKey(key) ? 1 : 0;
  return facts.pathKey === 1;
}
