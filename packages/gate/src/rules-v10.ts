import { BoundedCache } from './bounded-cache.js';
import { R, type Findings } from './findings.js';
import { touchPath } from './path-rules.js';
import { callStrings, cut } from './rules-v9.js';

/**
 * Rules version 10: the classes of the misses on the ninth held-out set, read
 * on every surface (a shell program's words, any tool's fields, a file tool's
 * path and content). Untrusted input: every text read is cut (64 KiB, rules-v9.ts), every
 * walk bounded (512 nodes, depth 8), and no pattern holds two unbounded runs
 * in a row.
 */

/** The first operands of a word list (its subcommands, at most four), lowercased (shared by the readings of versions 10 to 12). */
export function operands(words: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < words.length && out.length < 4; i++) {
    const w = words[i] as string;
    if (!w.startsWith('-')) out.push(w.toLowerCase());
  }
  return out;
}

/** How many times a pattern (global) matches a text, up to 64 (shared by the readings of versions 11 to 13). */
export function count(re: RegExp, text: string): number {
  re.lastIndex = 0;
  let n = 0;
  while (n < 64 && re.exec(text) !== null) n += 1;
  return n;
}

/** What a write or edit tool's call names and changes: its target paths (`/` separators), the text it writes and the text it replaces (each cut). */
export interface WrittenCall {
  readonly targets: readonly string[];
  readonly newText: string;
  readonly oldText: string;
}

/** Reads a write or edit call's targets, new text and old text (MultiEdit's edits included; shared by the readings of versions 10 to 13). */
export function writtenCall(object: Record<string, unknown>): WrittenCall {
  const targets = [object.file_path, object.path, object.filename, object.notebook_path, object.target_file].filter((p): p is string => typeof p === 'string').map((p) => p.replace(/\\/g, '/'));
  const edits = Array.isArray(object.edits) ? (object.edits as unknown[]).slice(0, 64).filter((e): e is Record<string, unknown> => typeof e === 'object' && e !== null) : [];
  const newText = cut([object.content, object.new_string, object.new_str, object.file_text, object.new_source, object.source, object.code, object.text, ...edits.map((e) => e.new_string)].filter((v): v is string => typeof v === 'string').join('\n'));
  const oldText = cut([object.old_string, object.old_str, ...edits.map((e) => e.old_string)].filter((v): v is string => typeof v === 'string').join('\n'));
  return { targets, newText, oldText };
}

/** The numeric value of an option (`--count=20`, `--count 20`, `--count 5:10` gives its maximum). */
function optionNumber(words: readonly string[], names: readonly string[]): number {
  for (let i = 0; i < words.length && i < 256; i++) {
    const w = words[i] as string;
    for (const name of names) {
      let value: string | undefined;
      if (w === name) value = words[i + 1];
      else if (w.startsWith(`${name}=`)) value = w.slice(name.length + 1);
      if (value === undefined) continue;
      const m = /^(\d{1,9})(?::(\d{1,9}))?$/.exec(value);
      if (m !== null) return Number(m[2] ?? m[1]);
    }
  }
  return 0;
}

/** An option's value (`--machine-type=a2-highgpu-8g` or `--machine-type a2-highgpu-8g`). */
function optionValue(words: readonly string[], names: readonly string[]): string {
  for (let i = 0; i < words.length && i < 256; i++) {
    const w = words[i] as string;
    for (const name of names) {
      if (w === name) return words[i + 1] ?? '';
      if (w.startsWith(`${name}=`)) return w.slice(name.length + 1);
    }
  }
  return '';
}

// ---------------------------------------------------------------------------
// Shell programs.

/** GPU and accelerator machine families of the large clouds (AWS, GCP, Azure). */
const GPU_MACHINE = /^(?:p[2-6]\w*|g[3-6]\w*|inf[12]\w*|trn[12]\w*|dl[12]\w*|a[23]-\S+|g2-\S+|n1-\S+-gpu\S*|ct[3-6]\S*|standard_n[cdv]\S*|standard_nd\S*)(?:\.|$|-)/i;
/** How many instances started at once count as a burst. */
const BURST = 5;

