/**
 * The one path model of rules version 2: every path the gate reads (shell
 * arguments and redirections, the paths of file tools, the arguments of MCP
 * and other tools) is normalised here and sorted into classes here, so a rule
 * about `~/.ssh` holds whether the path came from `cat`, `> file`, a `Read`
 * tool or an unknown tool's `path` argument.
 *
 * Normal form: the home directory (`~`, `~user`, `$HOME`, `${HOME}`, `/root`,
 * `/home/<user>`, `/Users/<user>`) becomes `~`; `.` and `..` segments are
 * resolved (a relative path that climbs out of the working directory keeps a
 * leading `..`); repeated and trailing slashes go; letters are lowercased
 * (macOS and Windows paths are case-insensitive, and a rule must not be
 * dodged by `~/.SSH`). Quotes were removed by the shell parser.
 */

/** Path classes, as bits. */
export const PathClass = {
  /** Credentials and secrets: cloud and tool credentials, private keys, .env files, password stores, history files. */
  credential: 1 << 0,
  /** SSH material: anything under ~/.ssh or /etc/ssh, authorized_keys anywhere. */
  ssh: 1 << 1,
  /** Shell startup files (~/.bashrc, ~/.profile, /etc/profile.d/...). */
  shellStartup: 1 << 2,
  /** Scheduled and service units: cron, systemd, launchd, init scripts, XDG autostart. */
  scheduled: 1 << 3,
  /** sudoers, doas, PAM, polkit and the account databases. */
  sudoersPam: 1 << 4,
  /** Git hooks and a repository's own git configuration. */
  gitHooks: 1 << 5,
  /** Package-manager configuration (registries, indexes, sources). */
  packageConfig: 1 << 6,
  /** System trees: /etc, /usr, /boot, /sys, /bin, /sbin, /lib*, /opt, /srv, /var (except temp, logs). */
  system: 1 << 7,
  /** Kernel tunables: /proc/sys. */
  kernel: 1 << 8,
  /** The ledger's own installation: `.ledger/` (keys, configuration, genesis, trust root), $LEDGER_HOME. */
  ledger: 1 << 9,
  /** Temporary directories: /tmp, /var/tmp, /dev/shm, $TMPDIR. */
  temp: 1 << 10,
  /** Inside the working directory: a relative path that does not climb out. */
  project: 1 << 11,
  /** A root of everything: `/`, `~`, a top-level system directory, or a glob of one. */
  root: 1 << 12,
  /** Block devices. */
  device: 1 << 13,
  /** System logs (/var/log). */
  log: 1 << 14,
  /** Shell and tool history files. */
  history: 1 << 15,
  /** Data directories of services (/var/lib, /srv, /opt, /home, ~ top-level children). */
  data: 1 << 16,
  /** Dynamic linker configuration (/etc/ld.so.preload, /etc/ld.so.conf*). */
  loader: 1 << 17,
  /** Not resolvable: contains a variable or substitution other than $HOME. */
  dynamic: 1 << 18,
  /** Process memory and environment of other processes (/proc/<pid>/mem, environ), /dev/mem, /proc/kcore. */
  processMemory: 1 << 19,
} as const;

/** A normalised path and its classes. */
export interface PathFacts {
  readonly normal: string;
  readonly classes: number;
}

const TOP_LEVEL = new Set(['bin', 'boot', 'dev', 'etc', 'home', 'lib', 'lib32', 'lib64', 'libx32', 'media', 'mnt', 'opt', 'proc', 'root', 'run', 'sbin', 'snap', 'srv', 'sys', 'usr', 'var', 'users', 'system', 'library', 'applications', 'private', 'volumes']);
const SYSTEM_TOP = new Set(['etc', 'usr', 'boot', 'sys', 'bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32', 'opt', 'srv', 'var', 'root', 'system', 'library', 'private', 'snap', 'run']);

