import type { Rule } from './rule.js';

/**
 * A pattern rule: a regular expression over the normalised text of a command
 * (normalize.ts), run on two views of it: as normalised, and with shell
 * quoting removed. `hints` are literal substrings at least one of which every
 * match contains; the regular expression runs only when one is present, which
 * keeps the common case cheap and bounds the work on hostile input.
 */
export interface PatternRule extends Rule {
  readonly kind: 'pattern';
  /** `shell`: commands of execution tools. `sql`: those, and the statements of database tools. */
  readonly on: 'shell' | 'sql';
  readonly hints: readonly string[];
  readonly pattern: RegExp;
}

// Building blocks. Text is lowercase, with single spaces (normalize.ts).
/** The rest of one simple command: up to the next `;`, `&` or `|`. */
const SEG = String.raw`[^;&|]*`;
/**
 * `git`, then up to six global options or their values (`-C dir`, `-c k=v`),
 * then the subcommand: bounded, so no rule holds two unbounded runs in a row
 * (their backtracking would be quadratic on hostile input).
 */
const GIT = String.raw`\bgit\b(?:\s[^\s;&|]+){0,6}?\s`;
/** End of a shell word. */
const END = String.raw`(?=\s|$|[;&|)])`;
/** Recursive flag of rm/chown/chmod: `-r`, `-rf`, `-fr`, `-vr`, `-R` (folded), `--recursive`. */
const RECURSIVE = String.raw`(?:-[a-z]*r[a-z]*|--recursive)(?=\s|$)`;
/** The filesystem root, the home directory, a top-level system directory, or anything under the system's own trees. */
const ROOT_TARGET = String.raw`(?:/\*?|~/?\*?|\$\{?home\}?/?\*?|/(?:bin|boot|dev|etc|home|lib|lib32|lib64|libx32|media|mnt|opt|proc|root|run|sbin|snap|srv|sys|usr|var)/?\*?|/(?:bin|boot|etc|lib|lib32|lib64|root|sbin|usr|var/lib|var/log)/\S+)`;
/** Block devices. */
const DEVICE = String.raw`/dev/(?:sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|disk\d|rdisk\d|md\d|dm-\d|mapper/|loop\d|sr\d)`;
/** Programs that fetch remote content. */
const FETCH = String.raw`(?:curl|wget|fetch|aria2c|httpie|iwr|irm|invoke-webrequest|invoke-restmethod)`;
/** Shells and interpreters that run what they read on stdin. */
const RUNNER = String.raw`(?:(?:/usr)?/bin/)?(?:(?:ba|z|k|da|fi|tc|a)?sh|python[0-9.]*|perl|ruby|node|php|pwsh|powershell|iex|invoke-expression)`;
/** System configuration and SSH material that an agent must not write. */
const PROTECTED = String.raw`(?:/etc(?=/|\s|$)|(?:~|\$\{?home\}?|/root|/home/[^/\s]+)/\.ssh(?=/|\s|$)|\bauthorized_keys\b)`;
/** Credential files: reading one is as sensitive as writing it. */
const CREDENTIAL_FILE = String.raw`(?:\.aws/(?:credentials|config)\b|\.netrc\b|\b_netrc\b|\.git-credentials\b|\.pgpass\b|\.docker/config\.json|\.kube/config\b|\.npmrc\b|\.pypirc\b|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|\.gnupg(?=/|\s|$)|/etc/(?:g?shadow|master\.passwd)\b|(?:~|\$\{?home\}?|/root|/home/[^/\s]+)/\.ssh/|(?:^|[\s/=<>(:,])\.env(?!\.(?:example|sample|template|dist)\b)(?:\.[a-z0-9_-]+)?(?=$|[\s;&|)<>,]))`;

function re(...alternatives: string[]): RegExp {
  return new RegExp(alternatives.join('|'));
}

/**
 * Dangerous commands (DESIGN.md section 2.1, pattern rules). Every rule that
 * matches counts; the order is the order of `reasons`. Weights: tier 4 4-5,
 * tier 3 2-3, tier 2 1.5, tier 1 0.5 (multiples of 0.25, so sums are exact).
 */
