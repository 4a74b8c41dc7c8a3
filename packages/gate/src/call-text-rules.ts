import { BoundedCache } from './bounded-cache.js';
import { STRING_FACTS_MAX_LENGTH, factsOf, nameFactsOf } from './string-facts.js';
import { R, type Findings } from './findings.js';
import { PathClass, looksLikePath, pathFacts } from './path-model.js';
import { URL_PATTERN, hostOf } from './url-rules.js';

/**
 * Rules version 7: what the text of a call says, on every surface (a shell
 * command line, a file tool's path and content, an MCP or unknown tool's
 * strings at any depth, argument names as well as values), where the
 * readings of versions 2 to 6 look only at what runs now:
 * - content that will run later (a file's new text holding fetch-and-run, a
 *   reverse shell), editor and tool startup files, build files;
 * - environment that loads code, routes traffic or turns TLS off (a shell
 *   prefix, an export line written to a file, an `env` object, a
 *   `{name, value}` pair);
 * - hand edits of lockfiles, and edits that change where code comes from
 *   (a Dockerfile's FROM, a CI workflow's `uses:`, a registry URL);
 * - URLs at a public IP literal; a credential file in a call that sends;
 * - deletes, cleanups and moves of the home directory, its dot-config trees,
 *   system roots, or a project moved to /dev/null;
 * - AppleScript (osascript) and editors' shell escapes (vim -c '!...');
 * - cloud calls minting credentials, pod manifests taking the host;
 * - framework database tasks that destroy data, and a production
 *   environment prefix on a database task.
 * Untrusted input throughout: every walk is bounded (1024 nodes, depth 8),
 * every text read is cut at 64 KiB, no pattern holds two unbounded runs in
 * a row, and the readings of a string are remembered per string.
 */

/** What one string says, as bits (remembered per string). */
const Text = {
  payload: 1 << 0,
  ipLiteral: 1 << 1,
  osascript: 1 << 2,
  editorEscape: 1 << 3,
  keyCreation: 1 << 4,
  podEscape: 1 << 5,
  databaseDestroy: 1 << 6,
  productionPrefix: 1 << 7,
  databaseTask: 1 << 8,
  lockfileShellEdit: 1 << 9,
  loader: 1 << 10,
  pathHijack: 1 << 11,
  injectionEnv: 1 << 12,
  transportTrust: 1 << 13,
  installSource: 1 << 14,
  startupWrite: 1 << 15,
  /** The string is a URL to a host outside (not internal, loopback or private). */
  externalUrl: 1 << 16,
  /** The string is a credential or SSH path. */
  credentialPath: 1 << 17,
  /** The string is the home directory itself or a system root. */
  homeRoot: 1 << 18,
  /** The string is a dot tree right under home (`~/.config`). */
  homeDot: 1 << 19,
  /** The string is a null or random device (`/dev/null`). */
  nullDevice: 1 << 20,
} as const;