const SHELL_STARTUP = new Set([
  '.bashrc', '.bash_profile', '.bash_login', '.bash_logout', '.profile', '.zshrc', '.zshenv', '.zprofile', '.zlogin', '.zlogout', '.kshrc', '.mkshrc',
  '.cshrc', '.tcshrc', '.login', '.logout', '.inputrc', '.xprofile', '.xinitrc', '.xsession', '.xsessionrc', '.pam_environment',
]);
const HISTORY = new Set(['.bash_history', '.zsh_history', '.sh_history', '.history', '.python_history', '.node_repl_history', '.mysql_history', '.psql_history', '.sqlite_history', '.rediscli_history', '.lesshst', '.viminfo', '.irb_history', '.local/share/fish/fish_history']);
const CREDENTIAL_NAMES = new Set([
  '.netrc', '_netrc', '.git-credentials', '.pgpass', '.my.cnf', '.pypirc', '.npmrc', '.vault-token', '.htpasswd', '.boto', '.s3cfg', '.dockercfg',
  'credentials', 'credentials.json', 'credentials.yml', 'credentials.yaml', 'credentials.toml', 'credentials.tfrc.json', 'secrets.json', 'secrets.yml',
  'secrets.yaml', 'secrets.toml', 'secrets.env', 'secret.json', '.secrets', 'client_secret.json', 'service-account.json', 'service_account.json',
  'application_default_credentials.json', 'access_tokens.db', 'credentials.db', 'accesstokens.json', 'msal_token_cache.json', 'hosts.yml',
  'login data', 'cookies', 'key4.db', 'key3.db', 'logins.json', 'cert9.db', 'web data', 'local state', 'wallet.dat', 'keystore', 'id_rsa', 'id_dsa',
  'id_ecdsa', 'id_ed25519', 'id_ecdsa_sk', 'id_ed25519_sk', 'identity', 'shadow', 'gshadow', 'master.passwd', 'shadow-', 'gshadow-', 'kubeconfig',
  'terraform.tfstate', '.terraformrc', 'token', 'token.json', '.token', 'auth.json', '.env', 'private.key', 'privkey.pem', 'server.key',
]);
const CREDENTIAL_DIRS = ['~/.aws/', '~/.gnupg/', '~/.ssh/', '~/.kube/', '~/.docker/config.json', '~/.config/gcloud/', '~/.azure/', '~/.config/gh/', '~/.password-store/', '~/library/keychains/', '/etc/ssl/private/', '~/.config/op/', '~/.config/bitwarden', '~/.mozilla/firefox/', '~/.config/google-chrome/', '~/.config/chromium/', '~/library/application support/google/chrome/', '~/.local/share/keyrings/', '~/.electrum/', '~/.bitcoin/', '~/.ethereum/keystore', '/var/run/secrets/', '/run/secrets/', '~/.cargo/credentials', '~/.config/hub', '~/.terraform.d/credentials', '~/.oci/', '~/.config/doctl/', '~/.fly/', '~/.config/heroku', '~/.netlify/', '~/.vercel/', '~/.config/rclone/'];
const CREDENTIAL_SUFFIXES = ['.pem', '.key', '.p12', '.pfx', '.jks', '.keystore', '.kdbx', '.ppk', '.gpg', '.asc', '.ovpn', '.keychain', '.keychain-db', '.tfstate'];
const PACKAGE_CONFIG_NAMES = new Set(['.npmrc', '.yarnrc', '.yarnrc.yml', 'pip.conf', 'pip.ini', '.pypirc', '.gemrc', '.condarc', 'bunfig.toml', '.bunfig.toml', 'settings.xml', 'gradle.properties', '.pydistutils.cfg']);
const PACKAGE_CONFIG_DIRS = ['/etc/apt/', '/etc/yum.repos.d/', '/etc/yum.conf', '/etc/dnf/', '/etc/zypp/', '/etc/pacman.conf', '/etc/pacman.d/', '/etc/apk/', '~/.config/pip/', '~/.pip/', '~/.cargo/config', '~/.m2/settings.xml', '~/.gradle/', '~/.config/yarn/', '/etc/pip.conf', '/etc/npmrc', '~/.config/pnpm/', '~/.nuget/'];
const SCHEDULED_DIRS = ['/etc/cron', '/var/spool/cron', '/etc/crontab', '/etc/anacrontab', '/var/spool/anacron', '/etc/at.allow', '/var/spool/at', '/etc/systemd/', '/lib/systemd/', '/usr/lib/systemd/', '/run/systemd/system', '~/.config/systemd/', '~/library/launchagents/', '/library/launchagents/', '/library/launchdaemons/', '/system/library/launchdaemons/', '/system/library/launchagents/', '/etc/init.d/', '/etc/init/', '/etc/rc.local', '/etc/rc.d/', '/etc/rc0.d/', '/etc/rc1.d/', '/etc/rc2.d/', '/etc/rc3.d/', '/etc/rc4.d/', '/etc/rc5.d/', '/etc/rc6.d/', '/etc/rcs.d/', '~/.config/autostart/', '/etc/xdg/autostart/', '/etc/update-motd.d/', '/etc/periodic/', '/usr/local/etc/periodic/', '/etc/launchd.conf', '/etc/inittab', '/etc/udev/rules.d/', '/lib/udev/rules.d/', '~/.local/share/systemd/', '/etc/network/if-up.d/', '/etc/ppp/ip-up.d/', '/etc/apt/apt.conf.d/'];
const SUDOERS_PAM_DIRS = ['/etc/sudoers', '/etc/doas.conf', '/etc/pam.d/', '/etc/pam.conf', '/etc/security/', '/lib/security/', '/lib64/security/', '/usr/lib/security/', '/etc/polkit-1/', '/usr/share/polkit-1/', '/etc/passwd', '/etc/group', '/etc/shadow', '/etc/gshadow', '/etc/master.passwd', '/etc/login.defs', '/etc/nsswitch.conf', '/private/etc/sudoers', '/etc/authorization'];
const SHELL_STARTUP_DIRS = ['/etc/profile', '/etc/bash.bashrc', '/etc/bashrc', '/etc/zsh/', '/etc/zshrc', '/etc/zprofile', '/etc/zshenv', '/etc/environment', '/etc/csh.cshrc', '/etc/csh.login', '~/.config/fish/', '/etc/fish/', '~/.oh-my-zsh/custom/', '~/.bashrc.d/', '~/.profile.d/', '~/.ssh/rc', '/etc/ssh/sshrc'];

