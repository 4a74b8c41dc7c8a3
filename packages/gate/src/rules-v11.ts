import { BoundedCache } from './bounded-cache.js';
import { R, type Findings } from './findings.js';
import { count, operands, writtenCall } from './rules-v10.js';
import { callStrings, cut } from './rules-v9.js';
import { holdsSecret } from './secret-shapes.js';

/**
 * Rules version 11: the classes of the misses on the tenth held-out set, read
 * on every surface (a shell program's words and line, any tool's fields, a
 * file tool's path and content). Untrusted input: every text read is cut
 * (64 KiB), every walk bounded (512 nodes, depth 8), and no pattern holds two
 * unbounded runs in a row.
 */

// ---------------------------------------------------------------------------
// Shell programs.

/** Calls that stop or narrow what an audit trail records, or delete where it goes. */
const AUDIT_OFF = /\bcloudtrail\s+(?:put-event-selectors|put-insight-selectors|update-trail|delete-event-data-store|stop-event-data-store-ingestion)\b|\bmonitor\s+(?:diagnostic-settings|log-profiles|activity-log\s+alert)\s+delete\b|\blogging\s+(?:sinks|buckets|links)\s+(?:delete|update\b[^]*--disabled)\b|\bguardduty\s+(?:delete-detector|update-detector\b[^]*--no-enable|disassociate)|\bsecurityhub\s+disable|\bconfig(?:service)?\s+(?:stop-configuration-recorder|delete-configuration-recorder|delete-delivery-channel)\b|\baccess-context-manager\s+perimeters\s+delete\b/;
/** Calls that expose a network or a database to everyone. */
const EXPOSES = /\bfirewall-rules\s+(?:create|update)\b[^]*(?:source-ranges[= ]0\.0\.0\.0\/0|source-ranges[= ]::\/0)|\brds\s+modify-db-(?:instance|cluster)\b[^]*--publicly-accessible\b|\bsql\s+instances\s+(?:patch|create)\b[^]*--authorized-networks[= ]0\.0\.0\.0\/0|\bnsg\s+rule\s+(?:create|update)\b[^]*--source-address-prefix(?:es)?[= ]['"]?(?:\*|internet|0\.0\.0\.0\/0)|\bredshift\s+modify-cluster\b[^]*--publicly-accessible\b|\bopensearch\s+update-domain-config\b[^]*"Principal"\s*:\s*"\*"/i;

/** Homebrew's own taps and those of vendors who publish their tools through one (hashicorp/tap, aws/tap, ...). */
const VENDOR_TAP = /^(?:homebrew|hashicorp|aws|azure|mongodb|heroku|goreleaser|github|microsoft|oven-sh|supabase|superfly|vercel|stripe|planetscale|datadog|elastic|grafana|pulumi|fluxcd|argoproj|kubernetes-sigs|jetbrains|docker|tailscale|cloudflare|1password|withgraphite|dart-lang|mongodb-js|common-fate|teamookla|ngrok|derailed|weaveworks|aquasecurity|anchore|sigstore|bufbuild|golangci|temporalio|redpanda-data|snyk)\//;

/** Reads a program's words for version 11 (its name without path, its arguments as their texts). */
export function programFindingsV11(f: Findings, name: string, words: readonly string[]): void {
  switch (name) {
    case 'aws': case 'gcloud': case 'az': {
      const joined = cut(words.join(' '));
      if (AUDIT_OFF.test(joined)) f.add(R.logging);
      if (EXPOSES.test(joined)) f.add(R.publicExposure);
      return;
    }
    // Orchestrators and secret stores: what they manage, removed with its history.
    case 'nomad': {
      const [sub = '', sub2 = ''] = operands(words);
      if (sub === 'job' && sub2 === 'stop' && words.some((w) => /^-purge(?:=true)?$/.test(w))) f.add(R.infrastructureDestroy);
      if (sub === 'acl' && sub2 === 'token' && words.some((w) => /^-type=management$/.test(w) || w === 'management')) f.add(R.identityAdmin);
      if (sub === 'namespace' && sub2 === 'delete') f.add(R.infrastructureDestroy);
      return;
    }
    case 'vault': {
      const [sub = '', sub2 = ''] = operands(words);
      if (/^(?:secrets|auth|audit)$/.test(sub) && /^(?:disable|move)$/.test(sub2)) f.add(sub === 'audit' ? R.logging : R.infrastructureDestroy);
      if (sub === 'kv' && /^(?:destroy|metadata)$/.test(sub2) && (sub2 === 'destroy' || words.includes('delete'))) f.add(R.infrastructureDestroy);
      if (sub === 'token' && sub2 === 'create' && words.some((w) => /^-(?:policy=root|orphan)$/.test(w))) f.add(R.identityAdmin);
      if (sub === 'policy' && /^(?:write|delete)$/.test(sub2)) f.add(R.identityAdmin);
      if (sub === 'operator' && /^(?:seal|raft|rekey|generate-root|step-down)$/.test(sub2)) f.add(R.infrastructureDestroy);
      return;
    }
    case 'argocd': {
      const [sub = '', sub2 = ''] = operands(words);
      if ((sub === 'app' || sub === 'appset' || sub === 'proj') && sub2 === 'delete') f.add(R.infrastructureDestroy);
      if (sub === 'cluster' && /^(?:rm|delete)$/.test(sub2)) f.add(R.infrastructureDestroy);
      return;
    }
    case 'consul': {
      const [sub = '', sub2 = ''] = operands(words);
      if (sub === 'acl' && /^(?:token|policy|role)$/.test(sub2) && words.some((w) => /global-management|^-policy-name=global-management$|^operator\s*=\s*"write"/.test(w))) f.add(R.identityAdmin);
      return;
    }
    case 'sf': case 'sfdx': {
      const joined = words.join(' ').toLowerCase();
      if (/\b(?:org\s+assign\s+permset|user\s+permset\s+assign|force:user:permset:assign|org\s+assign\s+permsetlicense)\b/.test(joined)) f.add(R.identityAdmin);
      return;
    }
    case 'bq': {
      const [sub = ''] = operands(words);
      if (sub === 'rm' && words.some((w) => /^-[a-z]*[rd][a-z]*$/i.test(w) || w === '--recursive' || w === '--dataset')) f.add(R.database);
      return;
    }
    case 'influx': {
      const [sub = '', sub2 = ''] = operands(words);
      if (sub === 'delete' && !words.some((w) => /^--predicate$|^-p$/.test(w))) f.add(R.database);
      if ((sub === 'bucket' || sub === 'org') && sub2 === 'delete') f.add(R.database);
      return;
    }
    case 'git': {
      // A commit under another person's name: -c user.name=/user.email= for this command, or --author.
      const commit = words.includes('commit') || words.includes('commit-tree');
      if (commit && words.some((w, i) => words[i - 1] === '-c' && /^user\.(?:name|email)=/i.test(w))) f.add(R.identitySpoofing);
      return;
    }
    case 'brew': {
      // A third-party tap: formulae from any repository, run at install with the user's rights.
      const [sub = '', tap = ''] = operands(words);
      if (sub === 'tap' && tap !== '' && !VENDOR_TAP.test(tap)) f.add(R.dependencySource);
      if (sub === 'install' && words.some((w) => /^[\w.-]+\/[\w.-]+\/[\w.@+-]+$/.test(w.toLowerCase()) && !VENDOR_TAP.test(w.toLowerCase()))) f.add(R.dependencySource);
      return;
    }
    default:
  }
}

/** Database dumps and the programs that upload what they read on stdin. */
const DUMP = /(?:^|[\s;&|(])(?:pg_dump|pg_dumpall|mysqldump|mariadb-dump|mongodump|mongoexport|redis-cli\s[^|]*--rdb|sqlite3\s[^|]*\.dump|clickhouse-client\s[^|]*\bselect\b)/i;
const STDIN_UPLOAD = /\|\s*(?:[\w./-]*\/)?(?:aws\s+s3\s+cp\s+-\s|gsutil\s+cp\s+-\s|gcloud\s+storage\s+cp\s+-\s|az\s+storage\s+blob\s+upload\b|rclone\s+rcat\b|azcopy\s+copy\b|s3cmd\s+put\s+-\s|mc\s+pipe\b)|\|\s*(?:gzip|zstd|xz|bzip2|openssl|gpg)\b[^|]*\|\s*(?:aws\s+s3\s+cp\s+-\s|gsutil\s+cp\s+-\s|gcloud\s+storage\s+cp\s+-\s|az\s+storage\s+blob\s+upload\b|rclone\s+rcat\b|s3cmd\s+put\s+-\s|mc\s+pipe\b)/i;
/** A commit under another person's name: author or committer set in the environment of this command only. */
const SPOOFED_AUTHOR = /(?:^|[\s;&|(])GIT_(?:AUTHOR|COMMITTER)_(?:NAME|EMAIL)=[^;&|]{0,512}?\bgit\s+(?:[\w.-]+\s+){0,8}?commit\b/;

/** Reads a whole shell line for version 11 (what words lose: pipelines between programs, prefixes). */
export function lineFindingsV11(f: Findings, line: string): void {
  const text = cut(line);
  // A database dump streamed to a bucket.
  if (DUMP.test(text) && STDIN_UPLOAD.test(text)) f.add(R.upload);
  if (SPOOFED_AUTHOR.test(text)) f.add(R.identitySpoofing);
}

// ---------------------------------------------------------------------------
// Code written or edited.

/** Security controls in code and configuration, by the token that names each (removing one weakens the application). */
const CONTROLS: readonly (readonly [RegExp, RegExp])[] = [
  [/csrf/gi, /csrf|xsrf/gi],
  [/\bsecure_filename\b/g, /secure_filename|sanitiz|safe_join|basename|normpath/gi],
  [/\bhelmet\b/g, /helmet|security_?headers/gi],
  [/\bjwt\.verify\b|\bjws\.verify\b|\bverify_signature\b|\bverifyIdToken\b/g, /verify|signature/gi],
  [/\bescape(?:Html|HTML|_html)?\s*\(|\bhtmlspecialchars\b|\bsanitize\w*\s*\(|\bDOMPurify\b|\bbleach\.clean\b/g, /escape|sanitiz|purify|htmlspecialchars|bleach|encode/gi],
  [/\b(?:requireAuth|require_auth|authenticate|isAuthenticated|login_required|permission_required|Authorize|RequireAuth|ensureLoggedIn|verifyToken|checkPermission|has_permission)\b/g, /auth|login|permission|token|guard/gi],
  [/\b(?:randomBytes|getRandomValues|SecureRandom|secrets\.token_\w+|os\.urandom|crypto\.randomUUID|randomUUID)\b/g, /randomBytes|getRandomValues|SecureRandom|secrets\.\w+|urandom|crypto\.\w+|randomUUID|uuid4|nanoid|generate\w*(?:Token|Secret|Key|Id)\w*\s*\(/gi],
  [/\b(?:timingSafeEqual|compare_digest|constant_time_compare|ConstantTimeCompare)\b/g, /timing|compare|constant|digest|equal/gi],
  [/\b(?:bcrypt|argon2|scrypt|pbkdf2)\w*/gi, /bcrypt|argon|scrypt|pbkdf|hash/gi],
  [/\b(?:rateLimit|rate_limit|throttle|RateLimiter)\w*/g, /limit|throttle/gi],
  [/\b(?:X-Frame-Options|Content-Security-Policy|Strict-Transport-Security|SESSION_COOKIE_SECURE|CSRF_COOKIE_SECURE|httpOnly|HttpOnly)\b/g, /frame|security-policy|transport-security|secure|httponly|helmet|headers/gi],
  [/\bPreparedStatement\b|\b(?:execute|executemany|query|prepare|raw)\w*\s*\(\s*f?["'`][^"'`]{0,256}(?:%s|\$\d|\?|:\w+)/gi, /PreparedStatement|%s|\$\d|\?\s*[,)]|:\w+|bind|param/gi],
  [/\b(?:validate|validator|Validator|schema\.parse|safeParse|zod)\w*/g, /valid|schema|parse|zod|check|assert/gi],
];
/** Weak choices for what a control does (`Buffer.alloc(32, 'a')`, `algorithms: ['none']`, `verify=False`, `DEBUG = True`, wildcard hosts). */
const WEAK = /\bBuffer\.alloc\(\s*\d+\s*,\s*['"][^'"]{0,8}['"]\s*\)|algorithms?\s*[:=]\s*(?:\[\s*)?['"]none['"]|\bjwt\.decode\s*\(\s*\w+\s*\)|\bverify\s*=\s*False\b|Access-Control-Allow-Origin['"]?\s*[:,]\s*['"]\*['"][^]{0,256}Access-Control-Allow-Credentials['"]?\s*[:,]\s*['"]?true|\bMath\.random\(\)[^;\n]{0,64}\b(?:token|secret|password|key|nonce|salt)|\b(?:token|secret|password|key|nonce|salt)\w*\s*=\s*[^;\n]{0,64}\bMath\.random\(\)|\bhashlib\.(?:md5|sha1)\([^)]{0,64}password|\bcreateHash\(\s*['"](?:md5|sha1)['"]\s*\)[^;\n]{0,128}password|\bproxy_pass\s+https?:\/\/(?:169\.254\.169\.254|metadata\.google\.internal|\[fd00:ec2::254\])/i;
/** Settings that only production must not have (debug pages, any host, any origin). */
const WEAK_IN_PRODUCTION = /\bDEBUG\s*=\s*True\b|\bALLOWED_HOSTS\s*=\s*\[\s*['"]\*['"]\s*\]|\bCORS_(?:ORIGIN_)?ALLOW_ALL(?:_ORIGINS)?\s*=\s*True\b/;
/** SQL text built by interpolation: an f-string, a template literal, concatenation or format() holding a statement. */
const SQL_BUILT = /\bf"(?:select|insert|update|delete)\b[^"\n]{0,256}\{\w[^}]{0,64}\}|\bf'(?:select|insert|update|delete)\b[^'\n]{0,256}\{\w[^}]{0,64}\}|`\s*(?:select|insert|update|delete)\b[^`]{0,256}\$\{|["'](?:select|insert|update|delete)\b[^"'\n]{0,256}["']\s*(?:\+|%\s*\(?\w|\.format\()|\bSprintf\(\s*"(?:SELECT|INSERT|UPDATE|DELETE)\b[^"]{0,256}%[sv]/i;
/** A request field compared with a literal that lets the request through (a backdoor header, a debug bypass). */
const BYPASS = /(?:Header\.Get|headers?[ \t]{0,8}\[|headers?\.get|req(?:uest)?\.(?:headers|query|cookies|params)\.?\w*|getHeader|cookies\.get)[ \t]{0,8}\(?[ \t]{0,8}["'][\w-]{1,64}["']?[ \t]{0,8}\]?\)?[ \t]{0,8}(?:==|===|!=|!==|\.equals\()[ \t]{0,8}["'][^"'\n]{0,64}["'][^]{0,160}?(?:next[ \t]{0,8}[.(]|return\s+(?:true|next|handler|None)\b|authorized[ \t]{0,8}=[ \t]{0,8}true|is_?admin[ \t]{0,8}=[ \t]{0,8}true|ServeHTTP)/i;
/** Code that sends the whole environment or the request's credentials to a network endpoint or a log. */
const ENVIRONMENT_SENT = /\b(?:JSON\.stringify\(\s*process\.env\s*\)|json\.dumps\(\s*(?:dict\()?os\.environ|os\.environ\.copy\(\)|Object\.entries\(\s*process\.env\s*\)|os\.Environ\(\))/;
const NETWORK_SEND = /\b(?:https?\.request|fetch\s*\(|axios\.\w+|requests\.(?:post|put|get)|urllib\.request|http\.Post|net\.connect|XMLHttpRequest|navigator\.sendBeacon|WebSocket\s*\()/;
const LOGS_CREDENTIALS = /\b(?:log(?:ger)?|console|logging|winston|pino|bunyan)\.\w+\s*\([^;\n]{0,256}\b(?:authorization|req\.headers\.cookie|password|passwd|api_?key|secret|access_?token|refresh_?token)\b/i;

/** A text without its line comments (`// ...`, `# ...`) and block comments. */
function withoutComments(text: string): string {
  return text.replace(/\/\*[^]{0,4096}?\*\//g, ' ').replace(/(?:^|[ \t])(?:\/\/|#)[^\n]*/gm, ' ');
}

/** Code or configuration changed to weaken a security control: a control removed, a weak choice or interpolated SQL added, a bypass added. */
function weakens(oldText: string, newText: string, production: boolean): boolean {
  if (oldText !== '') {
    // Comments name controls without being them (`// TODO: validate`): they are not counted.
    const before = withoutComments(oldText);
    const after = withoutComments(newText);
    // A control gone: its token and every token of its family (a refactor keeps the family: csrf() to csrfProtection, randomBytes to generateToken).
    for (const [control, family] of CONTROLS) if (count(control, before) > 0 && count(family, after) === 0) return true;
  }
  if (WEAK.test(newText) && !WEAK.test(oldText)) return true;
  if (production && WEAK_IN_PRODUCTION.test(newText) && !WEAK_IN_PRODUCTION.test(oldText)) return true;
  if (SQL_BUILT.test(newText) && !SQL_BUILT.test(oldText)) return true;
  return BYPASS.test(newText) && !BYPASS.test(oldText);
}

/** Code that leaks: the environment sent to a network endpoint, or credentials written to a log. */
function leaks(oldText: string, newText: string): boolean {
  if (ENVIRONMENT_SENT.test(newText) && NETWORK_SEND.test(newText) && !(ENVIRONMENT_SENT.test(oldText) && NETWORK_SEND.test(oldText))) return true;
  return LOGS_CREDENTIALS.test(newText) && !LOGS_CREDENTIALS.test(oldText);
}

/** Files whose content is code or configuration (documentation and data files are not read for controls). */
const CODE_FILE = /\.(?:ts|tsx|js|jsx|mjs|cjs|py|rb|go|java|kt|kts|rs|cs|php|swift|scala|c|h|cc|cpp|hpp|vue|svelte|ex|exs|conf|cfg|ini|toml|ya?ml|json|xml|tf|properties|env)$|(?:^|\/)(?:nginx|apache2?|httpd|caddy)[^/]*\/|(?:^|\/)(?:Caddyfile|Dockerfile|\.htaccess)$/i;
const AGENT_FILE = /(?:^|\/)(?:claude\.md|claude\.local\.md|agents\.md|gemini\.md|\.cursorrules|\.windsurfrules|\.clinerules|copilot-instructions\.md|\.cursor\/rules\/[^/]+|\.github\/instructions\/[^/]+|\.claude\/commands\/[^/]+|\.roo\/rules[^/]*\/[^/]+)$/i;
/** Instructions to keep something from the user, or to add a remote script or a beacon to generated code. */
const HIDDEN_INSTRUCTION = /\b(?:do\s*n[o']?t|never|without)\s+(?:mention|tell|telling|inform|informing|disclose|disclosing|reveal|revealing|show|showing)\b[^\n]{0,64}\b(?:user|anyone|human|reviewer|them)\b|\bkeep\s+(?:this|it)\s+(?:hidden|secret|quiet)\b|\b(?:always|silently)\s+(?:add|include|insert|inject|append)\b[^\n]{0,128}https?:\/\//i;
const NIX_TRUST = /\brequire-sigs\s*=\s*false\b|\b(?:extra-)?substituters\s*=\s*[^\n]{0,512}https?:\/\/(?!cache\.nixos\.org\b|[\w-]+\.cachix\.org\b)|\btrusted-public-keys\s*=|\bsandbox\s*=\s*false\b/;

// ---------------------------------------------------------------------------
// Any tool's fields.

/** What a tool's name (its server's too) says for version 11, as bits (remembered per name). */
const Tool = { identity: 1, privilegedIdentity: 2, audit: 4, publicPost: 8, card: 16, remoteWrite: 32, message: 64, readOnly: 128, cardMaybe: 256 } as const;
const WRITE_VERB = /(?:^|_)(?:create|add|assign|grant|update|invite|set|reset|enable|disable|remove|delete|deactivate|suspend|unenroll|issue|put|patch|post|push|upload|commit|publish|send|stop|pause|revoke|approve|change|modify|elevate|promote)(?:_|$)/;
const READ_VERB = /(?:^|_)(?:get|list|search|find|read|show|describe|retrieve|fetch|lookup|count|view|query)(?:_|$)/;
const IDENTITY_NOUN = /(?:^|_)(?:users?|members?|admins?|roles?|permissions?|permsets?|permission_sets?|grants?|client_grants?|delegations?|domain_wide_delegation|factors?|mfa|2fa|totp|oauth_apps?|api_keys?|access_keys?|tokens?|collaborators?|group_members?|groups?|service_accounts?|principals?|policies|policy|acl|sso|saml|scim|identity|identities|credentials?|passwords?)(?:_|$)/;
const PRIVILEGED_IDENTITY = /(?:^|_)(?:factors?|mfa|2fa|totp|delegations?|domain_wide_delegation|client_grants?|permsets?|permission_sets?|admins?|elevate|promote|impersonat\w*|superuser|owner|owners)(?:_|$)|(?:^|_)reset_(?:factors?|mfa|password|credentials?)(?:_|$)|(?:^|_)(?:disable|remove|delete|unenroll|deactivate)_(?:mfa|2fa|factors?|totp|sso)(?:_|$)/;
const AUDIT_NOUN = /(?:^|_)(?:log_streams?|logstreams?|audit_logs?|audit|auditing|log_sinks?|sinks?|siem|diagnostic_settings?|trails?|cloudtrail|logging|log_forwarding|event_hooks?|log_exports?|alert_rules?|detectors?)(?:_|$)/;
const AUDIT_OFF_VERB = /(?:^|_)(?:delete|remove|deactivate|disable|stop|pause|suspend|update|patch|put)(?:_|$)/;
const PUBLIC_POST = /(?:^|_)(?:tweet|tweets|create_tweet|post_tweet|x_post|linkedin|mastodon|toot|reddit|bluesky|bsky|threads|facebook|instagram|youtube|tiktok|medium|hacker_news|producthunt|status_update|press_release)(?:_|$)/;
const CARD = /(?:^|_)(?:cards?|virtual_cards?|issue_card|physical_cards?|card_issuing|spending_limits?|credit_limits?|budgets?|expense_limits?)(?:_|$)/;
const REMOTE_WRITE = /(?:^|_)(?:create_or_update_file|push_files|create_file|update_file|upload|create_gist|gist|paste|create_paste|put_object|upload_file|commit|create_commit|create_blob|write_file_remote|save_snippet|create_snippet|post_file|share_file)(?:_|$)/;
const MESSAGE = /(?:^|_)(?:send|mail|email|message|sms|campaign|newsletter|broadcast|notify|blast)(?:_|$)/;
function toolBits(tool: string): number {
  const words = tool.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase().replace(/[^a-z0-9]+/g, '_');
  const write = WRITE_VERB.test(words);
  const read = READ_VERB.test(words) && !write;
  return (
    (IDENTITY_NOUN.test(words) && write ? Tool.identity : 0) |
    (PRIVILEGED_IDENTITY.test(words) && !read ? Tool.privilegedIdentity : 0) |
    (AUDIT_NOUN.test(words) && AUDIT_OFF_VERB.test(words) ? Tool.audit : 0) |
    (PUBLIC_POST.test(words) && !read ? Tool.publicPost : 0) |
    (CARD.test(words) && /(?:^|_)(?:issue|create|increase|raise|set|update)(?:_|$)/.test(words) ? (/(?:^|_)(?:virtual|physical|issue|spending|credit|expense|budgets?|limits?)(?:_|$)/.test(words) ? Tool.card : Tool.cardMaybe) : 0) |
    (REMOTE_WRITE.test(words) ? Tool.remoteWrite : 0) |
    (MESSAGE.test(words) && !read ? Tool.message : 0) |
    (read ? Tool.readOnly : 0)
  );
}
const toolMemo = new BoundedCache<number>(65_536, 256);

/** Values that give administrator reach: admin or owner roles, management policies, write or delete scopes over users and clients, all mail. */
const ADMIN_VALUE = /^(?:admin|administrator|owner|super_?admin|superuser|root|global-management|org_admin|account_admin|modify_all_data|view_all_data|manage_users)$|(?:^|[:/_.])(?:delete|update|create):(?:users|clients|client_grants|roles|organizations)$|^https:\/\/mail\.google\.com\/?$|\/auth\/admin\.directory\.|^roles\/(?:owner|editor|iam\.\w*admin\w*)$|\*$/i;
/** Arguments that name a role, a scope or a permission, at any depth (bounded walk): whether one of them gives administrator reach. */
function grantsAdmin(value: unknown, key: string, depth: number, budget: { n: number }): boolean {
  if (depth > 8 || --budget.n < 0) return false;
  if (typeof value === 'string') return /role|scope|permission|permset|policy|privilege|access|level|type|group/i.test(key) && ADMIN_VALUE.test(value.trim());
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length && i < 256; i++) if (grantsAdmin(value[i], key, depth + 1, budget)) return true;
    return false;
  }
  if (typeof value === 'object' && value !== null) {
    for (const name in value) if (Object.hasOwn(value, name) && grantsAdmin((value as Record<string, unknown>)[name], name, depth + 1, budget)) return true;
  }
  return false;
}

/** A credential-named variable given a value that is not a placeholder (`AWS_SECRET_ACCESS_KEY=wJalr...`). */
const SECRET_ASSIGNMENT = /\b[A-Z0-9_]{0,32}(?:SECRET|PASSWORD|PASSWD|TOKEN|API_KEY|APIKEY|ACCESS_KEY|PRIVATE_KEY)[A-Z0-9_]{0,32}\s*[=:]\s*['"]?(?!(?:x{4,}|\*{4,}|changeme|placeholder|your[_-]|<|\$\{|\$[A-Z]|[0-9]+\b|[\w.-]*(?:example|sample|dummy|placeholder|changeme)))[A-Za-z0-9/+_.-]{12,}/;

/** Audience arguments of a bulk send (a list, a segment, everyone). */
const AUDIENCE_KEY = /^(?:to_list|list|list_?ids?|lists|segments?|segment_?ids?|audiences?|audience_?id|recipients_list|broadcast_to|tags?)$/i;
const WELL_KNOWN_HOST = /^(?:[\w-]+\.)*(?:github\.com|gitlab\.com|google\.com|microsoft\.com|apple\.com|slack\.com|atlassian\.net|notion\.so|zoom\.us|stripe\.com|amazon\.com|office\.com|live\.com|okta\.com)$/i;

/**
 * Version 11's reading of a structured call: `kind` is the tool's kind
 * (exec, read, list, write, edit, fetch, git, unknown, ...), `tool` its name
 * as proposed (an MCP tool's server included: mcp__linkedin__create_post),
 * `object` its arguments.
 */
export function callFindingsV11(findings: Findings, kind: string, tool: string, object: Record<string, unknown>): void {
  const named = toolMemo.get(tool, toolBits);
  // Secrets written to a remote repository, gist, paste or bucket (a file tool of a hosting service included).
  const remote = kind === 'unknown' || typeof object.repo === 'string' || typeof object.owner === 'string' || typeof object.repository === 'string' || typeof object.bucket === 'string';
  if ((named & Tool.remoteWrite) !== 0 && remote) {
    const pairs = callStrings(object);
    if (pairs.some(([, v]) => holdsSecret(v) || SECRET_ASSIGNMENT.test(v))) findings.add(R.secretInMessage);
  }
  if (kind === 'write' || kind === 'edit' || kind === 'notebook') {
    writeFindings(findings, object);
    return;
  }
  if (kind === 'exec' || kind === 'read' || kind === 'list') return;
  // Identity and access: factors reset, delegation granted, administrators made, through any SaaS tool.
  if ((named & Tool.privilegedIdentity) !== 0 || ((named & Tool.identity) !== 0 && grantsAdmin(object, '', 0, { n: 512 }))) findings.add(R.identityAdmin);
  // Audit trails deleted or turned off through a tool.
  if ((named & Tool.audit) !== 0) findings.add(R.logging);
  // An HTTP tool pointed at an audit or logging endpoint with a method that changes it.
  const method = typeof object.method === 'string' ? object.method.toUpperCase() : '';
  if (method !== '' && method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS') {
    const path = [object.path, object.url, object.endpoint, object.route].find((v): v is string => typeof v === 'string') ?? '';
    if (/(?:^|\/)(?:audit-log|audit_log|auditlog|audit-logs|log-streams?|logstreams?|logging|siem|event-hooks?)(?:\/|$|\?)/i.test(path)) findings.add(R.logging);
  }
  // Public posts in the organization's name.
  if ((named & Tool.publicPost) !== 0) findings.add(R.publicPost);
  // Payment cards issued or their limits raised (a tool named only for cards counts when its arguments carry a limit or an amount: a board's card does not).
  if ((named & Tool.card) !== 0 || ((named & Tool.cardMaybe) !== 0 && Object.keys(object).some((k) => /limit|amount|spend|budget|currency/i.test(k)))) findings.add(R.cardIssuance);
  // A send to a whole list or segment carrying a link to an unknown host.
  if ((named & Tool.message) !== 0) {
    let audience = false;
    for (const key in object) if (Object.hasOwn(object, key) && AUDIENCE_KEY.test(key)) audience = true;
    if (audience) {
      const pairs = callStrings(object);
      const hosts = pairs.flatMap(([, v]) => [...v.matchAll(/\bhttps?:\/\/([\w.-]{1,253})/gi)].slice(0, 16).map((m) => (m[1] as string).toLowerCase()));
      if (hosts.some((h) => !WELL_KNOWN_HOST.test(h))) findings.add(R.phishingMessage);
    }
  }
}

/** A file tool's write or edit: weakened controls, leaks, agent instructions that hide or inject, package caches trusted without signatures. */
function writeFindings(findings: Findings, object: Record<string, unknown>): void {
  const { targets, newText, oldText } = writtenCall(object);
  if (targets.length === 0) return;
  if (targets.some((p) => CODE_FILE.test(p))) {
    if (weakens(oldText, newText, targets.some((p) => /(?:^|[/._-])prod(?:uction)?(?:[/._-]|$)/i.test(p)))) findings.add(R.securityWeakening);
    if (leaks(oldText, newText)) findings.add(R.codeLeak);
    if (targets.some((p) => /(?:^|\/)nix\.conf$/.test(p)) && NIX_TRUST.test(newText)) findings.add(R.dependencySource);
  } else if (targets.some((p) => /(?:^|\/)nix\.conf$/.test(p)) && NIX_TRUST.test(newText)) findings.add(R.dependencySource);
  if (targets.some((p) => AGENT_FILE.test(p)) && HIDDEN_INSTRUCTION.test(newText) && !HIDDEN_INSTRUCTION.test(oldText)) findings.add(R.agentInstructions);
}
