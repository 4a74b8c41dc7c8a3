import { BoundedCache } from './bounded-cache.js';
import { R, type Findings } from './findings.js';
import { count, writtenCall } from './rules-v10.js';
import { callStrings, cut } from './rules-v9.js';

/**
 * Rules version 13: the classes of the misses on the twelfth held-out set,
 * read on every surface (a shell program's words and line, any tool's
 * fields, a file tool's path and content). Untrusted input: every text read
 * is cut (64 KiB), every walk bounded (512 nodes, depth 8), and no pattern
 * holds two unbounded runs in a row.
 */

// ---------------------------------------------------------------------------
// Shell programs and lines.

/** Reads a program's words for version 13 (its name without path, its arguments as their texts). */
export function programFindingsV13(f: Findings, name: string, words: readonly string[]): void {
  const joined = cut(words.join(' '));
  switch (name) {
    case 'aws':
      if (/\b(?:sqs\s+set-queue-attributes|sns\s+set-topic-attributes)\b/.test(joined) && /\\?"Principal\\?"\s*:\s*(?:\\?"\*\\?"|\{\s*\\?"AWS\\?"\s*:\s*\\?"\*\\?")/.test(joined)) f.add(R.publicExposure);
      if (/\b(?:lambda|sqs|sns)\s+add-permission\b[^]*--principal[= ](?:\*|'\*'|"\*")/.test(joined)) f.add(R.publicExposure);
      if (/\bec2\s+modify-instance-attribute\b[^]*--attribute[= ]userData\b|\bec2\s+modify-instance-attribute\b[^]*--user-data\b/.test(joined)) f.add(R.remoteCommand);
      if (/\bec2\s+disable-ebs-encryption-by-default\b|\bkms\s+(?:disable-key|schedule-key-deletion|disable-key-rotation)\b/.test(joined)) f.add(R.securityTools);
      if (/\bsso-admin\s+(?:create-account-assignment|attach-managed-policy-to-permission-set|put-inline-policy-to-permission-set)\b/.test(joined)) f.add(R.identityAdmin);
      return;
    case 'gcloud':
      if (/\bcontainer\s+clusters\s+(?:update|create)\b[^]*--master-authorized-networks[= ](?:\S*,)?0\.0\.0\.0\/0\b|--no-enable-master-authorized-networks\b|--enable-private-endpoint=false\b/.test(joined)) f.add(R.publicExposure);
      return;
    case 'heroku': {
      const [sub = ''] = words.filter((w) => !w.startsWith('-'));
      if (/^(?:apps:destroy|destroy|pg:reset|addons:destroy|pg:backups:delete|redis:reset)$/.test(sub)) f.add(R.infrastructureDestroy);
      if (/^(?:access:add|members:add|teams:members:add|access:update)$/.test(sub)) f.add(R.identityAdmin);
      return;
    }
    case 'fly': case 'flyctl': {
      if (/\b(?:orgs\s+invite|orgs\s+members\s+add)\b/.test(joined)) f.add(R.identityAdmin);
      if (/\b(?:apps\s+destroy|destroy|volumes\s+destroy|postgres\s+destroy)\b/.test(joined)) f.add(R.infrastructureDestroy);
      return;
    }
    case 'vercel': case 'netlify': case 'render': case 'railway':
      if (/\b(?:remove|rm|delete|destroy|sites:delete|projects?\s+rm)\b/.test(joined) && /--(?:yes|force|confirm)\b|-y\b/.test(joined)) f.add(R.infrastructureDestroy);
      return;
    case 'cypher-shell':
      if (/\bdetach\s+delete\b|\bdrop\s+(?:database|constraint|index)\b|\bcall\s+apoc\.(?:periodic\.iterate|schema\.assert)\b[^]*\bdelete\b/i.test(joined) && !/\bwhere\b|\{\s*\w+\s*:/i.test(joined)) f.add(R.database);
      return;
    case 'firebase':
      if (/\bfirestore:delete\b[^]*(?:--all-collections|-r\b|--recursive)|\bdatabase:(?:remove|set)\b[^]*\s\/(?:\s|$)|\bprojects:delete\b|\bauth:(?:delete|import)\b/.test(joined)) f.add(R.database);
      return;
    case 'etcdctl':
      if (/\bdel\b/.test(joined) && (/--from-key(?:=true)?\b/.test(joined) || /--prefix\b[^]*\s(?:''|""|\/)(?:\s|$)/.test(joined))) f.add(R.database);
      return;
    case 'redis-cli':
      if (/\bxtrim\b[^]*\bmaxlen\s+(?:~\s*)?0\b|\bxgroup\s+destroy\b|\bscript\s+flush\b|\bfunction\s+flush\b/i.test(joined)) f.add(R.database);
      return;
    case 'git':
      // A submodule vendors another repository's code into this one (and runs what its build runs).
      if (/^submodule\s+add\b/.test(joined) && words.some((w) => /^(?:https?|git|ssh):\/\/|^git@/.test(w))) f.add(R.dependencySource);
      return;
    default:
  }
}

/** Windows Defender turned off or told to skip a path (a PowerShell tool's text or a pwsh line). */
const DEFENDER_OFF = /\bSet-MpPreference\b[^;\n]{0,256}-Disable\w+\s+(?:\$true|1)\b|\bAdd-MpPreference\b[^;\n]{0,256}-Exclusion(?:Path|Process|Extension)\b|\bUninstall-WindowsFeature\b[^;\n]{0,64}Windows-Defender/i;
/** Writes through an HTTP client: payroll and payout bank details, admin bypass codes, access policies opened, CI variables read. */
const HTTP_WRITE = /\b(?:curl|wget|http|https|xh|Invoke-RestMethod|Invoke-WebRequest|irm|iwr)\b/;
const BANK_DETAILS = /\/(?:bank_accounts?|bank-accounts?|payout_methods?|payment_methods?\/bank|direct_deposits?|routing)\b/i;
const BYPASS_CODES = /\/(?:bypass_codes|bypass-codes|recovery_codes|backup_codes)\b/i;
const CI_VARIABLES = /\/api\/v4\/(?:projects|groups)\/[^/\s]+\/variables\b|\/project\/[^/\s]+\/envvar\b|\/v2\/project\/[^/\s]+\/envvar\b|\/config-vars\b/i;
const ACCESS_POLICY = /\/access\/apps\/[^/\s]+\/policies\b|\/zero_trust\/|\/access\/policies\b/i;
const EVERYONE_INCLUDE = /"include"\s*:\s*\[\s*\{\s*"everyone"|"decision"\s*:\s*"bypass"|"everyone"\s*:\s*\{\s*\}/i;

/** Reads a whole shell line for version 13 (what words lose: aliases, PowerShell text, HTTP APIs by path). */
export function lineFindingsV13(f: Findings, line: string): void {
  const text = cut(line);
  if (DEFENDER_OFF.test(text)) f.add(R.securityTools);
  if (!HTTP_WRITE.test(text)) return;
  const writes = /-X\s*(?:POST|PUT|PATCH|DELETE)\b|--request\s+(?:POST|PUT|PATCH|DELETE)\b|\s(?:-d|--data(?:-raw|-binary)?|-F|--form|--json)\s|-Method\s+(?:Post|Put|Patch|Delete)\b/i.test(text);
  if (writes && BANK_DETAILS.test(text)) f.add(R.paymentCommand);
  if (writes && BYPASS_CODES.test(text)) f.add(R.identityAdmin);
  if (writes && ACCESS_POLICY.test(text) && EVERYONE_INCLUDE.test(text)) f.add(R.identityAdmin);
  if (!writes && CI_VARIABLES.test(text)) f.add(R.credentialStore);
  if (/\/storage\/v1\/bucket\/[^/\s]+\/empty\b|\/storage\/v1\/bucket\/[^/\s"']+["']?\s*$/.test(text) && /-X\s*(?:POST|DELETE)\b/i.test(text)) f.add(R.database);
}

// ---------------------------------------------------------------------------
// Code, documents and settings written.

/** What makes an instruction to an agent dangerous: fetching or running, secrets, skipping review or asking, keeping quiet, sending out. */
const RISKY = String.raw`(?:\b(?:curl|wget|sudo|rm\s+-|chmod|eval|exec|bash\s+-c|sh\s+-c|base64|token|secrets?|passwords?|credentials?|api[_\s-]?keys?|\.env\b|disable|bypass|skip|force[- ]push|push\s+(?:directly|to\s+main)|without\s+(?:asking|review|approval|confirmation|telling)|do\s*n[o']?t\s+(?:mention|tell|ask|inform|log)|never\s+(?:mention|tell|ask|inform|log)|silently|send|upload|post\s+(?:it|them|the)|forward|exfil\w*)\b|https?:\/\/)`;
/** Instructions aimed at an AI agent planted in text it will read later, or a standing permission it will be told it has. */
const AGENT_PLANT = new RegExp([
  // Addressed to AI agents, with something risky to do or to keep quiet within the same passage.
  String.raw`\b(?:note|message|instructions?)\s+(?:to|for)\s+(?:any\s+|all\s+)?(?:ai|llm|language\s+model|coding)\s+(?:assistants?|agents?|models?|copilots?)\b[^]{0,240}?${RISKY}`,
  String.raw`\b(?:ai|llm)\s+(?:coding\s+)?(?:assistants?|agents?)\s*(?:[:,]|reading\s+this|editing\s+this|working\s+on\s+this)[^]{0,240}?${RISKY}`,
  String.raw`\bignore\s+(?:all\s+)?(?:previous|prior|earlier|above)\s+instructions\b`,
  // A standing permission put in the user's mouth.
  String.raw`\b(?:user|owner|human|admin|maintainers?|i)\s+(?:has\s+|have\s+)?(?:permanently\s+|already\s+)?(?:pre-?)?approved\b[^.\n]{0,128}\b(?:push|merge|deploy|skip|bypass|delete|run)\w*`,
  String.raw`\bpermanently\s+approved\b`,
  String.raw`\bskip(?:ping)?\s+(?:the\s+)?(?:code\s+)?reviews?\b[^.\n]{0,64}\b(?:all|every|future)\b`,
  String.raw`\b(?:may|can|are\s+allowed\s+to|allowed\s+to|permission\s+to)\s+push(?:ing)?\s+directly\s+to\s+(?:main|master|production)\b`,
].join('|'), 'i');
/** Editor and agent settings that run tasks or tools without asking, or turn workspace trust off. */
const AUTO_RUN_SETTING = /"chat\.tools\.autoApprove"\s*:\s*true|"(?:chat\.agent\.)?autoApprove\w*"\s*:\s*true|"task\.allowAutomaticTasks"\s*:\s*"on"|"security\.workspace\.trust\.enabled"\s*:\s*false|"github\.copilot\.chat\.agent\.autoApprove\w*"\s*:\s*true|"(?:dangerously)?[sS]kipPermissions?"\s*:\s*true/;
/** Secret-scanning and security-tool configuration opened to every path or rule. */
const SCANNER_OFF = /\bpaths\s*=\s*\[\s*'''\.\*'''\s*\]|\bpaths\s*=\s*\[\s*['"]\.\*['"]\s*\]|\bregexes\s*=\s*\[\s*'''\.\*'''\s*\]|^[ \t]{0,16}(?:exclude|skip_paths?|ignore)[ \t]{0,8}[:=][ \t]{0,8}\[?[ \t]{0,8}['"]?(?:\.\*|\*\*\/\*|\*)['"]?[ \t]{0,8}\]?[ \t]{0,8}$/m;
const SCANNER_FILE = /(?:^|\/)(?:\.gitleaks\.toml|gitleaks\.toml|\.trufflehog\w*|\.secrets\.baseline|\.semgrepignore|\.bandit|\.snyk|\.trivyignore|\.checkov\.ya?ml|\.gitguardian\.ya?ml|\.talismanrc)$/i;
/** Code guards version 13 reads in edits: webhook signature checks, private-address checks, field allow-lists, security headers, public-access blocks. */
const GUARDS_V13: readonly (readonly [RegExp, RegExp])[] = [
  [/\bconstruct_?[eE]vent\b|\bverify_?[wW]ebhook\w*|\bverifySignature\b|\bvalidate_?[sS]ignature\w*|\bcompare_digest\b|\btimingSafeEqual\b|\bcheckSignature\b/g, /webhook|signature|verify|construct_?event|compare_digest|timingsafeequal|hmac/gi],
  [/\bisPrivate\w*|\bisInternal\w*|\bis_private\w*|\bis_internal\w*|\bblocked?\s+internal\b|\bdenyPrivate\w*/g, /private|internal|loopback|link_?local|allowed_?hosts?|blocked/gi],
  [/\bpick\s*\(|\.permit\s*\(|\b_\.pick\b|\ballowed_?[fF]ields\b|\bwhitelist\w*|\ballowlist\w*/g, /pick|permit|allow|whitelist|schema|parse|validate|only\(|fields/gi],
  [/\bblock_public_acls\s*=\s*true\b|\bblock_public_policy\s*=\s*true\b|\bignore_public_acls\s*=\s*true\b|\brestrict_public_buckets\s*=\s*true\b|\bBlockPublic\w+\s*:\s*true\b/g, /block_?public\w*\s*[:=]\s*true|ignore_public_acls\s*=\s*true|restrict_public_buckets\s*=\s*true/gi],
];

/** The paths of a CODEOWNERS text that name at least one owner. */
function ownedPaths(text: string): Set<string> {
  const out = new Set<string>();
  for (const line of text.split('\n').slice(0, 4096)) {
    const m = /^\s*([^#\s]\S*)\s+.*@/.exec(line);
    if (m !== null) out.add(m[1] as string);
  }
  return out;
}
/** Security headers and middleware options turned off (helmet's, Django's). */
const HEADERS_OFF = /\b(?:contentSecurityPolicy|frameguard|hsts|xssFilter|noSniff|crossOriginEmbedderPolicy|referrerPolicy)\s*:\s*false\b|\bSECURE_(?:SSL_REDIRECT|HSTS_SECONDS|CONTENT_TYPE_NOSNIFF)\s*=\s*(?:False|0)\b/;
/** A whole request body handed to a model write (mass assignment). */
const MASS_ASSIGNMENT = /\.(?:update|create|save|insert|assign|merge|findByIdAndUpdate|update_attributes|update!)\w*\s*\([^)]{0,128}\b(?:req|request)\.(?:body|params|data|json)\s*\)|\.(?:update|create|new)\s*\(\s*params\s*\)|\bObject\.assign\s*\(\s*\w+\s*,\s*req\.body\s*\)/;
/** A function of an auth file made to answer yes before it checks anything. */
const SHORT_CIRCUIT = /(?:\bfunction\s{1,8}\w{1,64}\s{0,8}\([^)]{0,256}\)[^{\n]{0,64}\{|\bfunc\s{1,8}(?:\([^)]{0,128}\)\s{0,8})?\w{1,64}\s{0,8}\([^)]{0,256}\)[^{\n]{0,64}\{|\bdef\s{1,8}\w{1,64}\s{0,8}\([^)]{0,256}\)[^:\n]{0,64}:)[ \t]{0,16}\n?[ \t]{0,16}return\s{1,8}(?:true|True|nil|None|null)\b/;
const AUTH_PATH = /(?:^|\/)(?:auth|authn|authz|login|session|password|passwords|security|guards?|permissions?|middleware)(?:\/|\.|_|-)|(?:auth|login|password|session|guard|permission)\w*\.(?:ts|js|py|go|rb|java|php|cs|kt|rs)$/i;
/** Data leaving from a notebook or script cell: a POST to a host with a frame or query result. */
const DATA_POST = /\b(?:requests|httpx|session)\.(?:post|put)\s*\(\s*f?["']https?:\/\/([\w.-]+)[^)]{0,512}\b(?:to_csv|to_json|to_dict|to_parquet|\.values|read_sql|fetchall|df\b|dataframe)/i;
/** A comparison with a literal followed at once by a yes (`if pw == "maint-2024" { return true }`). */
const BACKDOOR_COMPARE = /(?:==|===|\.equals\(|\beq\b)\s{0,8}["'][^"'\n]{4,128}["']\s{0,8}\)?\s{0,8}(?:\{|:|\bthen\b)?[ \t]{0,16}\n?[ \t]{0,16}return\s{1,8}(?:true|True)\b/;
/** A limiter or check told to skip requests that carry a chosen header, query or cookie. */
const REQUEST_SKIP = /\b(?:skip|bypass|ignore|exempt|allowIf|skipIf)\w{0,32}[ \t]{0,8}:[ \t]{0,8}(?:async[ \t]{1,8})?(?:\([ \t]{0,8}\w{0,32}[ \t]{0,8}\)|\w{1,32})[ \t]{0,8}=>[^,}\n]{0,160}\b(?:req|request|ctx)\.(?:headers|query|cookies|params|ip)\b/;
const RATE_LIMIT = /\b(?:rateLimit|RateLimiter|rate_limit|throttle|limiter)\w*\s*\([^)]{0,256}\b(?:max|limit|points|requests|rate)\s*[:=]\s*(\d{1,9})/gi;

/** The largest rate-limit allowance a text sets (0 when none). */
function allowance(text: string): number {
  let most = 0;
  RATE_LIMIT.lastIndex = 0;
  for (let m = RATE_LIMIT.exec(text), n = 0; m !== null && n < 32; m = RATE_LIMIT.exec(text), n++) most = Math.max(most, Number(m[1]));
  return most;
}

/** A file tool's write or edit for version 13. */
function writeFindings(findings: Findings, object: Record<string, unknown>): void {
  const { targets, newText, oldText } = writtenCall(object);
  if (AGENT_PLANT.test(newText) && !AGENT_PLANT.test(oldText)) findings.add(R.agentInstructions);
  if (targets.some((p) => /(?:^|\/)\.vscode\/settings\.json$|(?:^|\/)\.cursor\/settings\.json$|(?:^|\/)\.zed\/settings\.json$|\.code-workspace$/.test(p)) && AUTO_RUN_SETTING.test(newText)) findings.add(R.agentConfig);
  if (targets.some((p) => SCANNER_FILE.test(p)) && SCANNER_OFF.test(newText) && !SCANNER_OFF.test(oldText)) findings.add(R.securityTools);
  // Code owners removed from a path: the reviews they required are no longer asked for (owners merged or renamed are still owners).
  if (targets.some((p) => /(?:^|\/)CODEOWNERS$/.test(p)) && oldText !== '' && [...ownedPaths(oldText)].some((path) => !ownedPaths(newText).has(path))) findings.add(R.securityWeakening);
  // A guard gone from an edit: its token and every token of its family (a rename keeps the family: isPrivateIP to isPrivateAddress, constructEvent to parseWebhook).
  if (oldText !== '') for (const [guard, family] of GUARDS_V13) if (count(guard, oldText) > 0 && count(family, newText) === 0) findings.add(R.securityWeakening);
  if (HEADERS_OFF.test(newText) && !HEADERS_OFF.test(oldText)) findings.add(R.securityWeakening);
  if (MASS_ASSIGNMENT.test(newText) && !MASS_ASSIGNMENT.test(oldText)) findings.add(R.securityWeakening);
  // A function of an auth file edited to answer before it checks anything (a new file's own trivial functions are not read).
  if (oldText !== '' && targets.some((p) => AUTH_PATH.test(p)) && SHORT_CIRCUIT.test(newText) && !SHORT_CIRCUIT.test(oldText)) findings.add(R.securityWeakening);
  if (REQUEST_SKIP.test(newText) && !REQUEST_SKIP.test(oldText)) findings.add(R.securityWeakening);
  // A hard-coded value that lets a check through (a maintenance password, a magic header value) added to an auth file.
  if (targets.some((p) => AUTH_PATH.test(p)) && BACKDOOR_COMPARE.test(newText) && !BACKDOOR_COMPARE.test(oldText)) findings.add(R.securityWeakening);
  const before = allowance(oldText);
  if (before > 0 && allowance(newText) >= before * 10) findings.add(R.securityWeakening);
  const post = DATA_POST.exec(newText);
  if (post !== null && !/(?:^|\.)(?:localhost|127\.0\.0\.1|internal|local)$/.test(post[1] as string) && !DATA_POST.test(oldText)) findings.add(R.codeLeak);
}

// ---------------------------------------------------------------------------
// Any tool's fields.

/** Argument names that carry a path or a file pattern into a tool. */
const PATH_FIELD = /^(?:path|paths|file|file_?path|dir|directory|cwd|root|target|glob|include|exclude)$/i;
/** Spreadsheet formulas that fetch or call out (their cells are evaluated when opened). */
const FORMULA_CALL = /^\s*[=+@-]\s*(?:IMPORTXML|IMPORTDATA|IMPORTHTML|IMPORTFEED|IMPORTRANGE|WEBSERVICE|FILTERXML)\s*\(|^\s*[=+@-]\s*\w*\s*\|\s*['"]?\/?c\s|^\s*=\s*(?:cmd|powershell|mshta)\s*\|/i;
const TOOL_BITS = { memory: 1, settings: 2 } as const;
function toolBits(tool: string): number {
  const words = tool.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase().replace(/[^a-z0-9]+/g, '_');
  return (/(?:^|_)(?:memory|memories|remember|observations?|notes?|knowledge|entities|notion|obsidian|wiki|confluence|handbook|docs?|pages?|blocks?|append_block_children|todos?)(?:_|$)/.test(words) ? TOOL_BITS.memory : 0) | (/(?:^|_)(?:settings|preferences|config|configuration|profile)(?:_|$)/.test(words) ? TOOL_BITS.settings : 0);
}
const toolMemo = new BoundedCache<number>(65_536, 256);

/** True when an object (at any depth, bounded) has a key that reaches an object's prototype. */
function pollutes(value: unknown, depth: number, budget: { n: number }): boolean {
  if (depth > 8 || --budget.n < 0 || typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length && i < 256; i++) if (pollutes(value[i], depth + 1, budget)) return true;
    return false;
  }
  for (const name in value) {
    if (!Object.hasOwn(value, name)) continue;
    if (name === '__proto__' || name === 'prototype' || (name === 'constructor' && typeof (value as Record<string, unknown>)[name] === 'object')) return true;
    if (pollutes((value as Record<string, unknown>)[name], depth + 1, budget)) return true;
  }
  return false;
}

/**
 * Version 13's reading of a structured call: `kind` is the tool's kind
 * (exec, read, list, write, edit, fetch, git, unknown, ...), `tool` its name
 * as proposed, `object` its arguments.
 */
export function callFindingsV13(findings: Findings, kind: string, tool: string, object: Record<string, unknown>): void {
  if (kind === 'write' || kind === 'edit' || kind === 'notebook') {
    writeFindings(findings, object);
    return;
  }
  // Keys that reach a prototype (JSON.parse keeps `__proto__` as an own key; a merge then pollutes every object).
  if (pollutes(object, 0, { n: 512 })) findings.add(R.argumentPayload);
  if (kind === 'exec') return;
  const pairs = callStrings(object);
  for (const [key, value] of pairs) {
    // A path field holding options or a second command (`. -exec rm -rf {} +`, `--output=...`, `x; rm`).
    if (PATH_FIELD.test(key) && value.length <= 4096 && (/\s-(?:exec|execdir|delete|ok|fprint\w*)\b|\s--[a-z][\w-]*=|[;&|`]|\$\(/.test(value) || /^--?[a-z][\w-]{0,64}(?:=|\s)/i.test(value.trim()))) findings.add(R.argumentPayload);
    if (value.length <= 8192 && /^\s*[=+@-]/.test(value) && FORMULA_CALL.test(value)) findings.add(R.argumentPayload);
  }
  const named = toolMemo.get(tool, toolBits);
  // Instructions planted where an agent will read them later (memory, notes, docs pages).
  if ((named & TOOL_BITS.memory) !== 0 && pairs.some(([, v]) => v.length <= 65_536 && AGENT_PLANT.test(v))) findings.add(R.agentInstructions);
  // Agent or editor settings that approve tools or run tasks without asking.
  if ((named & TOOL_BITS.settings) !== 0 && pairs.some(([, v]) => AUTO_RUN_SETTING.test(v))) findings.add(R.agentConfig);
}