const homeAliases = /^(?:\$\{?home\}?|~[a-z0-9._-]*|\/root|\/home\/[^/]+|\/users\/[^/]+)(?=\/|$)/;

/**
 * The normal form of a path (see the file comment). Quotes are already gone;
 * a path that still holds `$` (other than $HOME) or a substitution is
 * returned as is and classed {@link PathClass.dynamic} by {@link pathFacts}.
 */
export function normalizePath(raw: string): string {
  let path = raw.trim().toLowerCase();
  if (path.startsWith('file://')) path = path.slice(7);
  path = path.replace(/\\/g, '/');
  const home = homeAliases.exec(path);
  if (home !== null) path = `~${path.slice(home[0].length)}`;
  else path = path.replace(/^\$\{?tmpdir\}?(?=\/|$)/, '/tmp').replace(/^\$\{?ledger_home\}?(?=\/|$)/, '/.ledger');
  const absolute = path.startsWith('/');
  const homeRooted = path.startsWith('~');
  const parts = path.split('/');
  const out: string[] = [];
  let climbs = 0;
  for (let i = homeRooted ? 1 : 0; i < parts.length; i++) {
    const part = parts[i] as string;
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (out.length > 0) out.pop();
      else if (!absolute && !homeRooted) climbs += 1;
      continue;
    }
    out.push(part);
  }
  const body = out.join('/');
  if (homeRooted) return body === '' ? '~' : `~/${body}`;
  if (absolute) return `/${body}`;
  const up = '../'.repeat(climbs);
  return body === '' ? (climbs > 0 ? up.slice(0, -1) : '.') : `${up}${body}`;
}

function under(path: string, dirs: readonly string[]): boolean {
  for (const dir of dirs) {
    if (dir.endsWith('/')) {
      if (path.startsWith(dir) || path === dir.slice(0, -1)) return true;
    } else if (path === dir || path.startsWith(`${dir}/`) || path.startsWith(dir)) return true;
  }
  return false;
}

function isEnvFile(base: string): boolean {
  if (base === '.env') return true;
  if (!base.startsWith('.env.') && !base.endsWith('.env')) return false;
  return !/\.(?:example|sample|template|dist|defaults?|schema)$/.test(base) && base !== 'example.env' && base !== 'sample.env';
}