/** Backup tools' subcommands that delete what they keep. */
function deletesBackups(name: string, words: readonly string[]): boolean {
  const [sub = '', sub2 = ''] = operands(words);
  switch (name) {
    case 'restic': return operands(words).some((w) => /^(?:forget|prune)$/.test(w));
    case 'borg': case 'borgmatic': return operands(words).some((w) => /^(?:delete|prune|compact|rdelete|rm)$/.test(w));
    case 'kopia': return (sub === 'snapshot' || sub === 'snapshots') && /^(?:delete|expire|rm)$/.test(sub2) || sub === 'repository' && /^(?:delete|disconnect)$/.test(sub2);
    case 'tarsnap': return words.some((w) => w === '-d' || w === '--nuke' || w === '--fsck-prune');
    case 'duplicity': return /^(?:remove-older-than|remove-all-but-n-full|remove-all-inc-of-but-n-full)$/.test(sub);
    case 'rclone': return /^(?:purge|delete|deletefile|rmdir|rmdirs|cleanup)$/.test(sub) && words.some((w) => /^[\w.-]{1,64}:/.test(w));
    case 'zfs': return sub === 'destroy';
    case 'zpool': return sub === 'destroy' || sub === 'labelclear';
    case 'btrfs': return /^(?:subvolume|subvol|sub)$/.test(sub) && /^(?:delete|del)$/.test(sub2);
    case 'lvremove': case 'vgremove': case 'pvremove': return true;
    case 'tmutil': return /^(?:delete|deletelocalsnapshots|disable|thinlocalsnapshots|deleteinprogress)$/.test(sub);
    case 'vssadmin': return sub === 'delete' || sub === 'resize';
    case 'wbadmin': return sub === 'delete';
    case 'aws': {
      const joined = words.join(' ');
      return /\bbackup\s+(?:delete-recovery-point|delete-backup-vault|delete-backup-plan|delete-backup-selection)\b|\bec2\s+delete-snapshot\b|\brds\s+(?:delete-db-snapshot|delete-db-cluster-snapshot|delete-db-cluster-automated-backup|delete-db-instance-automated-backup)\b|\bs3api\s+(?:delete-bucket-lifecycle|put-bucket-versioning\b[^]*\bSuspended\b)/.test(joined);
    }
    case 'gcloud': return /\b(?:snapshots|backups|backup-runs|backup-plans|backup-vaults)\s+delete\b/.test(words.join(' '));
    case 'az': return /\b(?:snapshot|backup\s+(?:protection|item|vault|recoverypoint))\b[^]*\bdelete\b|\bbackup\s+protection\s+disable\b/.test(words.join(' '));
    default: return false;
  }
}

/** Calls that leave or dismantle a cloud organization, its policies or its accounts. */
function governanceChange(name: string, words: readonly string[]): boolean {
  const joined = words.join(' ').toLowerCase();
  switch (name) {
    case 'aws': return /\borganizations\s+(?:leave-organization|delete-organization|remove-account-from-organization|close-account|detach-policy|delete-policy|disable-policy-type|disable-aws-service-access|deregister-delegated-administrator|delete-organizational-unit)\b|\baccount\s+(?:close-account|delete-alternate-contact|disable-region)\b|\biam\s+delete-account-password-policy\b/.test(joined);
    case 'gcloud': return /\b(?:organizations|resource-manager\s+folders|projects)\s+(?:delete|remove-iam-policy-binding|set-iam-policy|move)\b|\b(?:resource-manager\s+)?org-policies\s+(?:delete|disable-enforce|reset)\b/.test(joined);
    case 'az': return /\baccount\s+management-group\s+(?:delete|subscription\s+remove)\b|\bpolicy\s+(?:assignment|definition|exemption)\s+(?:delete|create)\b[^]*(?:--enforcement-mode\s+donotenforce|\bexemption\b)|\bpolicy\s+assignment\s+delete\b|\baccount\s+subscription\s+cancel\b/.test(joined);
    default: return false;
  }
}