export const PATTERN_RULES: readonly PatternRule[] = [
  {
    id: 'pattern.root_delete', kind: 'pattern', on: 'shell', tier: 4, weight: 5, block: true,
    summary: 'recursive delete of /, ~, a top-level or system directory, or with --no-preserve-root',
    hints: ['rm'],
    pattern: re(
      String.raw`\brm\b(?=${SEG}\s${RECURSIVE})${SEG}\s${ROOT_TARGET}${END}`,
      String.raw`\brm\b${SEG}--no-preserve-root`,
      String.raw`\brmtree\(\s*(?:/|~)\s*[,)]`,
    ),
  },
  {
    id: 'pattern.recursive_delete', kind: 'pattern', on: 'shell', tier: 3, weight: 3,
    summary: 'recursive delete (rm -r/-rf/-fr/-r -f, find -delete, rmtree, rimraf)',
    hints: ['rm', 'find', 'rimraf'],
    pattern: re(
      String.raw`\brm\b${SEG}\s${RECURSIVE}`,
      String.raw`\bfind\b${SEG}\s-delete\b`,
      String.raw`\bfind\b${SEG}\s-exec\s+rm\b`,
      String.raw`\brmtree\(`,
      String.raw`\brimraf\b`,
      String.raw`\brm(?:sync)?\([^)]*recursive\s*:\s*true`,
    ),
  },
  {
    id: 'pattern.world_writable', kind: 'pattern', on: 'shell', tier: 3, weight: 3,
    summary: 'chmod that makes files world-writable (777, o+w, a+w, any mode with the other-write bit)',
    hints: ['chmod', 's_iwoth'],
    pattern: re(
      String.raw`\bchmod\b${SEG}\s(?:[^\s;&|]*,)?(?:0?[0-7]?[0-7]{2}[2367]|[ugo]*[ao][ugo]*[+=][rwxst]*w[rwxst]*)(?=[\s,;&|]|$)`,
      String.raw`\bchmod(?:sync)?\([^)]*\b0o?[0-7]?[0-7]{2}[2367]\s*\)`,
      String.raw`\bs_iwoth\b`,
    ),
  },
  {
    id: 'pattern.chown_root', kind: 'pattern', on: 'shell', tier: 3, weight: 3,
    summary: 'recursive chown to root',
    hints: ['chown'],
    pattern: re(String.raw`\bchown\b(?=${SEG}\s${RECURSIVE})${SEG}\s(?:root|0)(?::(?:root|0)?)?${END}`),
  },
  {
    id: 'pattern.mkfs', kind: 'pattern', on: 'shell', tier: 4, weight: 5, block: true,
    summary: 'making or wiping a filesystem (mkfs, mke2fs, mkswap, wipefs, blkdiscard)',
    hints: ['mk', 'wipefs', 'blkdiscard'],
    pattern: re(String.raw`\b(?:mkfs(?:\.[a-z0-9]+)?|mke2fs|mkswap|mkntfs|mkdosfs|wipefs|blkdiscard)\b`),
  },
  {
    id: 'pattern.dd_device', kind: 'pattern', on: 'shell', tier: 4, weight: 5, block: true,
    summary: 'dd writing to a device (of=/dev/..., except null, zero, stdout, stderr, tty)',
    hints: ['of=/dev/'],
    pattern: re(String.raw`\bdd\b${SEG}\bof=/dev/(?!null\b|zero\b|stdout\b|stderr\b|tty\b|fd/|shm/)`),
  },
  {
    id: 'pattern.block_device_write', kind: 'pattern', on: 'shell', tier: 4, weight: 5, block: true,
    summary: 'writing to a block device (> /dev/sda, tee /dev/nvme0n1, cp x /dev/sdb, shred /dev/sda)',
    hints: ['/dev/'],
    pattern: re(
      String.raw`(?:>>?|\btee\b(?:\s+-\S+)*)\s*${DEVICE}`,
      String.raw`\b(?:cp|mv|install)\b${SEG}\s${DEVICE}[^\s;&|]*\s*(?=$|[;&|])`,
      String.raw`\bshred\b${SEG}\s${DEVICE}`,
    ),
  },
  {
    id: 'pattern.fork_bomb', kind: 'pattern', on: 'shell', tier: 4, weight: 5, block: true,
    summary: 'fork bomb (:(){ :|:& };:, named variants, fork loops)',
    hints: ['()', '( )', 'fork', '%0'],
    pattern: re(
      String.raw`([^\s(){}|&;<>]{1,64})\s?\(\s?\)\s?\{\s?\1\s?\|\s?\1\s?&`,
      String.raw`\bfork\s+while\s+fork\b`,
      String.raw`\bwhile\b[^;]{0,24}\bfork\(\)`,
      String.raw`%0\s?\|\s?%0`,
    ),
  },
  {
    id: 'pattern.remote_pipe_shell', kind: 'pattern', on: 'shell', tier: 4, weight: 4,
    summary: 'remote content run by a shell or interpreter (curl | sh, wget -O- | bash, bash <(curl ...), sh -c "$(curl ...)")',
    hints: ['curl', 'wget', 'fetch', 'aria2c', 'httpie', 'iwr', 'irm', 'invoke-', 'downloadstring'],
    pattern: re(
      String.raw`\b${FETCH}\b[^;&]*\|\s*(?:sudo\s+(?:-\S+\s+)*)?(?:env\s+)?${RUNNER}${END}`,
      String.raw`(?:\b(?:ba|z|k|da)?sh|\bsource|(?:^|\s)\.)\s+<\(\s*${FETCH}\b`,
      String.raw`(?:\b(?:ba|z|k|da)?sh\s+(?:-\S+\s+)*-[a-z]*c|\beval|\bexec)\s+(?:\$\(|\x60)\s*${FETCH}\b`,
      String.raw`\biex\b${SEG}(?:\biwr\b|invoke-webrequest|downloadstring)`,
    ),
  },
  {
    id: 'pattern.pipe_to_shell', kind: 'pattern', on: 'shell', tier: 3, weight: 2.5,
    summary: 'text piped into a shell (| sh, | bash)',
    hints: ['|'],
    pattern: re(String.raw`\|\s*(?:sudo\s+(?:-\S+\s+)*)?(?:(?:/usr)?/bin/)?(?:ba|z|k|da|fi|tc|a)?sh${END}`),
  },
  {
    id: 'pattern.protected_write', kind: 'pattern', on: 'shell', tier: 3, weight: 3,
    summary: 'writes or in-place edits under /etc or ~/.ssh, or account database changes',
    hints: ['/etc', '.ssh', 'authorized_keys', 'visudo', 'user', 'group', 'passwd', 'vipw', 'vigr'],
    pattern: re(
      String.raw`>>?\s*${PROTECTED}`,
      String.raw`\btee\b(?:\s+-\S+)*\s+${PROTECTED}`,
      // sed and perl scripts contain `|` and `;` themselves: this one spans the whole text (fail closed).
      String.raw`\b(?:sed|perl|ruby)\b(?=.*\s(?:-[a-z]*i[a-z]*|--in-place)(?=[\s=.]|$)).*${PROTECTED}`,
      String.raw`\b(?:rm|unlink|truncate|shred|touch|mkdir|rmdir|chmod|chown|chgrp|chattr|setfacl|vi|vim|nvim|nano|emacs|ed|pico|joe|mcedit|ln)\b${SEG}\s${PROTECTED}`,
      String.raw`\b(?:cp|mv|install|rsync|scp)\b${SEG}\s${PROTECTED}[^\s;&|]*\s*(?=$|[;&|])`,
      String.raw`\bof=${PROTECTED}`,
      String.raw`(?:^|[;&|(\x60]\s*|\bsudo\s+(?:-\S+\s+)*)(?:visudo|useradd|userdel|usermod|groupadd|groupdel|groupmod|passwd|chpasswd|vipw|vigr|adduser|deluser)\b`,
      String.raw`\bopen\(\s*${PROTECTED}[^),]*,\s*[wax+]`,
      String.raw`\b(?:writefile|appendfile|writefilesync|appendfilesync|createwritestream)\(\s*${PROTECTED}`,
    ),
  },
  {
    id: 'pattern.credential_file', kind: 'pattern', on: 'shell', tier: 3, weight: 3,
    summary: 'any access to credential files (.aws/credentials, .netrc, id_rsa, .env, ~/.ssh/, /etc/shadow, ...)',
    hints: ['.aws', 'netrc', '.git-credentials', '.pgpass', '.docker', '.kube', '.npmrc', '.pypirc', 'id_', '.gnupg', 'shadow', 'master.passwd', '.ssh', '.env'],
    pattern: re(CREDENTIAL_FILE),
  },
  {
    id: 'pattern.systemctl', kind: 'pattern', on: 'shell', tier: 3, weight: 2.5,
    summary: 'stopping, restarting or disabling services (systemctl, service, launchctl)',
    hints: ['systemctl', 'service', 'launchctl'],
    pattern: re(
      String.raw`\bsystemctl\b${SEG}\s(?:stop|restart|disable|mask|kill|isolate|try-restart|reload-or-restart|halt|poweroff|reboot|emergency|rescue)\b`,
      String.raw`\b(?:rc-)?service\s+\S+\s+(?:stop|restart|force-reload)\b`,
      String.raw`\blaunchctl\s+(?:unload|stop|remove|bootout|disable)\b`,
    ),
  },
  {
    id: 'pattern.kill_all', kind: 'pattern', on: 'shell', tier: 4, weight: 4,
    summary: 'signalling every process (kill -9 -1, kill -- -1, killall5)',
    hints: ['kill'],
    pattern: re(
      String.raw`\bkill\s+(?:-s\s+\S+\s+|-\S+\s+)(?:--\s+)?-1(?=\s*(?:$|[;&|]))`,
      String.raw`\bkill\s+--\s+-1\b`,
      String.raw`\bkillall5\b`,
    ),
  },
  {
    id: 'pattern.sql_drop', kind: 'pattern', on: 'sql', tier: 3, weight: 3,
    summary: 'SQL DROP (table, database, schema, ...), MongoDB drop, Redis FLUSHALL',
    hints: ['drop', 'flush'],
    pattern: re(
      String.raw`\bdrop\s+(?:table|database|schema|index|view|user|role|collection|keyspace|materialized\s+view|function|procedure|trigger|sequence|owned|tablespace)\b`,
      String.raw`\bdropdatabase\(`,
      String.raw`\.drop\(\s*\)`,
      String.raw`\bflush(?:all|db)\b`,
    ),
  },
  {
    id: 'pattern.sql_truncate', kind: 'pattern', on: 'sql', tier: 3, weight: 3,
    summary: 'SQL TRUNCATE',
    hints: ['truncate'],
    pattern: re(String.raw`\btruncate\s+(?:table\s+)?(?!-)[a-z_"\x60\[]`),
  },
  {
    id: 'pattern.sql_delete_all', kind: 'pattern', on: 'sql', tier: 3, weight: 3,
    summary: 'SQL DELETE without WHERE (or WHERE 1=1), MongoDB deleteMany({})',
    hints: ['delete'],
    pattern: re(
      String.raw`\bdelete\s+from\s+(?=([^\s;]+))\1(?![^;]*\bwhere\b)`,
      String.raw`\bdelete\s+from\b[^;]*\bwhere\s+(?:1\s*=\s*1|true|1|'1'\s*=\s*'1')(?=\s|;|$|\))`,
      String.raw`\bdeletemany\(\s*\{\s*\}\s*\)`,
    ),
  },
  {
    id: 'pattern.git_push_force', kind: 'pattern', on: 'shell', tier: 3, weight: 3,
    summary: 'git push --force / -f / --force-with-lease / +refspec',
    hints: ['push'],
    pattern: re(String.raw`${GIT}push\b${SEG}\s(?:--force(?:-with-lease|-if-includes)?\b|-[a-z]*f[a-z]*(?=\s|$)|\+[^\s;&|])`),
  },
  {
    id: 'pattern.git_reset_hard', kind: 'pattern', on: 'shell', tier: 3, weight: 2.5,
    summary: 'git reset --hard',
    hints: ['--hard'],
    pattern: re(String.raw`${GIT}reset\b${SEG}\s--hard\b`),
  },
  {
    id: 'pattern.git_clean_force', kind: 'pattern', on: 'shell', tier: 3, weight: 2.5,
    summary: 'git clean -f',
    hints: ['clean'],
    pattern: re(String.raw`${GIT}clean\b${SEG}\s(?:-[a-z]*f[a-z]*|--force)(?=\s|$)`),
  },
  {
    id: 'pattern.git_branch_delete', kind: 'pattern', on: 'shell', tier: 3, weight: 2,
    summary: 'git branch -D (and -d: case folding makes them one), remote branch deletion',
    hints: ['branch', 'push'],
    pattern: re(
      String.raw`${GIT}branch\b${SEG}\s(?:-[a-z]*d[a-z]*|--delete)(?=\s|$)`,
      String.raw`${GIT}push\b${SEG}\s(?:--delete|-d|:[^\s;&|]+)(?=\s|$)`,
    ),
  },
  {
    id: 'pattern.inline_interpreter', kind: 'pattern', on: 'shell', tier: 2, weight: 1.5,
    summary: 'inline code for an interpreter (python -c, node -e, perl -e, ruby -e, php -r, bash -c, pwsh -command)',
    hints: ['python', 'pypy', 'node', 'deno', 'bun', 'perl', 'ruby', 'php', 'sh', 'osascript'],
    pattern: re(
      String.raw`\b(?:python[0-9.]*|pypy[0-9.]*)\s+(?:-[a-z]+\s+)*-[a-z]*c(?=\s|$)`,
      String.raw`\b(?:node(?:js)?|bun)\s+(?:-\S+\s+)*(?:-[a-z]*[ep]|--eval|--print)(?=\s|$)`,
      String.raw`\bdeno\s+eval\b`,
      String.raw`\b(?:perl|ruby)\s+(?:-\S+\s+)*-[a-z]*e(?=\s|$)`,
      String.raw`\bphp\s+(?:-\S+\s+)*-r(?=\s|$)`,
      String.raw`\b(?:ba|z|k|da|fi|tc|a)?sh\s+(?:-\S+\s+)*-[a-z]*c(?=\s|$)`,
      String.raw`\b(?:pwsh|powershell)(?:\.exe)?\s+(?:-\S+\s+)*-(?:c|command|e|enc|encodedcommand)(?=\s|$)`,
      String.raw`\bosascript\s+-e\b`,
    ),
  },
  {
    id: 'pattern.shutdown', kind: 'pattern', on: 'shell', tier: 3, weight: 3,
    summary: 'shutdown, reboot, halt, poweroff, init 0/6',
    hints: ['shutdown', 'reboot', 'halt', 'poweroff', 'init'],
    pattern: re(String.raw`\b(?:shutdown|reboot|halt|poweroff)\b`, String.raw`\b(?:tel)?init\s+[06]\b`),
  },
  {
    id: 'pattern.container_kill', kind: 'pattern', on: 'shell', tier: 2, weight: 1.5,
    summary: 'docker/podman kill, forced rm, prune',
    hints: ['docker', 'podman', 'nerdctl'],
    pattern: re(String.raw`\b(?:docker|podman|nerdctl)\b${SEG}\s(?:kill|rmi?\s+(?:-\S+\s+)*-[a-z]*f[a-z]*|system\s+prune|volume\s+(?:rm|prune)|container\s+(?:kill|prune))\b`),
  },
  {
    id: 'pattern.kubectl_delete', kind: 'pattern', on: 'shell', tier: 3, weight: 2.5,
    summary: 'kubectl delete/drain/cordon, scaling to zero, helm uninstall',
    hints: ['kubectl', 'oc', 'helm'],
    pattern: re(
      String.raw`\b(?:kubectl|oc)\b${SEG}\s(?:delete|drain|cordon)\b`,
      String.raw`\bkubectl\b(?=${SEG}\sscale\b)${SEG}--replicas[= ]0\b`,
      String.raw`\bhelm\s+(?:uninstall|delete)\b`,
    ),
  },
  {
    id: 'pattern.sudo', kind: 'pattern', on: 'shell', tier: 2, weight: 1.5,
    summary: 'privilege escalation (sudo, doas, pkexec, su)',
    hints: ['sudo', 'doas', 'pkexec', 'su'],
    pattern: re(
      String.raw`(?:^|[\s;&|(\x60])(?:sudo|doas|pkexec)\b`,
      String.raw`\bsu\b${SEG}\s-c\b`,
      String.raw`\bsu\b(?:\s+-)?(?:\s+root)?\s*(?=$|[;&|])`,
    ),
  },
  {
    id: 'pattern.reverse_shell', kind: 'pattern', on: 'shell', tier: 4, weight: 4,
    summary: 'reverse shells (/dev/tcp, nc -e, socat exec:, pty.spawn)',
    hints: ['/dev/tcp', '/dev/udp', 'nc', 'netcat', 'socat', 'mkfifo', 'pty.spawn'],
    pattern: re(
      String.raw`/dev/(?:tcp|udp)/`,
      String.raw`\b(?:nc|ncat|netcat)\b${SEG}\s-[a-z]*[ec]\b`,
      String.raw`\bsocat\b${SEG}\bexec:`,
      String.raw`\bmkfifo\b.*\|\s*(?:nc|ncat|netcat)\b`,
      String.raw`\bpty\.spawn\(`,
    ),
  },
  {
    id: 'pattern.firewall_flush', kind: 'pattern', on: 'shell', tier: 3, weight: 3,
    summary: 'disabling firewalls or mandatory access control (iptables -F, ufw disable, setenforce 0)',
    hints: ['tables', 'ufw', 'nft', 'setenforce', 'firewalld', 'apparmor', 'auditd'],
    pattern: re(
      String.raw`\b(?:ip6?tables(?:-legacy|-nft)?)\b${SEG}\s(?:-f|--flush|-x|--delete-chain|-p\s+(?:input|forward|output)\s+accept)\b`,
      String.raw`\bufw\s+(?:disable|reset)\b`,
      String.raw`\bnft\s+flush\b`,
      String.raw`\bsetenforce\s+0\b`,
      String.raw`\bsystemctl\b${SEG}\s(?:stop|disable|mask)\s+(?:firewalld|ufw|apparmor|auditd)\b`,
    ),
  },
  {
    id: 'pattern.history_tamper', kind: 'pattern', on: 'shell', tier: 3, weight: 2.5,
    summary: 'erasing shell history or system logs',
    hints: ['history', 'histfile', '/var/log', 'journalctl', 'auditctl'],
    pattern: re(
      String.raw`\bhistory\s+-c\b`,
      String.raw`\bunset\s+histfile\b`,
      String.raw`\bhistfile=/dev/null`,
      String.raw`>\s*/var/log/`,
      String.raw`\b(?:rm|shred|truncate|unlink)\b${SEG}\s/var/log/`,
      String.raw`\bjournalctl\b${SEG}--vacuum`,
      String.raw`\bauditctl\s+-d\b`,
    ),
  },
  {
    id: 'pattern.net_fetch', kind: 'pattern', on: 'shell', tier: 1, weight: 0.5,
    summary: 'network fetch (curl, wget, ...)',
    hints: ['curl', 'wget', 'aria2c', 'httpie', 'invoke-', 'iwr', 'irm'],
    pattern: re(String.raw`\b(?:curl|wget|aria2c|httpie|invoke-webrequest|invoke-restmethod|iwr|irm)\b`),
  },
];

/**
 * Extra rule, not a table row because it needs the configured host list:
 * a `curl`/`wget` whose URL host is not a known host (or that names no URL
 * the gate can read). Fires only when `pattern.net_fetch` fired.
 */
export const UNKNOWN_HOST_RULE: Rule = {
  id: 'pattern.unknown_host', kind: 'pattern', tier: 2, weight: 1,
  summary: 'curl/wget to a host not in the known-hosts list',
};

/**
 * Input too large or too deep to inspect fully: what the gate cannot read, a
 * human must (fail closed). Rules still run on the part that was read.
 */
export const UNINSPECTABLE_RULE: Rule = {
  id: 'pattern.uninspectable_input', kind: 'pattern', tier: 3, weight: 3,
  summary: 'arguments too large or too deeply nested to inspect',
};

/** URLs in a command; group 1 is the authority (userinfo, host, port). */
export const URL_AUTHORITY = /\b(?:https?|ftps?|sftp|scp|wss?):\/\/([^\s/?#'"\\]+)/g;