/** Classes of a path in normal form. */
function classify(path: string): number {
  let classes = 0;
  if (path.includes('$') || path.includes('`')) classes |= PathClass.dynamic;
  const segments = path.split('/');
  const base = segments[segments.length - 1] ?? '';
  const stripped = base.replace(/[*?]+$/, '');
  const absolute = path.startsWith('/');
  const home = path.startsWith('~');

  // Roots of everything.
  if (path === '/' || path === '/*' || path === '~' || path === '~/*' || path === '/.*' || path === '~/.*') classes |= PathClass.root;
  if (absolute && segments.length === 2 && TOP_LEVEL.has(segments[1]?.replace(/\*$/, '') ?? '')) classes |= PathClass.root;
  if (absolute && segments.length === 3 && segments[2] === '*' && TOP_LEVEL.has(segments[1] ?? '')) classes |= PathClass.root;

  if (!absolute && !home && !(classes & PathClass.dynamic)) {
    if (!path.startsWith('..')) classes |= PathClass.project;
  }
  if (path.startsWith('/tmp/') || path === '/tmp' || path.startsWith('/var/tmp/') || path === '/var/tmp' || path.startsWith('/dev/shm/') || path.startsWith('/private/tmp/') || path.startsWith('/private/var/folders/')) classes |= PathClass.temp;

  if (/^\/dev\/(?:sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|disk\d|rdisk\d|md\d|dm-\d|mapper\/|loop\d|sr\d|root$)/.test(path)) classes |= PathClass.device;
  if (path === '/dev/mem' || path === '/dev/kmem' || path === '/proc/kcore' || /^\/proc\/(?:\d+|self|\*|\$[a-z_]+|\$\{?[a-z_]+\}?)\/(?:mem|environ|maps|cmdline)$/.test(path)) classes |= PathClass.processMemory | PathClass.credential;

  // Credentials and secrets.
  if (CREDENTIAL_NAMES.has(stripped) && stripped !== 'identity' && stripped !== 'token' && stripped !== 'credentials' && stripped !== 'hosts.yml' && stripped !== 'cookies') classes |= PathClass.credential;
  if ((stripped === 'credentials' || stripped === 'identity' || stripped === 'hosts.yml' || stripped === 'cookies' || stripped === 'token') && (home || absolute)) classes |= PathClass.credential;
  if (isEnvFile(stripped)) classes |= PathClass.credential;
  if (/^id_(?:rsa|dsa|ecdsa|ed25519)(?:_sk)?(?:[._-][a-z0-9_-]+)?$/.test(stripped) && !stripped.endsWith('.pub')) classes |= PathClass.credential;
  for (const suffix of CREDENTIAL_SUFFIXES) if (stripped.endsWith(suffix) && !stripped.endsWith('.pub.asc')) classes |= PathClass.credential;
  if (under(path, CREDENTIAL_DIRS) && !path.endsWith('.pub') && !path.endsWith('/known_hosts') && path !== '~/.ssh/config') classes |= PathClass.credential;
  if (path === '~/.ssh' || path === '~/.aws' || path === '~/.gnupg' || path === '~/.kube') classes |= PathClass.credential;
  if (/(?:^|\/)(?:secrets?|private[_-]?keys?|\.secrets?)(?:\/|$)/.test(path) || /(?:^|[._-])(?:secrets?|passwords?|credentials?)(?:[._-]|$)/.test(stripped)) classes |= PathClass.credential;
  if (HISTORY.has(stripped) || path.endsWith('/fish_history')) classes |= PathClass.history | PathClass.credential;

  if (path === '/etc/passwd' || path === '/etc/sudoers' || path === '/etc/master.passwd' || path.startsWith('/etc/sudoers.d/') || path === '/etc/security/opasswd') classes |= PathClass.credential;
  // SSH material.
  if (path === '~/.ssh' || path.startsWith('~/.ssh/') || path.startsWith('/etc/ssh/') || path === '/etc/ssh' || stripped === 'authorized_keys' || stripped === 'authorized_keys2') classes |= PathClass.ssh;
  // Shell startup.
  if (SHELL_STARTUP.has(stripped) && (home || segments.length <= 2 || path.startsWith('/etc/skel/'))) classes |= PathClass.shellStartup;
  if (under(path, SHELL_STARTUP_DIRS)) classes |= PathClass.shellStartup;
  // Scheduled and service units.
  if (under(path, SCHEDULED_DIRS)) classes |= PathClass.scheduled;
  if ((stripped.endsWith('.service') || stripped.endsWith('.timer') || stripped.endsWith('.socket') || stripped.endsWith('.path')) && (absolute || home)) classes |= PathClass.scheduled;
  if (stripped.endsWith('.plist') && path.includes('launch')) classes |= PathClass.scheduled;
  // sudoers and PAM.
  if (under(path, SUDOERS_PAM_DIRS)) classes |= PathClass.sudoersPam;
  // Git hooks and repository configuration.
  if (/(?:^|\/)\.git\/(?:hooks(?:\/|$)|config$)/.test(path) || path.startsWith('.husky/') || path === '.husky' || path === '~/.gitconfig' || path === '~/.config/git/config' || path === '/etc/gitconfig' || path.startsWith('~/.git-templates/') || path.startsWith('~/.config/git/hooks')) classes |= PathClass.gitHooks;
  // Package-manager configuration.
  if (PACKAGE_CONFIG_NAMES.has(stripped) || under(path, PACKAGE_CONFIG_DIRS)) classes |= PathClass.packageConfig;
  // Dynamic linker.
  if (path === '/etc/ld.so.preload' || path.startsWith('/etc/ld.so.conf')) classes |= PathClass.loader;
  // Logs.
  if (path === '/var/log' || path.startsWith('/var/log/') || path.startsWith('/var/audit/') || path === '/var/account/pacct' || path.startsWith('/private/var/log/') || path.startsWith('/library/logs/') || path === '/var/run/utmp' || path === '/var/log/wtmp') classes |= PathClass.log;
  // Kernel tunables.
  if (path.startsWith('/proc/sys/') || path.startsWith('/sys/kernel/') || path.startsWith('/sys/module/') || path === '/proc/sysrq-trigger') classes |= PathClass.kernel;
  // System trees and data directories.
  if (absolute && SYSTEM_TOP.has(segments[1] ?? '') && !(classes & (PathClass.temp | PathClass.log))) classes |= PathClass.system;
  if (path.startsWith('/var/lib/') || path.startsWith('/srv/') || path.startsWith('/opt/') || path.startsWith('/home/') || path.startsWith('/data/') || path.startsWith('/mnt/') || path.startsWith('/var/www/') || path.startsWith('/var/backups/') || path.startsWith('/var/mail/') || path.startsWith('/var/opt/') || (home && segments.length === 2 && path !== '~/*')) classes |= PathClass.data;
  // The ledger's own installation.
  if (/(?:^|\/)\.ledger(?:\/|$)/.test(path) || path.startsWith('/etc/ledger') || path.startsWith('/var/lib/ledger') || path.startsWith('~/.config/ledger') || path.includes('ledger/keys/') || stripped === 'trust-root.json') classes |= PathClass.ledger;
  return classes;
}