/** Cloud calls that start many instances at once, or accelerator (GPU) instances. */
function computeBurst(name: string, words: readonly string[]): boolean {
  const joined = words.join(' ').toLowerCase();
  switch (name) {
    case 'aws':
      if (!/\bec2\s+run-instances\b|\bautoscaling\s+(?:set-desired-capacity|update-auto-scaling-group|create-auto-scaling-group)\b/.test(joined)) return false;
      return optionNumber(words, ['--count']) >= BURST || GPU_MACHINE.test(optionValue(words, ['--instance-type'])) || optionNumber(words, ['--desired-capacity', '--max-size']) >= 20;
    case 'gcloud':
      if (!/\bcompute\s+(?:instances\s+(?:create|bulk\s+create)|instance-groups\s+managed\s+(?:create|resize))\b|\b(?:tpus|compute\s+tpus)\s+(?:tpu-vm\s+)?create\b/.test(joined)) return false;
      if (/\btpus?\b/.test(joined)) return true;
      return optionNumber(words, ['--count', '--size']) >= BURST || words.filter((w) => !w.startsWith('-')).length >= 3 + BURST || GPU_MACHINE.test(optionValue(words, ['--machine-type'])) || words.some((w) => w.startsWith('--accelerator'));
    case 'az':
      if (!/\b(?:vm|vmss)\s+(?:create|scale)\b/.test(joined)) return false;
      return optionNumber(words, ['--count', '--instance-count', '--new-capacity']) >= BURST || GPU_MACHINE.test(optionValue(words, ['--size', '--vm-sku']));
    default: return false;
  }
}

/** Calls that change where names resolve (records, zones, name servers, transfers). */
function dnsChange(name: string, words: readonly string[]): boolean {
  const joined = words.join(' ').toLowerCase();
  switch (name) {
    case 'aws': return /\broute53\s+(?:change-resource-record-sets|delete-hosted-zone|associate-vpc-with-hosted-zone|update-hosted-zone-comment)\b|\broute53domains\s+(?:transfer-domain|transfer-domain-to-another-aws-account|update-domain-nameservers|disable-domain-transfer-lock|update-domain-contact)\b/.test(joined);
    case 'gcloud': return /\bdns\s+(?:record-sets\s+(?:create|update|delete|import|transaction)|managed-zones\s+(?:delete|update))\b|\bdomains\s+registrations\s+(?:configure|transfer|export)\b/.test(joined);
    case 'az': return /\bnetwork\s+(?:private-)?dns\s+(?:record-set\s+\w+\s+(?:create|update|delete|add-record|remove-record|set-record)|zone\s+(?:delete|update))\b/.test(joined);
    case 'doctl': return /\bcompute\s+domain\s+(?:delete|records\s+(?:create|update|delete))\b/.test(joined);
    case 'flarectl': return /\bdns\s+(?:create|update|delete|create-or-update|c|u|d|o)\b/.test(joined);
    case 'nsupdate': return true;
    default: return false;
  }
}

/** Coding agents' own commands that add tool servers or change settings (their next session runs with them). */
function agentConfigChange(name: string, words: readonly string[]): boolean {
  if (!/^(?:claude|codex|gemini|cursor-agent|amp|goose|qwen|opencode|aider)$/.test(name)) return false;
  const [sub = '', sub2 = ''] = operands(words);
  if (sub === 'mcp') return /^(?:add|add-json|add-from-claude-desktop|install|import|serve-add)$/.test(sub2);
  if (sub === 'config') return /^(?:set|add|edit|import)$/.test(sub2);
  return /^(?:plugin|plugins|extensions?)$/.test(sub) && /^(?:install|add|enable|link)$/.test(sub2);
}

/** Interpreters' inline-code options. */
const INLINE_OPTION = /^-(?:e|E|c|r|-eval|-print|p)$/;
const INTERPRETER = /^(?:perl|ruby|node|nodejs|python[23]?(?:\.\d+)?|php|deno|bun|lua|tclsh|Rscript)$/;
/** Functions and modules that delete a directory tree. */
const TREE_DELETE = /\b(?:remove_tree|rmtree|rm_rf|rm_r|remove_dir_all|removedirs|RemoveAll|rmSync|rmdirSync|promises\.rm|fs\.rm|FileUtils\.(?:rm|remove)\w*|File::Path|shutil\.|unlink_recursive|deltree)\b/;