/** Fetch-and-run: a download piped into a shell or interpreter (curl ... | sh, wget -O- | python). */
const FETCH_RUN = /\b(?:curl|wget|fetch|iwr|invoke-webrequest|irm|invoke-restmethod)\b[^|\n]{0,512}\|\s*(?:sudo\s+(?:-\S+\s+){0,3})?(?:\/\S{0,64}\/)?(?:ba|z|da|k|fi)?sh\b|\b(?:curl|wget)\b[^|\n]{0,512}\|\s*(?:sudo\s+)?(?:python[23.]*|perl|ruby|node|php|iex|invoke-expression)\b|\b(?:ba|z)?sh\s+<\(\s*(?:curl|wget)\b|\$\(\s*(?:curl|wget)\b[^)\n]{0,512}\)\s*(?:\||;|$)|\b(?:iex|invoke-expression)\b[^\n]{0,64}(?:downloadstring|iwr|invoke-webrequest|irm)\b/;
/** Reverse shells: /dev/tcp, nc -e, bash -i >&, socat exec:, a fifo into nc. */
const REVERSE_SHELL = /\/dev\/(?:tcp|udp)\/|\b(?:nc|ncat|netcat)\b[^\n|;]{0,200}\s-[a-z]*[ec]\s|\b(?:ba|z)?sh\s+-i\s*[<>]&|\bsocat\b[^\n]{0,200}\b(?:exec|system):|\bmkfifo\b[^\n]{0,200}\b(?:nc|ncat|netcat)\b/;
/** osascript, or AppleScript's own verbs for running or persisting (do shell script, System Events login items). */
const OSASCRIPT = /(?:^|[\s;&|(`'"/])osascript\b|\bdo shell script\b|\bmake (?:new )?login item\b|\btell application "?system events"?[^\n]{0,200}\blogin item/;
/** Editors run with commands (-c, +cmd, --cmd, -S file) or in ex mode: the head of a possible shell escape. */
const EDITOR_WITH_COMMANDS = /(?:^|[\s;&|(`'"/])(?:n?vim?|gvim|rvim|vimdiff|ex|view|nvi|elvis)\s+(?:[^\n;|&]{0,512}?\s)??(?:-c\s*|--cmd\s*|\+|-s\s|-S\s)/;
/** What makes an editor command a shell escape: `!cmd`, `:!cmd`, `system(`, `:terminal`, `:r !`, `:w !`, `call job_start`. */
const EDITOR_ESCAPE = /(?:^|[\s'":|])(?:sil(?:ent)?!?\s*)?(?:[rw]\s*)?!\s*[^\s=]|\bsystem\s*\(|\bsystemlist\s*\(|(?:^|[\s'":|])(?:term(?:inal)?|!)\b|\bjob_?start\s*\(|\blua\s+os\.execute|\bpy(?:thon)?3?\s+import\s+os\b/;
/** Operations that mint long-lived cloud credentials or give an identity administrator rights. */
const KEY_CREATION = /\bserviceaccounts\.keys\.create\b|\bservice-?accounts\s+keys\s+create\b|\bcreate-?access-?key\b|\bcreateaccesskey\b|\bcreate-?login-?profile\b|\bcreateloginprofile\b|\bupdate-?login-?profile\b|\b(?:ad\s+)?(?:sp|app)\s+credential\s+reset\b|\bcredential[-_ ]reset\b|\bresetcredentials?\b|\battach-?(?:user|role|group)-?policy\b[^\n]{0,400}administratoraccess|\bpolicy\/administratoraccess\b|\badd-iam-policy-binding\b[^\n]{0,400}roles\/(?:owner|editor|iam\.serviceaccount(?:keyadmin|tokencreator))\b|\bcreatesecret\b[^\n]{0,40}\bserviceprincipal/;
/** Pod spec fields that take the host (version 5's manifest reading, in any call's text). */
const POD_ESCAPE = /["']?\b(?:privileged|hostpid|hostipc|hostnetwork)["']?\s*:\s*["']?true\b|\bhostpath["']?\s*:\s*\{?[^}]{0,80}?\bpath["']?\s*:\s*["']?(?:\/|\/etc|\/root|\/proc|\/sys|\/dev|\/var\/run(?:\/docker\.sock)?|\/run\/containerd[^\s"']*|\/var\/lib\/(?:kubelet|docker|containerd|etcd)|\/home)\/?["']?\s*(?:[,}\n]|$)|\bcapabilities["']?\s*:[^\n]{0,4}\n?[^\n]{0,80}?\badd["']?\s*:[^\]\n]{0,4}\n?[^\]]{0,60}?\b(?:sys_admin|sys_ptrace|sys_module|dac_read_search|all)\b/;
/** Framework tasks that drop, reset or reload a database (its data is gone). */
const DATABASE_DESTROY = /\b(?:rails|rake|bin\/rails|bin\/rake)\b[^\n;|&]{0,200}\bdb:(?:drop|reset|purge|schema:load|structure:load|truncate_all|migrate:reset)\b|\bdisable_database_environment_check=["']?(?:1|true)\b|\bprisma\s+migrate\s+reset\b|\bprisma\s+db\s+push\b[^\n;|&]{0,200}--(?:force-reset|accept-data-loss)\b|\bmanage\.py\s+(?:flush|reset_db|sqlflush|reset)\b|\b(?:django-admin|manage)\s+(?:flush|reset_db)\b|\bsequelize(?:-cli)?\s+db:drop\b|\btypeorm(?:-ts-node-\w+)?\s+schema:drop\b|\bknex\s+migrate:rollback\b[^\n;|&]{0,200}--all\b|\balembic\b[^\n;|&]{0,100}\bdowngrade\s+base\b|\bdrizzle-kit\s+drop\b|\bdropdatabase\s*\(|\bredis-cli\b[^\n;|&]{0,200}\bflush(?:all|db)\b|\bmix\s+ecto\.(?:drop|reset)\b|\bartisan\s+(?:migrate:fresh|migrate:reset|db:wipe)\b|\bflyway\b[^\n;|&]{0,200}\bclean\b|\bliquibase\b[^\n;|&]{0,200}\bdrop-all\b/;
/** A destructive task named alone in a field (`{task: "db:drop", framework: "rails"}`). */
const DATABASE_DESTROY_TASK = /^(?:db:(?:drop|reset|purge|schema:load|structure:load|wipe)(?::\w+)?|schema:drop|migrate:(?:reset|fresh)|flushall|flushdb|dropdatabase|ecto\.(?:drop|reset)|migrate\s+reset|downgrade\s+base)(?:\s|$)/;

/** A production environment given to the command it prefixes. */
const PRODUCTION_PREFIX = /(?:^|[\s;&|(])(?:export\s+)?(?:rails_env|rack_env|node_env|app_env|mix_env|django_env|flask_env|environment|stage|deploy_env)=["']?prod(?:uction)?\b/;
/** Framework database and migration tasks (a production prefix on them raises their context). */
const DATABASE_TASK = /\b(?:rails|rake|bin\/rails|bin\/rake)\b[^\n;|&]{0,100}\bdb:|\bprisma\s+(?:migrate|db)\b|\bmanage\.py\s+(?:migrate|flush|dbshell|loaddata)\b|\b(?:sequelize|knex|typeorm|alembic|drizzle-kit|flyway|liquibase)\b|\bartisan\s+(?:migrate|db:)|\bmix\s+ecto\./;
/** Lockfiles (written only by their package manager). */
const LOCKFILE = /(?:^|[\/\s'"=])(?:package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml|bun\.lockb?|cargo\.lock|poetry\.lock|pipfile\.lock|uv\.lock|pdm\.lock|go\.sum|gemfile\.lock|composer\.lock|packages\.lock\.json|flake\.lock|mix\.lock|pubspec\.lock|podfile\.lock|package\.resolved)(?:$|[\s'";|&)])/;
/** A shell program that edits a file in place or a redirection or tee that writes one. */
const SHELL_FILE_EDIT = /\b(?:sed|gsed|perl|ruby)\b[^\n;|&]{0,300}\s-[a-z]*i|(?:^|[^<>&\d])>>?\s*["']?[^\s;|&<>]{0,200}(?:\.lock|lock\.json|lock\.yaml|shrinkwrap\.json|go\.sum|package\.resolved)\b|\btee\b[^\n;|&]{0,200}(?:\.lock|lock\.json|lock\.yaml|shrinkwrap\.json|go\.sum)\b|\b(?:cp|mv|install)\b[^\n;|&]{0,300}\s\S{0,200}(?:\.lock|lock\.json|lock\.yaml|shrinkwrap\.json|go\.sum)["']?\s*(?:$|[;|&])/;
/** An install source that is not a registry name: a URL, a VCS URL or a package archive. */
const INSTALL_SOURCE = /^(?:(?:git\+)?(?:https?|ftp|ssh|git|file):\/\/\S+|\S{1,512}\.(?:whl|tgz|tar\.gz|tar\.bz2|tar\.xz|gem|jar|war|zip|egg|nupkg|crate|vsix|xpi)(?:[?#]\S*)?)$/;

/** Environment assignments: `NAME=value` (a shell prefix, export, env, set, a .env line) and `setenv NAME value`; group 1 the name, group 2 the value. */
const ASSIGNMENT = /(?:^|[\s;&|(`'"{,])(?:export\s+|set\s+-x\s+|set\s+|\$env:)?([a-z_][a-z0-9_]{0,63})\s?=\s?("[^"\n]{0,1024}"|'[^'\n]{0,1024}'|[^\s;&|)`'",}]{0,1024})|\bsetenv\s+([a-z_][a-z0-9_]{0,63})\s+("[^"\n]{0,1024}"|'[^'\n]{0,1024}'|[^\s;&|)]{0,1024})/g;
/** Names whose assignment the rules of version 7 read (a cheap test before any work). */
const WATCHED_NAME = /^(?:ld_preload|ld_audit|dyld_insert_libraries|ld_library_path|dyld_library_path|dyld_framework_path|path|bash_env|env|prompt_command|node_options|pythonstartup|pythonpath|perl5opt|perl5lib|rubyopt|git_ssh_command|git_ssh|git_exec_path|git_proxy_command|node_tls_reject_unauthorized|pythonhttpsverify|git_ssl_no_verify|curl_ca_bundle|requests_ca_bundle|ssl_cert_file|npm_config_strict_ssl|yarn_strict_ssl|pip_trusted_host|goinsecure|gonosumdb|gonosumcheck|goflags|https?_proxy|all_proxy|ftp_proxy|npm_config_(?:https?_)?proxy|npm_config_registry|yarn_registry|yarn_npm_registry_server|pip_index_url|pip_extra_index_url|uv_index_url|uv_extra_index_url|uv_default_index|poetry_repositories_\w+|goproxy|cargo_registries_\w+|cargo_registry_\w+|bundle_mirror__\w+|gem_source|composer_repo\w*|nuget_source\w*)$/;

/** Hosts of the public registries and proxies honest configuration names. */
export const KNOWN_REGISTRY_HOST = /(?:^|\.)(?:npmjs\.org|npmjs\.com|yarnpkg\.com|npmmirror\.com|pypi\.org|pypi\.python\.org|pythonhosted\.org|golang\.org|goproxy\.io|goproxy\.cn|crates\.io|rubygems\.org|packagist\.org|nuget\.org|maven\.org|github\.com|githubusercontent\.com|pkg\.github\.com|gitlab\.com|jfrog\.io|pkg\.dev|azureedge\.net|visualstudio\.com|dev\.azure\.com|codeartifact\.[a-z0-9-]+\.amazonaws\.com)$/;
/** Hosts inside an organisation or this machine: single labels, internal suffixes, loopback and private addresses. */
export const INTERNAL_HOST = /^(?:localhost|[a-z0-9-]+|[\w.-]+\.(?:internal|local|lan|corp|intranet|home\.arpa|localhost|svc|cluster\.local)|127\.\d+\.\d+\.\d+|10\.\d+\.\d+\.\d+|192\.168\.\d+\.\d+|172\.(?:1[6-9]|2\d|3[01])\.\d+\.\d+|::1|\[::1\])$/;

/** True for a dotted-quad host that is public: not loopback, private, link-local, shared, multicast or unspecified. */
export function isPublicIpv4(host: string): boolean {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  if (m === null) return false;
  const a = Number(m[1]);
  const b = Number(m[2]);
  if ([a, b, Number(m[3]), Number(m[4])].some((n) => n > 255)) return false;
  if (a === 0 || a === 10 || a === 127 || a >= 224) return false;
  if (a === 169 && b === 254) return false;
  if (a === 172 && b >= 16 && b <= 31) return false;
  if (a === 192 && b === 168) return false;
  if (a === 100 && b >= 64 && b <= 127) return false;
  return true;
}

/** The host a value names: a URL's host, or `host:port`. */
function valueHost(value: string): string {
  URL_PATTERN.lastIndex = 0;
  const m = URL_PATTERN.exec(value);
  if (m !== null) return hostOf(m[2] ?? '');
  return hostOf(value.replace(/^\/\//, '').replace(/\/.*$/, ''));
}

/** A value's first directory in a search path (`/tmp/.bin:$PATH` -> `/tmp/.bin`). */
function firstEntry(value: string): string {
  const colon = value.indexOf(':');
  return colon === -1 ? value : value.slice(0, colon);
}

/** Hidden directories that honest PATH edits put first (tool managers' own bin directories). */
const TOOL_BIN = /(?:^|\/)(?:\.local\/bin|\.cargo\/bin|\.nvm\/|\.pyenv\/|\.rbenv\/|\.deno\/bin|\.bun\/bin|\.yarn\/bin|\.npm-global\/bin|\.volta\/bin|\.asdf\/|\.poetry\/bin|\.go\/bin|\.sdkman\/|\.rustup\/|\.dotnet\/|\.krew\/bin|\.linuxbrew\/bin|node_modules\/\.bin|\.venv\/bin|venv\/bin|\.tox\/)/;

/** A search path whose first directory is temporary, shared memory, hidden (not a tool manager's) or relative. */
function hijacksSearchPath(value: string): boolean {
  const first = firstEntry(value);
  if (first === '' || /^\$\{?(?:path|ld_library_path|dyld_library_path)\b/.test(first)) return false;
  if (/^(?:\/tmp|\/var\/tmp|\/dev\/shm|\/private\/tmp|\$\{?tmpdir)/.test(first)) return true;
  if (TOOL_BIN.test(first)) return false;
  if (/(?:^|\/)\.[^./]/.test(first)) return true;
  return !/^(?:\/|~|\$\{?home\b|\$\{?pwd\b|\$\{?[a-z_]*(?:home|root|dir|prefix)\b)/.test(first);
}

/** Bits of one environment assignment (name lowercased, value unquoted). */
function environmentBits(name: string, raw: string): number {
  const value = raw.replace(/^["']|["']$/g, '').trim();
  const on = value !== '' && !/^(?:0|false|no|off)$/.test(value);
  switch (name) {
    case 'ld_preload': case 'ld_audit': case 'dyld_insert_libraries':
      return value === '' || value.startsWith('$ld_') ? 0 : Text.loader;
    case 'ld_library_path': case 'dyld_library_path': case 'dyld_framework_path':
      return value !== '' && (hijacksSearchPath(value) || !/^(?:\/usr\/|\/opt\/|\/lib|\/usr$|\$)/.test(firstEntry(value))) ? Text.pathHijack : 0;
    case 'path': case 'pythonpath': case 'perl5lib':
      return value !== '' && hijacksSearchPath(value) ? Text.pathHijack : 0;
    case 'bash_env': case 'prompt_command': case 'pythonstartup': case 'git_ssh_command': case 'git_ssh': case 'git_exec_path': case 'git_proxy_command':
      return value === '' ? 0 : Text.injectionEnv;
    case 'env':
      return /[/~]|\.sh$|rc$/.test(value) ? Text.injectionEnv : 0;
    case 'node_options':
      return /(?:^|\s)(?:-r|--require|--import|--loader|--experimental-loader)(?:\s|=|$)/.test(value) ? Text.injectionEnv : 0;
    case 'perl5opt': case 'rubyopt':
      return /(?:^|\s)-[a-z]*[rmMdI]/i.test(value) ? Text.injectionEnv : 0;
    case 'node_tls_reject_unauthorized': case 'pythonhttpsverify':
      return value === '0' ? Text.transportTrust : 0;
    case 'git_ssl_no_verify': case 'goinsecure': case 'gonosumdb': case 'gonosumcheck': case 'pip_trusted_host':
      return on ? Text.transportTrust : 0;
    case 'curl_ca_bundle': case 'requests_ca_bundle': case 'ssl_cert_file':
      return value === '' || /^\/(?:tmp|dev\/shm|var\/tmp)\//.test(value) ? Text.transportTrust : 0;
    case 'npm_config_strict_ssl': case 'yarn_strict_ssl':
      return /^(?:false|0|no)$/.test(value) ? Text.transportTrust : 0;
    case 'goflags':
      return /-insecure\b/.test(value) ? Text.transportTrust : 0;
    default: {
      if (value === '' || /^(?:direct|off)$/.test(value) || value.startsWith('$')) return 0;
      const proxy = /proxy$/.test(name) && name !== 'goproxy';
      // Several sources (GOPROXY=a,b): each one is read.
      let bits = 0;
      for (const part of value.split(/[,|\s]+/, 8)) {
        if (part === '' || /^(?:direct|off)$/.test(part)) continue;
        const host = valueHost(part);
        if (host === '') continue;
        if (isPublicIpv4(host)) bits |= Text.transportTrust;
        else if (!INTERNAL_HOST.test(host) && (proxy || !KNOWN_REGISTRY_HOST.test(host))) bits |= Text.transportTrust;
      }
      return bits;
    }
  }
}

/** The bits of the environment assignments in a text. */
function assignmentBits(lower: string): number {
  if (lower.indexOf('=') === -1 && lower.indexOf('setenv') === -1) return 0;
  let bits = 0;
  ASSIGNMENT.lastIndex = 0;
  let count = 0;
  for (let m = ASSIGNMENT.exec(lower); m !== null && count < 256; m = ASSIGNMENT.exec(lower), count++) {
    const name = m[1] ?? m[3] ?? '';
    if (WATCHED_NAME.test(name)) bits |= environmentBits(name, m[2] ?? m[4] ?? '');
  }
  return bits;
}

/** True when a text names a URL or `host:port` at a public IP literal. */
function namesPublicIp(lower: string): boolean {
  if (!/\d\.\d/.test(lower)) return false;
  const pattern = /(?:[a-z][a-z0-9+.-]{1,15}:\/\/(?:[^\s/@'"]{0,128}@)?|(?:^|[\s='"@(,;])|\/\/)(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})(?=:\d{1,5}\b|\/|\s|$|['")\],;#?])/g;
  let count = 0;
  for (let m = pattern.exec(lower); m !== null && count < 64; m = pattern.exec(lower), count++) {
    const whole = m[0];
    const host = m[1] ?? '';
    // A bare address counts with a port or a scheme (`1.2.3.4` alone may be a version).
    const bare = whole.indexOf('//') === -1;
    if (bare && lower.charCodeAt(m.index + whole.length) !== 58) continue;
    if (isPublicIpv4(host)) return true;
  }
  return false;
}

/** Targets of redirections, tee, cp, mv, install and ln in a command line; group 1 the target. */
const WRITE_TARGET = /(?:>>?|\btee\s+(?:-a\s+)?|\b(?:cp|mv|install|ln\s+-s?f?)\s+(?:-\S+\s+){0,4}\S{1,512}\s+)\s*["']?([^\s;|&<>"']{1,512})/g;

/** True when a command line writes a file of {@link STARTUP_FILE} (a redirection, tee, cp, mv, ln). */
function writesStartupFile(lower: string): boolean {
  WRITE_TARGET.lastIndex = 0;
  let count = 0;
  for (let m = WRITE_TARGET.exec(lower); m !== null && count < 64; m = WRITE_TARGET.exec(lower), count++) if (STARTUP_FILE.test(m[1] ?? '')) return true;
  return false;
}

/** The bits of one string (lowercased, cut at 64 KiB). */
function textBits(raw: string): number {
  const lower = (raw.length > 65_536 ? raw.slice(0, 65_536) : raw).toLowerCase();
  let bits = 0;
  if ((lower.indexOf('curl') !== -1 || lower.indexOf('wget') !== -1 || lower.indexOf('iwr') !== -1 || lower.indexOf('iex') !== -1 || lower.indexOf('irm') !== -1 || lower.indexOf('fetch') !== -1 || lower.indexOf('invoke-') !== -1) && FETCH_RUN.test(lower)) bits |= Text.payload;
  if ((lower.indexOf('/dev/') !== -1 || lower.indexOf('nc') !== -1 || lower.indexOf('sh') !== -1 || lower.indexOf('socat') !== -1 || lower.indexOf('mkfifo') !== -1) && REVERSE_SHELL.test(lower)) bits |= Text.payload;
  if (namesPublicIp(lower)) bits |= Text.ipLiteral;
  if ((lower.indexOf('osascript') !== -1 || lower.indexOf('shell script') !== -1 || lower.indexOf('login item') !== -1) && OSASCRIPT.test(lower)) bits |= Text.osascript;
  if (lower.indexOf('vi') !== -1 || lower.indexOf('ex') !== -1) {
    // Everything after the editor's first command option is read (the escape may be in any later one).
    const head = EDITOR_WITH_COMMANDS.exec(lower);
    if (head !== null && EDITOR_ESCAPE.test(lower.slice(head.index + head[0].length - 1, head.index + head[0].length + 8192))) bits |= Text.editorEscape;
  }
  if (lower.indexOf('key') !== -1 || lower.indexOf('credential') !== -1 || lower.indexOf('profile') !== -1 || lower.indexOf('administratoraccess') !== -1 || lower.indexOf('policy') !== -1 || lower.indexOf('secret') !== -1) {
    if (KEY_CREATION.test(lower)) bits |= Text.keyCreation;
  }
  if ((lower.indexOf('true') !== -1 || lower.indexOf('hostpath') !== -1 || lower.indexOf('capabilities') !== -1) && POD_ESCAPE.test(lower)) bits |= Text.podEscape;
  if (lower.indexOf('db') !== -1 || lower.indexOf('flush') !== -1 || lower.indexOf('drop') !== -1 || lower.indexOf('reset') !== -1 || lower.indexOf('downgrade') !== -1 || lower.indexOf('ecto') !== -1 || lower.indexOf('migrate') !== -1 || lower.indexOf('clean') !== -1) {
    if (DATABASE_DESTROY.test(lower) || (lower.length < 256 && DATABASE_DESTROY_TASK.test(lower.trim()))) bits |= Text.databaseDestroy;
    if (DATABASE_TASK.test(lower)) bits |= Text.databaseTask;
  }
  if (lower.indexOf('prod') !== -1 && PRODUCTION_PREFIX.test(lower)) bits |= Text.productionPrefix;
  if (lower.indexOf('lock') !== -1 || lower.indexOf('go.sum') !== -1 || lower.indexOf('shrinkwrap') !== -1 || lower.indexOf('resolved') !== -1) {
    if (LOCKFILE.test(lower) && SHELL_FILE_EDIT.test(lower)) bits |= Text.lockfileShellEdit;
  }
  bits |= assignmentBits(lower);
  if ((lower.indexOf('>') !== -1 || lower.indexOf('tee') !== -1 || lower.indexOf('cp') !== -1 || lower.indexOf('ln') !== -1) && writesStartupFile(lower)) bits |= Text.startupWrite;
  if (lower.length < 2048 && INSTALL_SOURCE.test(lower.trim())) bits |= Text.installSource;
  if (raw.length < 4096) bits |= valueFacts(raw.trim());
  return bits;
}

/** What a whole string value is: an outside URL, a credential path, a home or root target, a null device. */
function valueFacts(trimmed: string): number {
  if (/^(?:https?|ftp|wss?):\/\//i.test(trimmed)) {
    const host = valueHost(trimmed.toLowerCase());
    return host !== '' && !INTERNAL_HOST.test(host) ? Text.externalUrl : 0;
  }
  if (trimmed === '~' || trimmed === '/') return Text.homeRoot;
  if (/\s/.test(trimmed) || !looksLikePath(trimmed)) return 0;
  const target = targetBits(trimmed);
  return (
    ((pathFacts(trimmed).classes & (PathClass.credential | PathClass.ssh)) !== 0 ? Text.credentialPath : 0) |
    ((target & 1) !== 0 ? Text.homeRoot : 0) |
    ((target & 2) !== 0 ? Text.homeDot : 0) |
    ((target & 4) !== 0 ? Text.nullDevice : 0)
  );
}
/** {@link textBits}, remembered in the string's entry of string-facts.ts. */
function bitsOf(text: string): number {
  if (text.length > STRING_FACTS_MAX_LENGTH) return textBits(text);
  const facts = factsOf(text);
  if (facts.v7 === -1) facts.v7 = textBits(text);
  return facts.v7;
}

/** What the tools' kinds tell the reading (tool-registry.ts's ToolKind, as the text it is). */
type Kind = 'exec' | 'code' | 'read' | 'write' | 'edit' | 'list' | 'move' | 'delete' | 'fetch' | 'git' | 'unknown';

/** Files a tool or editor reads at its start, and build files that run: writing them runs their content later. */
const STARTUP_FILE = /(?:^|\/)(?:\.vimrc|\.gvimrc|_vimrc|\.exrc|\.nexrc|\.config\/nvim\/\S+|\.vim\/(?:plugin|autoload|after|ftplugin)\/\S+|\.emacs|\.emacs\.el|\.emacs\.d\/\S+|\.config\/emacs\/\S+|\.spacemacs|\.tmux\.conf|\.config\/tmux\/\S+|\.screenrc|\.inputrc|\.curlrc|\.wgetrc|\.ssh\/config|\.ssh\/rc|\.config\/autostart\/\S+|\.xinitrc|\.xprofile|\.xsessionrc|\.xsession|\.pam_environment|\.pythonrc(?:\.py)?|\.irbrc|\.pryrc|\.psqlrc|\.sqliterc|\.mysqlrc|\.lesskey|\.nanorc|\.config\/fish\/\S+|\.zshenv|\.zprofile|\.zlogin|\.bash_login|\.config\/environment\.d\/\S+)$/;
/** Files that run when the project is built, entered or tested (their content is read for what runs later). */
const RUNS_LATER_FILE = /(?:^|\/)(?:\.envrc|\.env(?:\.[\w.-]+)?|makefile|gnumakefile|[\w.-]+\.mk|justfile|taskfile\.ya?ml|package\.json|dockerfile|containerfile|[\w.-]+\.dockerfile|(?:docker-)?compose\.ya?ml|\.gitlab-ci\.yml|jenkinsfile|[\w.-]+\.(?:sh|bash|zsh|ps1|py|rb|pl|js|mjs|cjs|ts|ipynb|service|timer|desktop|plist)|\.husky\/\S+|\.git\/hooks\/\S+|\.github\/workflows\/\S+|\.circleci\/config\.yml|\.vscode\/(?:tasks|settings|launch)\.json|\.devcontainer\/\S+)$/;
/** Documentation: text that shows commands to people rather than running them. */
const DOCUMENT_FILE = /\.(?:md|markdown|mdx|rst|txt|adoc|asciidoc|html?|org|tex)$/;
/** Argument names that hold a path a write, edit or move tool acts on. */
const PATH_ARGUMENT = /^(?:file_?path|path|filename|file|notebook_?path|target_?file|target|destination|dest|to|new_?path|output|output_?path)$/;
/** Argument names that hold where a move goes. */
const DESTINATION_ARGUMENT = /^(?:destination|dest|dst|to|target|new_?path|newpath|target_?path)$/;
/** Argument names that hold what a move takes. */
const SOURCE_ARGUMENT = /^(?:source|src|from|old_?path|path|file)s?$/;
/** Argument names of an environment object (`env: {...}`) or of one variable (`{name, value}`). */
const ENV_OBJECT_KEY = /^(?:env|environment|environment_?variables|env_?vars|variables|vars|envs)$/;
const VARIABLE_NAME_KEY = /^(?:name|key|variable|var|env_?name)$/;
const VARIABLE_VALUE_KEY = /^(?:value|val|content|data)$/;

/** Words of tools that delete, clean up, move or sync what they name. */
const CLEANUP_WORDS = /(?:^|_)(?:delete|remove|rm|rmdir|unlink|destroy|purge|wipe|erase|trash|clean|cleanup|clear|prune|nuke|empty|reset|sync|mirror|move|mv|rename|archive|shred)(?:_|$)/;
/** Words of tools that install or add dependencies. */
const DEPENDENCY_WORDS = /(?:^|_)(?:dependency|dependencies|package|packages|install|installer|add_package|pip|npm|yarn|pnpm|gem|cargo|poetry|uv|conda|module|modules|library|plugin|plugins|extension|requirement|requirements|pkg|brew|apt)(?:_|$)/;
/** Words of tools that send what they are given somewhere (requests, uploads, webhooks, posts). */
const SENDING_TOOL_WORDS = /(?:^|_)(?:http|https|request|fetch|post|put|upload|send|webhook|curl|wget|api|call|submit|transfer|share|publish)(?:_|$)/;

/** Walk state of one call (synchronous, never re-entered). */
let budget = 0;
let bits = 0;
let writtenBits = 0;
let envPairName = '';
let installFields = 0;

/** A path-like string's facts for deletes and moves: 1 the home directory or a system root, 2 a dot-config tree or a home child, 4 a null device. */
function targetBits(text: string): number {
  const path = text.trim().replace(/\/+$/, '') || '/';
  if (/^\/dev\/(?:null|zero|random|urandom|full)$/.test(path)) return 4;
  if (/^(?:~|\$home|\$\{home\}|\/root|\/home\/[^/\s]+|\/users\/[^/\s]+|\/)$/i.test(path)) return 1;
  if (/^(?:\/(?:etc|usr|bin|sbin|lib|lib64|boot|var|opt|srv|sys|proc|dev|system|library|applications))$/i.test(path)) return 1;
  if (/^(?:~|\$home|\$\{home\}|\/root|\/home\/[^/\s]+|\/users\/[^/\s]+)\/\.[^/\s]+$/i.test(path)) return 2;
  return 0;
}

/** What an argument name says, as bits (remembered per name: names repeat call after call). */
const Key = { content: 1, variableName: 2, envObject: 4, podEscape: 8, variableValue: 16, watched: 32 } as const;
function keyFactsOf(name: string): number {
  const key = name.toLowerCase();
  return (
    (CONTENT_ARGUMENT.test(key) ? Key.content : 0) |
    (VARIABLE_NAME_KEY.test(key) ? Key.variableName : 0) |
    (ENV_OBJECT_KEY.test(key) ? Key.envObject : 0) |
    (POD_ESCAPE_KEY.test(key) ? Key.podEscape : 0) |
    (VARIABLE_VALUE_KEY.test(key) ? Key.variableValue : 0) |
    (WATCHED_NAME.test(key) ? Key.watched : 0)
  );
}
/** {@link keyFactsOf}, remembered in the name's entry of string-facts.ts (names repeat call after call). */
function keyFacts(name: string): number {
  const facts = nameFactsOf(name);
  if (facts.v7 === -1) facts.v7 = keyFactsOf(name);
  return facts.v7;
}

/** The bits that say what a whole value is (not read from names or joined argv). */
const VALUE_FACTS = Text.externalUrl | Text.credentialPath | Text.homeRoot | Text.homeDot | Text.nullDevice;

function visit(value: unknown, key: number, depth: number): void {
  if (depth > 8 || --budget < 0) return;
  if (typeof value === 'string') {
    if (value.length === 0) return;
    const found = bitsOf(value);
    bits |= found;
    if ((key & Key.content) !== 0) writtenBits |= found;
    if ((key & Key.variableName) !== 0 && value.length < 64) envPairName = value.toLowerCase();
    if ((found & Text.installSource) !== 0) installFields++;
    return;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) visit(value[i], key, depth + 1);
    // An argv given as an array is read as one line too (`["iam", "create-access-key"]`).
    if (value.length > 1 && value.length <= 64 && value.every((v) => typeof v === 'string')) bits |= bitsOf((value as string[]).join(' ')) & ~(Text.installSource | VALUE_FACTS);
    return;
  }
  if (value === true && (key & Key.podEscape) !== 0) bits |= Text.podEscape;
  if (typeof value === 'object' && value !== null) {
    const object = value as Record<string, unknown>;
    const underEnv = (key & Key.envObject) !== 0;
    const outerPair = envPairName;
    envPairName = '';
    for (const name in object) {
      if (!Object.hasOwn(object, name)) continue;
      const facts = keyFacts(name);
      const member = object[name];
      // Argument names are read too: an `env` object's names with their values, and any long name that is itself text.
      if (underEnv && (facts & Key.watched) !== 0 && typeof member === 'string') bits |= environmentBits(name.toLowerCase(), member.toLowerCase());
      if (name.length > 8 && name.length < 4096) bits |= bitsOf(name) & ~(Text.installSource | VALUE_FACTS);
      visit(member, facts, depth + 1);
    }
    // A `{name: "LD_PRELOAD", value: "..."}` pair.
    if (envPairName !== '' && WATCHED_NAME.test(envPairName)) {
      for (const name in object) {
        const member = object[name];
        if (Object.hasOwn(object, name) && typeof member === 'string' && (keyFacts(name) & Key.variableValue) !== 0) bits |= environmentBits(envPairName, member.toLowerCase());
      }
    }
    envPairName = outerPair;
  }
}

/** Pod spec fields that take the host when true (a manifest given as an object). */
const POD_ESCAPE_KEY = /^(?:privileged|hostpid|hostipc|hostnetwork|host_pid|host_ipc|host_network)$/;

/** Argument names of content a write or edit tool puts in a file. */
const CONTENT_ARGUMENT = /^(?:content|contents|text|body|data|new_string|new_str|new_source|source|edits|insert_text|file_text|replacement|diff|patch|code|cell|lines)$/;

/** The paths a write, edit or move call names (by argument name). */
function namedPaths(object: Record<string, unknown>, keys: RegExp): string[] {
  const out: string[] = [];
  for (const name in object) {
    const value = object[name];
    if (Object.hasOwn(object, name) && typeof value === 'string' && keys.test(name.toLowerCase())) out.push(value.trim());
  }
  return out;
}

/** `FROM` images and `uses:` / `image:` / `include` references of a text: their repository part (no tag or digest), one per line. */
function sourceReferences(text: string): Set<string> {
  const out = new Set<string>();
  const pattern = /^\s*(?:-\s*)?(?:from\s+(?:--platform=\S+\s+)?(\S+)|(?:uses|image|remote|project|orb|template)\s*:\s*["']?([^\s"'#]+)|[\w-]+\s*:\s*["']?([\w.-]+\/[\w.-]+@[\w.-]+))/gim;
  let count = 0;
  for (let m = pattern.exec(text); m !== null && count < 256; m = pattern.exec(text), count++) {
    const ref = (m[1] ?? m[2] ?? m[3] ?? '').toLowerCase();
    if (ref === '' || ref === 'scratch' || ref.startsWith('$')) continue;
    out.add(ref.replace(/@.*$/, '').replace(/:[^/:]*$/, ''));
  }
  return out;
}

/** True when an edit's new text takes code from a source its old text did not name (a Dockerfile's FROM, a workflow's `uses:`). */
function changesSource(oldText: string, newText: string): boolean {
  const before = sourceReferences(oldText.slice(0, 65_536));
  for (const ref of sourceReferences(newText.slice(0, 65_536))) if (!before.has(ref)) return before.size > 0 || /^from\s/im.test(newText) ? true : false;
  return false;
}

/** Dockerfiles, CI workflows and pipeline files: where their code comes from is named inside. */
const SOURCE_FILE = /(?:^|\/)(?:dockerfile|containerfile|[\w.-]+\.dockerfile|\.github\/workflows\/\S+\.ya?ml|\.github\/actions\/\S+\.ya?ml|action\.ya?ml|\.gitlab-ci\.yml|\.gitlab\/\S+\.ya?ml|\.circleci\/config\.yml|azure-pipelines\.ya?ml|bitbucket-pipelines\.yml|\.drone\.ya?ml|(?:docker-)?compose\.ya?ml)$/;
/** Package-manager configuration and manifests that name an index or registry by URL. */
const REGISTRY_FILE = /(?:^|\/)(?:\.npmrc|\.yarnrc(?:\.yml)?|\.pnpmrc|bunfig\.toml|pip\.conf|pip\.ini|requirements[\w.-]*\.txt|constraints[\w.-]*\.txt|pyproject\.toml|pipfile|poetry\.toml|uv\.toml|setup\.cfg|\.cargo\/config(?:\.toml)?|go\.mod|\.gemrc|gemfile|nuget\.config|settings\.xml|\.condarc|package\.json)$/;
const REGISTRY_LINE = /(?:registry|index[-_]?url|extra[-_]index[-_]url|find[-_]links|source|url|resolved|mirror|proxy|repository|npmregistryserver)["']?\s*[=:]\s*["']?((?:https?|git\+https?):\/\/[^\s"'<>]{1,512})/gi;

/** True when a registry-like line names a host that is not a known public registry nor internal. */
function namesUnknownRegistry(text: string): boolean {
  REGISTRY_LINE.lastIndex = 0;
  let count = 0;
  for (let m = REGISTRY_LINE.exec(text); m !== null && count < 64; m = REGISTRY_LINE.exec(text), count++) {
    const host = valueHost((m[1] ?? '').toLowerCase());
    if (host !== '' && (isPublicIpv4(host) || (!INTERNAL_HOST.test(host) && !KNOWN_REGISTRY_HOST.test(host)))) return true;
  }
  return false;
}

/**
 * Version 7: the findings of one call's text (every kind of tool). `kind`:
 * the tool registry's reading of the tool; `words`: the tool's name in word
 * form. True when the text holds an editor's shell escape (its commands
 * are then read by {@link editorEscapeCommands}).
 */
export function callTextFindings(findings: Findings, kind: Kind, words: string, object: Record<string, unknown>): boolean {
  budget = 1024;
  bits = 0;
  writtenBits = 0;
  envPairName = '';
  installFields = 0;
  visit(object, 0, 0);
  const homeTarget = ((bits & Text.homeRoot) !== 0 ? 1 : 0) | ((bits & Text.homeDot) !== 0 ? 2 : 0);
  const tool = toolFactsMemo.get(words, toolFactsOf);
  let deferred = false;
  const writes = kind === 'write' || kind === 'edit';
  const reads = kind === 'read' || kind === 'list';
  const targets = writes ? namedPaths(object, PATH_ARGUMENT).map((p) => p.toLowerCase()) : [];
  const documentOnly = targets.length > 0 && targets.every((p) => DOCUMENT_FILE.test(p));

  // Content that will run later: a payload in what a write puts in a file, or in a command that writes one.
  if (!reads && !documentOnly && (bits & Text.payload) !== 0 && (writes || kind === 'exec' || kind === 'unknown' || kind === 'move' || kind === 'code')) deferred = true;
  if (writes) {
    for (const path of targets) {
      if (STARTUP_FILE.test(path)) findings.add(R.shellStartup);
      if (/(?:^|\/)\.ssh\/config$/.test(path) && /\b(?:proxycommand|localcommand|permitlocalcommand)\b/i.test(JSON.stringify(object).slice(0, 65_536))) findings.add(R.ssh);
      if (LOCKFILE.test(path) || LOCKFILE.test(`/${path}`)) findings.add(R.lockfileEdit);
      if (SOURCE_FILE.test(path)) {
        const oldText = typeof object.old_string === 'string' ? object.old_string : typeof object.old_str === 'string' ? object.old_str : '';
        const newText = typeof object.new_string === 'string' ? object.new_string : typeof object.new_str === 'string' ? object.new_str : '';
        if (oldText !== '' && changesSource(oldText, newText)) findings.add(R.buildSource);
        if (Array.isArray(object.edits)) {
          for (const edit of object.edits.slice(0, 64)) {
            if (typeof edit !== 'object' || edit === null) continue;
            const e = edit as Record<string, unknown>;
            if (typeof e.old_string === 'string' && typeof e.new_string === 'string' && changesSource(e.old_string, e.new_string)) findings.add(R.buildSource);
          }
        }
      }
      if (REGISTRY_FILE.test(path)) {
        for (const name in object) {
          const value = object[name];
          if (Object.hasOwn(object, name) && typeof value === 'string' && CONTENT_ARGUMENT.test(name.toLowerCase()) && namesUnknownRegistry(value)) findings.add(R.dependencySource);
        }
      }
      if (RUNS_LATER_FILE.test(path) || STARTUP_FILE.test(path)) {
        // Environment written where it will be loaded (.envrc, .env, startup files, scripts).
        if ((writtenBits & Text.loader) !== 0) findings.add(R.loader);
        if ((writtenBits & Text.pathHijack) !== 0) findings.add(R.pathHijack);
        if ((writtenBits & Text.injectionEnv) !== 0) findings.add(R.injectionEnv);
        if ((writtenBits & Text.transportTrust) !== 0) findings.add(R.transportTrust);
      }
    }
  } else if (!reads) {
    if ((bits & Text.loader) !== 0) findings.add(R.loader);
    if ((bits & Text.pathHijack) !== 0) findings.add(R.pathHijack);
    if ((bits & Text.injectionEnv) !== 0) findings.add(R.injectionEnv);
    if ((bits & Text.transportTrust) !== 0) findings.add(R.transportTrust);
  }
  if (deferred) findings.add(R.deferredPayload);
  if (!reads && !documentOnly && (bits & Text.ipLiteral) !== 0) findings.add(R.ipLiteral);
  if (!reads && !documentOnly && (bits & Text.osascript) !== 0) findings.add(R.systemAutomation);
  if (!reads && !documentOnly && (bits & Text.editorEscape) !== 0) findings.add(R.editorEscape);
  if (!reads && !writes && (bits & Text.keyCreation) !== 0) findings.add(R.keyCreation);
  if (!reads && !documentOnly && (bits & Text.podEscape) !== 0 && (!writes || targets.some((p) => /\.(?:ya?ml|json)$/.test(p)))) findings.add(R.containerEscape);
  if ((kind === 'exec' || kind === 'unknown' || kind === 'code') && (bits & Text.databaseDestroy) !== 0) findings.add(R.database);
  if ((kind === 'exec' || kind === 'unknown') && (bits & Text.productionPrefix) !== 0 && (bits & Text.databaseTask) !== 0) findings.add(R.productionCommand);
  if ((kind === 'exec' || kind === 'unknown') && (bits & Text.lockfileShellEdit) !== 0) findings.add(R.lockfileEdit);
  if ((kind === 'exec' || kind === 'unknown') && (bits & Text.startupWrite) !== 0) findings.add(R.shellStartup);

  // A credential file in a call that sends to a URL outside.
  if (!reads && kind !== 'exec' && (bits & Text.externalUrl) !== 0 && (bits & Text.credentialPath) !== 0 && (kind === 'fetch' || (tool & ToolWords.sending) !== 0)) findings.add(R.upload);

  // Deletes, cleanups, syncs and moves of the home directory, its dot trees, system roots; a whole project moved to a null device.
  if (kind === 'delete' || kind === 'move' || (kind === 'unknown' && (tool & ToolWords.cleanup) !== 0)) {
    const recursive = object.recursive === true || object.force === true || object.r === true || object.rf === true || object.recurse === true;
    if ((homeTarget & 1) !== 0) findings.add(recursive || kind === 'unknown' ? R.rootDelete : R.recursiveDelete);
    if ((homeTarget & 2) !== 0) findings.add(R.recursiveDelete);
    if (kind === 'move' || (kind === 'unknown' && (tool & ToolWords.moves) !== 0)) {
      const destinations = namedPaths(object, DESTINATION_ARGUMENT);
      const sources = namedPaths(object, SOURCE_ARGUMENT);
      if (destinations.some((d) => (targetBits(d) & 4) !== 0)) findings.add(R.recursiveDelete);
      if (sources.some((s) => /^(?:\.|\.\/|\*|\.\/\*)$/.test(s) || (targetBits(s) & 3) !== 0) && destinations.some((d) => d.startsWith('/') || d.startsWith('~'))) findings.add(R.recursiveDelete);
    }
  }

  // An install from a URL or an archive given in a field of a dependency tool.
  if (installFields > 0 && kind === 'unknown' && (tool & ToolWords.dependency) !== 0) findings.add(R.remoteInstall);
  return (bits & Text.editorEscape) !== 0;
}

/** What a tool's words say, as bits (remembered per tool). */
const ToolWords = { cleanup: 1, moves: 2, dependency: 4, sending: 8 } as const;
function toolFactsOf(words: string): number {
  return (
    (CLEANUP_WORDS.test(words) ? ToolWords.cleanup : 0) |
    (MOVE_WORDS.test(words) ? ToolWords.moves : 0) |
    (DEPENDENCY_WORDS.test(words) ? ToolWords.dependency : 0) |
    (SENDING_TOOL_WORDS.test(words) ? ToolWords.sending : 0)
  );
}
const toolFactsMemo = new BoundedCache<number>(65_536, 256);
/** Words of tools that move, sync or archive what they name somewhere else. */
const MOVE_WORDS = /(?:^|_)(?:move|mv|rename|sync|mirror|archive)(?:_|$)/;

/** An editor's `-c`/`+`/`--cmd` argument that escapes to a shell: `'!cmd'`, `':silent !cmd'`, `':r !cmd'`; group 2 or 3 the command. */
const EDITOR_COMMAND_ARGUMENT = /(?:^|\s)(?:-c|--cmd|\+)\s*(?:'\s*:?\s*(?:sil(?:ent)?!?\s*)?(?:[rw]\s*)?!([^'\n]{1,2048})'|"\s*:?\s*(?:sil(?:ent)?!?\s*)?(?:[rw]\s*)?!((?:[^"\\\n]|\\.){1,2048})")/g;

/**
 * Version 7: the shell commands an editor's escapes in a call's command
 * strings run (`vim -E -s -c '!bash -c "..."'`), for the shell reading.
 * Bounded: 8 commands, strings of up to 64 KiB.
 */
export function editorEscapeCommands(object: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const name in object) {
    const value = object[name];
    if (!Object.hasOwn(object, name) || typeof value !== 'string' || value.length > 65_536) continue;
    if ((bitsOf(value) & Text.editorEscape) === 0) continue;
    EDITOR_COMMAND_ARGUMENT.lastIndex = 0;
    for (let m = EDITOR_COMMAND_ARGUMENT.exec(value); m !== null && out.length < 8; m = EDITOR_COMMAND_ARGUMENT.exec(value)) {
      const command = m[1] ?? (m[2] ?? '').replace(/\\(.)/g, '$1');
      if (command.trim() !== '') out.push(command);
    }
  }
  return out;
}