/** Expands one level of `{a,b}` braces (bounded), so `/{etc,usr}` reads as both paths. */
function expandBraces(path: string): readonly string[] {
  const open = path.indexOf('{');
  const close = open === -1 ? -1 : path.indexOf('}', open);
  if (close === -1) return [path];
  const options = path.slice(open + 1, close).split(',');
  if (options.length < 2 || options.length > 16) return [path];
  return options.map((option) => `${path.slice(0, open)}${option}${path.slice(close + 1)}`);
}

const factsCache = new Map<string, PathFacts>();
const FACTS_CACHE_LIMIT = 65_536;

/** Normal form and classes of a path (braces expanded: the classes of all alternatives). */
export function pathFacts(raw: string): PathFacts {
  const cached = factsCache.get(raw);
  if (cached !== undefined) return cached;
  let classes = 0;
  let normal = '';
  for (const alternative of expandBraces(raw)) {
    const n = normalizePath(alternative);
    if (normal === '') normal = n;
    classes |= classify(n);
  }
  const facts = { normal, classes };
  if (factsCache.size >= FACTS_CACHE_LIMIT) factsCache.clear();
  if (raw.length <= 1024) factsCache.set(raw, facts);
  return facts;
}

/** True when a word reads as a path: it has a slash, starts with `~` or `.`, or names a known sensitive file. */
export function looksLikePath(word: string): boolean {
  if (word === '' || word.length > 4096) return false;
  const c = word.charCodeAt(0);
  if (c === 47 /* / */ || c === 126 /* ~ */) return true;
  if (word.includes('://')) return word.startsWith('file://');
  if (word.startsWith('$home') || word.startsWith('$HOME') || word.startsWith('${HOME}') || word.startsWith('$LEDGER_HOME') || word.startsWith('${LEDGER_HOME}')) return true;
  if (word.includes('/')) return !/^[a-z][a-z0-9+.-]*:/i.test(word) || word.startsWith('file:');
  if (c === 46 /* . */) return true;
  const lower = word.toLowerCase();
  return CREDENTIAL_NAMES.has(lower) || SHELL_STARTUP.has(lower) || HISTORY.has(lower) || isEnvFile(lower) || lower === 'authorized_keys';
}