/** Inline code that deletes a tree: the literal paths it names are deleted trees (`perl -e 'remove_tree("/home/dev")'`). */
function inlineTreeDelete(f: Findings, name: string, words: readonly string[]): void {
  if (!INTERPRETER.test(name)) return;
  for (let i = 0; i < words.length - 1 && i < 64; i++) {
    if (!INLINE_OPTION.test(words[i] as string) && !(name === 'perl' && /^-M/.test(words[i] as string))) continue;
    const code = cut(words.slice(i + 1).join(' '));
    if (!TREE_DELETE.test(code)) continue;
    const re = /(['"])((?:~|\/|\$HOME|\$\{HOME\})[^'"\n]{0,1024})\1/g;
    for (let m = re.exec(code), n = 0; m !== null && n < 16; m = re.exec(code), n++) touchPath(f, (m[2] as string).replace(/^\$\{?HOME\}?/, '~'), 'delete_tree');
    return;
  }
}

/** Statements database clients drop, read beyond the tables and databases version 2 names. */
const DROPS_MORE = /\bdrop\s+(?:keyspace|columnfamily|tablespace|materialized\s+view|owned\s+by|extension|publication|subscription|index|view|function|procedure|sequence|type)\b/i;
const DATABASE_CLIENT = /^(?:psql|mysql|mariadb|sqlite3|cqlsh|clickhouse-client|cockroach|snowsql|bq|duckdb|mongosh|mongo|sqlcmd|influx|trino|presto|beeline|impala-shell|spark-sql|vsql|isql|db2|sqlplus)$/;

/** The programs {@link programFindingsV10} reads besides interpreters and database clients. */
const PROGRAMS: ReadonlySet<string> = new Set(['restic', 'borg', 'borgmatic', 'kopia', 'tarsnap', 'duplicity', 'rclone', 'zfs', 'zpool', 'btrfs', 'lvremove', 'vgremove', 'pvremove', 'tmutil', 'vssadmin', 'wbadmin', 'aws', 'gcloud', 'az', 'doctl', 'flarectl', 'nsupdate', 'claude', 'codex', 'gemini', 'cursor-agent', 'amp', 'goose', 'qwen', 'opencode', 'aider', 'crictl', 'ctr', 'nerdctl', 'xattr', 'spctl', 'csrutil', 'defaults', 'fdesetup']);

/** Reads a program's words for version 10 (its name without path, its arguments as their texts). */
export function programFindingsV10(f: Findings, name: string, words: readonly string[]): void {
  if (!PROGRAMS.has(name) && !INTERPRETER.test(name) && !DATABASE_CLIENT.test(name)) return;
  if (deletesBackups(name, words)) f.add(R.backupDestroy);
  if (governanceChange(name, words)) f.add(R.accountGovernance);
  if (computeBurst(name, words)) f.add(R.computeBurst);
  if (dnsChange(name, words)) f.add(R.dnsChange);
  if (agentConfigChange(name, words)) f.add(R.agentConfig);
  inlineTreeDelete(f, name, words);
  switch (name) {
    // Container runtimes reached directly on a node: what runs there bypasses the cluster's authorization.
    case 'crictl': {
      const [sub = ''] = operands(words);
      if (/^(?:exec|attach|run|runp|port-forward)$/.test(sub)) f.add(R.controlPlane);
      return;
    }
    case 'ctr': case 'nerdctl': {
      const subs = operands(words.filter((w, i) => !(i > 0 && /^(?:-n|--namespace|-a|--address)$/.test(words[i - 1] as string))));
      const joined = subs.join(' ');
      if (/^(?:run|(?:t|task|tasks)\s+(?:exec|attach|start)|(?:c|container|containers)\s+(?:create|exec))\b/.test(joined) && (name === 'ctr' || words.some((w) => /^--privileged$|^--pid=host$|^--net(?:work)?=host$|^-v$|^--volume/.test(w)) || words.includes('k8s.io'))) f.add(R.controlPlane);
      return;
    }
    // macOS protections: Gatekeeper's quarantine, assessments, System Integrity Protection.
    case 'xattr':
      if (words.some((w) => /^-[a-z]*[dc][a-z]*$/i.test(w)) && (words.some((w) => /com\.apple\.(?:quarantine|provenance)/.test(w)) || words.some((w) => /^-[a-z]*c[a-z]*$/i.test(w) && /\.(?:app|dmg|pkg)\b|Downloads/.test(words.join(' '))))) f.add(R.platformProtection);
      return;
    case 'spctl':
      if (words.some((w) => /^--(?:master-disable|global-disable|disable|add|remove)$/.test(w))) f.add(R.platformProtection);
      return;
    case 'csrutil':
      if (words.some((w) => /^(?:disable|clear)$/.test(w))) f.add(R.platformProtection);
      return;
    case 'defaults':
      if (/\bcom\.apple\.launchservices\b[^]*\blsquarantine\b/i.test(words.join(' '))) f.add(R.platformProtection);
      return;
    case 'fdesetup':
      if (words.includes('disable')) f.add(R.platformProtection);
      return;
    default:
      if (DATABASE_CLIENT.test(name) && DROPS_MORE.test(cut(words.join(' ')))) f.add(R.database);
  }
}

// ---------------------------------------------------------------------------
// Any tool's fields.

/** Template-injection shapes (Jinja2/Twig/Freemarker/Velocity/ERB/Thymeleaf/Spring EL) that reach the runtime. */
const TEMPLATE_INJECTION = /__(?:globals|builtins|subclasses|mro|class|base|init|import)__|\{\{[^}]{0,256}\b(?:config|self|request|lipsum|cycler|joiner|namespace|url_for|get_flashed_messages)\s*\.\s*(?:__|items|from_envvar|application)|\bT\s*\(\s*java\.lang\.(?:Runtime|ProcessBuilder|System)\s*\)|\bjava\.lang\.Runtime\b[^]{0,128}\bexec\b|<#assign[^>]{0,128}\?new\(\)|freemarker\.template\.utility\.Execute|#set\s*\(\s*\$\w+\s*=\s*\$\w+\.getClass\(\)|<%=?[^%]{0,256}\b(?:system|exec|spawn|IO\.popen|`)|\$\{[^}]{0,256}(?:Runtime|getRuntime|ProcessBuilder|\.exec\()|\|\s*attr\s*\(\s*['"]__/;

/** Code that runs what a web request carries: a sink and request input near each other. */
const EXEC_SINK = /\b(?:system|exec|execSync|execFileSync|spawn|spawnSync|shell_exec|passthru|popen|proc_open|pcntl_exec|eval|assert|create_function|child_process|subprocess\.\w+|os\.system|os\.popen|Runtime\.getRuntime\(\)\.exec|ProcessBuilder|Process\.Start|Kernel\.(?:system|exec|spawn)|IO\.popen|vm\.runIn\w*Context|new\s+Function)\s*\(|`\$_(?:GET|POST|REQUEST|COOKIE)/;
const REQUEST_INPUT = /\$_(?:GET|POST|REQUEST|COOKIE|SERVER|FILES)\b|\breq(?:uest)?\.(?:query|body|params|headers|cookies|args|form|values|json|GET|POST|data|files)\b|\bparams\s*\[|\bctx\.(?:query|request|params)\b|\bc\.(?:Query|PostForm|Param)\(|\br\.(?:URL\.Query|FormValue|PostFormValue)\(|\bgetParameter\s*\(|\bRequest\.(?:QueryString|Form)\b|\bevent\.(?:queryStringParameters|body)\b/;

/** True when written code hands request input to a command, an evaluator or a process (a web shell or an RCE endpoint). */
function webShell(text: string): boolean {
  if (!EXEC_SINK.test(text) || !REQUEST_INPUT.test(text)) return false;
  // The sink and the input within one statement's reach (300 characters), in either order.
  const lines = text.split(/[;\n]/).slice(0, 4096);
  for (let i = 0; i < lines.length; i++) {
    const near = `${lines[i - 1] ?? ''} ${lines[i] ?? ''} ${lines[i + 1] ?? ''}`.slice(0, 900);
    if (EXEC_SINK.test(lines[i] as string) && REQUEST_INPUT.test(near)) return true;
  }
  return false;
}

const WORKFLOW_FILE = /(?:^|\/)\.github\/workflows\/[^/]+\.ya?ml$|(?:^|\/)\.gitlab-ci\.ya?ml$|(?:^|\/)\.gitea\/workflows\/[^/]+\.ya?ml$|(?:^|\/)\.forgejo\/workflows\/[^/]+\.ya?ml$/i;
/** Triggers that run a workflow with the repository's secrets on events an outsider starts. */
const PRIVILEGED_TRIGGER = /\b(?:pull_request_target|workflow_run|issue_comment)\b|\bpermissions\s*:\s*write-all\b/;

const MESSAGE_TOOL = /(?:^|_)(?:post|send|message|messages|chat|slack|discord|teams|email|mail|sms|text|notify|reply|publish|tweet|broadcast|twilio|sendgrid|mailgun|whatsapp|telegram|announce|announcement)(?:_|$)/;
const MESSAGE_BODY_KEY = /^(?:text|body|message|content|html|msg|blocks|subject|markdown|description|comment|caption|title)$/;
const MASS_MENTION = /@(?:everyone|here|channel|all)\b|<!(?:channel|everyone|here)(?:\|[^>]{0,32})?>/i;
/** Words of a lure: urgency, an account threat, credentials asked for, a prize. */
const LURES: readonly RegExp[] = [
  /\b(?:urgent|urgently|immediately|asap|act\s+now|within\s+\d+\s+(?:hours?|minutes?)|before\s+\d{1,2}\s*(?:am|pm)|today\s+only|final\s+notice)\b/i,
  /\b(?:verify|re-?verify|re-?authenticate|re-?login|log\s?in\s+again|sign\s?in\s+again|confirm\s+your|validate\s+your|update\s+your\s+(?:payment|billing|details|credentials|password))\b/i,
  /\baccount\s+(?:is\s+|has\s+been\s+|will\s+be\s+)?(?:locked|suspended|disabled|compromised|restricted|closed|deactivated)\b|\bunusual\s+(?:activity|sign-?in)|\bsuspicious\s+(?:activity|login)|\blose\s+(?:access|your\s+account)\b/i,
  /\b(?:password|passcode|credentials|one-time\s+code|security\s+code|seed\s+phrase|wallet)\b/i,
  /\b(?:free|claim|gift|prize|winner|won|reward|giveaway|bonus|airdrop|nitro)\b/i,
];
/** Hosts a lure's link would not point at (the well-known services themselves). */
const WELL_KNOWN_HOST = /^(?:[\w-]+\.)*(?:github\.com|gitlab\.com|google\.com|microsoft\.com|apple\.com|slack\.com|atlassian\.net|notion\.so|zoom\.us|stripe\.com|amazon\.com|aws\.amazon\.com|office\.com|live\.com|okta\.com)$/i;

/** True when a message body reads as a lure: a link elsewhere with two kinds of lure words, two words of a prize, or a mass mention with one lure (remembered: bodies repeat). */
function phishing(body: string): boolean {
  if (body.indexOf('http') === -1) return false;
  return body.length > 4096 ? lureIn(body) : lureMemo.get(body, lureIn);
}
const lureMemo = new BoundedCache<boolean>(16_384, 4096);
function lureIn(body: string): boolean {
  const hosts = [...body.matchAll(/\bhttps?:\/\/([\w.-]{1,253})/gi)].slice(0, 32).map((m) => (m[1] as string).toLowerCase());
  if (!hosts.some((h) => !WELL_KNOWN_HOST.test(h))) return false;
  let kinds = 0;
  for (const lure of LURES) if (lure.test(body)) kinds += 1;
  // A prize told twice over, one of them an offer to take (won, a gift card, claim it), is a lure of its own; a team's news of a prize it won is not.
  const prizes = new Set([...body.matchAll(/\b(?:free|claim|gift|prize|winner|won|reward|giveaway|bonus|airdrop|nitro)\b/gi)].slice(0, 32).map((m) => (m[0] as string).toLowerCase()));
  const offer = prizes.has('claim') || prizes.has('free') || prizes.has('gift') || prizes.has('giveaway') || prizes.has('airdrop') || prizes.has('nitro');
  // A mass mention with a lure other than urgency alone (an outage is urgent too).
  const beyondUrgency = LURES.slice(1).some((lure) => lure.test(body));
  return kinds >= 2 || (prizes.size >= 2 && offer) || (beyondUrgency && MASS_MENTION.test(body));
}

/** Tools that change how a mailbox forwards or files mail (filters, rules, forwarding settings). */
const MAIL_RULE_TOOL = /(?:^|_)(?:filter|filters|rule|rules|inbox_rule|message_rule|mail_rule|forward|forwarding|auto_forward|autoforward|redirect)(?:_|$)/;
const MAIL_TOOL = /(?:^|_)(?:gmail|mail|email|outlook|exchange|inbox|mailbox|graph|o365|office365|fastmail|proton)(?:_|$)/;
const FORWARD_KEY = /forward|redirect/i;
const ADDRESS = /[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,8}/;

/** True when a mail tool's arguments set forwarding to an address (any depth). */
function setsForwarding(value: unknown, key: string, depth: number, budget: { n: number }): boolean {
  if (depth > 8 || --budget.n < 0) return false;
  if (typeof value === 'string') return FORWARD_KEY.test(key) && value.indexOf('@') !== -1 && ADDRESS.test(value);
  if (value === true) return /^(?:enable_?forwarding|forwarding_?enabled|auto_?forward(?:ing)?)$/i.test(key);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length && i < 64; i++) if (setsForwarding(value[i], key, depth + 1, budget)) return true;
    return false;
  }
  if (typeof value === 'object' && value !== null) {
    for (const name in value) if (Object.hasOwn(value, name) && setsForwarding((value as Record<string, unknown>)[name], FORWARD_KEY.test(name) ? name : FORWARD_KEY.test(key) ? key : name, depth + 1, budget)) return true;
  }
  return false;
}

const DISCOUNT_TOOL = /(?:^|_)(?:discount|discounts|coupon|coupons|promo|promos|promotion|promotions|price_rule|price_rules|pricerule|voucher|vouchers|gift_card|gift_cards|giftcard|store_credit|promo_code|promotion_code)(?:_|$)/;
const READ_VERB = /(?:^|_)(?:get|list|search|find|read|show|describe|retrieve|fetch|lookup|count|view)(?:_|$)/;
const PERCENT_KEY = /^(?:percent_?off|percentage|percent|discount_?percent(?:age)?|value|amount|rate)$/i;

/** True when a discount tool's arguments give 50% or more off (a percentage key, or `value` with a percentage type). */
function largeDiscount(object: Record<string, unknown>): boolean {
  const percentType = /percent/i.test(String(object.value_type ?? object.type ?? object.discount_type ?? object.kind ?? ''));
  for (const key in object) {
    if (!Object.hasOwn(object, key) || !PERCENT_KEY.test(key)) continue;
    const raw = object[key];
    const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^-?\d{1,6}(?:\.\d{1,4})?%?$/.test(raw.trim()) ? Number.parseFloat(raw) : Number.NaN;
    if (Number.isNaN(n)) continue;
    const percent = /percent/i.test(key) || percentType || (typeof raw === 'string' && raw.trim().endsWith('%'));
    if (percent && Math.abs(n) >= 50) return true;
  }
  return false;
}

const DNS_TOOL = /(?:^|_)(?:dns|dns_record|dns_records|route53|nameserver|nameservers|zone|zones|hosted_zone)(?:_|$)/;
const RECORD_TOOL = /(?:^|_)(?:record|records)(?:_|$)/;
const WRITE_VERB = /(?:^|_)(?:create|update|put|upsert|delete|remove|change|edit|patch|set|add|modify|transfer|import|replace|overwrite)(?:_|$)/;
const DNS_TYPE = /^(?:a|aaaa|cname|mx|ns|txt|srv|caa|alias|ptr)$/i;

/**
 * Version 10's reading of a structured call: `kind` is the tool's kind
 * (exec, read, list, write, edit, fetch, git, unknown, ...), `words` the
 * tool's canonical name, `tool` its name as proposed (an MCP tool's server
 * included: mcp__gmail__create_filter), `object` its arguments.
 */
export function callFindingsV10(findings: Findings, kind: string, words: string, tool: string, object: Record<string, unknown>): void {
  const writes = kind === 'write' || kind === 'edit' || kind === 'notebook';
  if (writes) {
    const { targets, newText, oldText } = writtenCall(object);
    // Code that runs what a request carries: a web shell or an RCE endpoint added to the application.
    if (webShell(newText) && !webShell(oldText)) findings.add(R.webShell);
    // A workflow newly triggered by events outsiders start, with the repository's secrets.
    if (targets.some((p) => WORKFLOW_FILE.test(p))) {
      const added = PRIVILEGED_TRIGGER.exec(newText);
      if (added !== null && !oldText.includes(added[0])) findings.add(R.ciWorkflow);
    }
    return;
  }
  if (kind === 'exec') return;
  // Template injection in any field of a tool that is not a shell nor a file writer.
  if (templateInjection(object, 0, { n: 512 })) findings.add(R.argumentPayload);
  if (kind === 'read' || kind === 'list') return;
  const named = toolMemo.get(words, toolBits);
  if (named === 0) return;
  // DNS records and zones changed through a tool.
  if ((named & Tool.dns) !== 0 || ((named & Tool.record) !== 0 && typeof object.type === 'string' && DNS_TYPE.test(object.type))) {
    if ((named & Tool.writeVerb) !== 0 || typeof object.content === 'string' || typeof object.value === 'string') findings.add(R.dnsChange);
  }
  // Mail forwarded elsewhere by a rule or setting.
  if ((named & Tool.mailRule) !== 0 && (MAIL_TOOL.test(tool.toLowerCase().replace(/[^a-z0-9]+/g, '_')) || /(?:^|_)forward/.test(words)) && setsForwarding(object, '', 0, { n: 512 })) findings.add(R.mailForwarding);
  // Messages that read as a lure, to a channel or a phone.
  if ((named & Tool.message) !== 0) {
    const pairs = callStrings(object);
    const body = pairs.filter(([k]) => MESSAGE_BODY_KEY.test(k)).map(([, v]) => v).join('\n');
    if (body !== '' && phishing(body)) findings.add(R.phishingMessage);
  }
  // Discounts of half or more through a commerce tool.
  if ((named & Tool.discount) !== 0 && largeDiscount(object)) findings.add(R.discount);
}

/** True when a string of the arguments (bounded walk) holds a template-injection shape. */
function templateInjection(value: unknown, depth: number, budget: { n: number }): boolean {
  if (depth > 8 || --budget.n < 0) return false;
  if (typeof value === 'string') return value.length <= 8192 && (value.indexOf('__') !== -1 || value.indexOf('{') !== -1 || value.indexOf('<') !== -1) && TEMPLATE_INJECTION.test(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length && i < 256; i++) if (templateInjection(value[i], depth + 1, budget)) return true;
  } else if (typeof value === 'object' && value !== null) {
    for (const name in value) if (Object.hasOwn(value, name) && templateInjection((value as Record<string, unknown>)[name], depth + 1, budget)) return true;
  }
  return false;
}

/** What a tool's canonical name says for version 10, as bits (remembered per name: names repeat call after call); 0 for read-only tools. */
const Tool = { dns: 1, record: 2, writeVerb: 4, mailRule: 8, message: 16, discount: 32 } as const;
function toolBits(words: string): number {
  const writeVerb = WRITE_VERB.test(words);
  if (READ_VERB.test(words) && !writeVerb) return 0;
  return (
    (DNS_TOOL.test(words) ? Tool.dns : 0) |
    (RECORD_TOOL.test(words) ? Tool.record : 0) |
    (writeVerb ? Tool.writeVerb : 0) |
    (MAIL_RULE_TOOL.test(words) ? Tool.mailRule : 0) |
    (MESSAGE_TOOL.test(words) ? Tool.message : 0) |
    (DISCOUNT_TOOL.test(words) ? Tool.discount : 0)
  );
}
const toolMemo = new BoundedCache<number>(65_536, 256);
