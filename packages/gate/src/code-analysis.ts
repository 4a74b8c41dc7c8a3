import { analysis } from './analysis-version.js';
import { R, type Findings } from './findings.js';
import { looksLikePath } from './path-model.js';
import { touchPath, type PathAction } from './path-rules.js';
import { touchUrl, urlsIn } from './url-rules.js';

/**
 * Inline code for an interpreter (`python -c`, `node -e`, `perl -e`,
 * `ruby -e`, `php -r`, awk programs, here-documents fed to an interpreter).
 * The gate does not parse every language; it reads what the code will touch:
 * its string literals (commands it hands to a shell, paths it opens, URLs it
 * reaches) and the few calls that decide what kind of code it is. Code that
 * builds what it runs from encoded or computed text is uninspectable.
 */

const OBFUSCATION = /\b(?:b64decode|b32decode|a85decode|decodebytes|unhexlify|fromhex|frombase64string|atob|fromcharcode|marshal\.loads|pickle\.loads|zlib\.decompress|codecs\.decode|rot13|decode\(\s*['"](?:base64|hex|rot13))|buffer\.from\([^)]*['"](?:base64|hex)['"]|\bpack\(\s*['"][hu]|\bunpack\(\s*['"]m|\\x[0-9a-f]{2}.*\\x[0-9a-f]{2}.*\\x[0-9a-f]{2}/i;
const DYNAMIC_EXEC = /\b(?:exec|eval|compile|execfile|__import__|new\s+function|function\s*\(\s*['"]|instance_eval|class_eval|module_eval|create_function|assert)\s*\(/i;
const SHELL_CALLS = /\b(?:os\.system|os\.popen|os\.exec\w*|os\.spawn\w*|subprocess\.\w+|commands\.getoutput|pty\.spawn|child_process|exec(?:sync|file|filesync)?|spawn(?:sync)?|system|popen|shell_exec|passthru|proc_open|%x|qx|io\.popen|kernel\.exec|open3)\b|`[^`]+`/i;
const NETWORK = /\b(?:socket|urllib|urlopen|requests\.\w+|http\.client|httplib|http\.request|https\.request|fetch\(|net\.connect|net\.createconnection|xmlhttprequest|io::socket|lwp|tcpsocket|fsockopen|curl_exec|file_get_contents\(\s*['"]https?:|open-uri|net::http|websocket|smtplib|ftplib|paramiko|dgram)\b/i;
const REVERSE = /\b(?:dup2|pty\.spawn|\/bin\/(?:ba)?sh|cmd\.exe|-i['"])\b|\bexec\s*\(\s*['"]\/bin/i;
const WRITES = /\b(?:open\([^)]*,\s*['"][wax+]|writefile|appendfile|createwritestream|write_text|write_bytes|fs\.write|file_put_contents|fopen\([^)]*,\s*['"][wax]|file\.write|>>?\s*\$|open\s*\(\s*\w+\s*,\s*['"]?>|shutil\.copy|shutil\.move|os\.rename|os\.replace|copyfile|symlink)/i;
const DELETES = /\b(?:rmtree|rmsync|rmdirsync|unlink|unlinksync|os\.remove|os\.rmdir|removedirs|rimraf|fileutils\.rm_r|rm_rf|file\.delete)\b/i;
const RECURSIVE_DELETES = /\b(?:rmtree|rimraf|rm_rf|rm_r|recursive\s*:\s*true|removedirs)\b/i;
const ENVIRONMENT = /\b(?:os\.environ|process\.env|%env|\$env\b|getenv|environ\b|env\.to_h|printenv)/i;
/** Version 4: code that evaluates what it downloads (PowerShell's IEX of a WebClient string, exec(urlopen(...).read())). */
const EVALUATES = /\b(?:iex|invoke-expression)\b|\b(?:exec|eval)\s*\(/i;
const DOWNLOADS = /\b(?:downloadstring|downloaddata|downloadfile|net\.webclient|webclient|invoke-webrequest|iwr|invoke-restmethod|irm|start-bitstransfer|urlopen|requests\.get|urllib\.request|http\.get|fetch)\b/i;
const PRIVILEGE = /\b(?:setuid\(0\)|setgid\(0\)|os\.setuid|chmod\([^)]*0o?[2467][0-7]{3})/i;

/** The string literals of code: '...', "...", `...`, with common escapes decoded. */
function literalsOf(code: string): string[] {
  const out: string[] = [];
  const pattern = /'((?:[^'\\\n]|\\.){1,4096})'|"((?:[^"\\\n]|\\.){1,4096})"|`((?:[^`\\]|\\.){1,4096})`/g;
  for (let m = pattern.exec(code); m !== null; m = pattern.exec(code)) {
    const raw = m[1] ?? m[2] ?? m[3] ?? '';
    out.push(raw.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c === 't' ? '\t' : c)));
    if (out.length >= 256) break;
  }
  return out;
}

/** Shell words that begin commands the gate has rules about, for telling a command literal from other text. */
export const COMMAND_WORDS: ReadonlySet<string> = new Set([
  'rm', 'rmdir', 'shred', 'srm', 'wipe', 'dd', 'mkfs', 'wipefs', 'mv', 'cp', 'chmod', 'chown', 'chgrp', 'chattr', 'setcap', 'mount', 'umount', 'chroot',
  'curl', 'wget', 'nc', 'ncat', 'netcat', 'socat', 'telnet', 'scp', 'rsync', 'sftp', 'ftp', 'ssh', 'ssh-copy-id', 'cat', 'tee', 'echo', 'printf',
  'sudo', 'doas', 'su', 'pkexec', 'env', 'bash', 'sh', 'zsh', 'dash', 'ksh', 'fish', 'python', 'python3', 'perl', 'ruby', 'node', 'php', 'eval',
  'exec', 'source', 'crontab', 'at', 'systemctl', 'service', 'launchctl', 'kill', 'pkill', 'killall', 'killall5', 'shutdown', 'reboot', 'halt',
  'poweroff', 'init', 'iptables', 'ufw', 'setenforce', 'history', 'unset', 'export', 'useradd', 'usermod', 'passwd', 'visudo', 'git', 'docker',
  'podman', 'kubectl', 'helm', 'aws', 'gsutil', 'gcloud', 'az', 'rclone', 'pip', 'pip3', 'npm', 'npx', 'yarn', 'pnpm', 'cargo', 'gem', 'go',
  'base64', 'xxd', 'openssl', 'find', 'xargs', 'truncate', 'touch', 'ln', 'install', 'sed', 'awk', 'insmod', 'modprobe', 'sysctl', 'nohup',
  'timeout', 'nice', 'busybox', 'toybox', 'ledger', 'journalctl', 'auditctl', 'security', 'vault', 'gpg', 'ls', 'tar', 'zip', 'unzip', 'make',
  'terraform', 'mysql', 'psql', 'redis-cli', 'mongo', 'dropdb', 'nsenter', 'unshare', 'ssh-keygen', 'alias', 'tmux', 'screen', 'setsid',
]);

/** True when text reads as a shell command: its first word is a command the gate knows, or it chains with shell operators. */
export function looksLikeCommand(text: string): boolean {
  // One word without a slash is a command only when it names one (`reboot`).
  if (text.indexOf(' ') === -1 && text.indexOf('/') === -1 && text.indexOf('\t') === -1 && text.indexOf('\n') === -1) return COMMAND_WORDS.has(text.trim().toLowerCase());
  const trimmed = text.trimStart();
  if (trimmed === '' || trimmed.length > 65_536) return false;
  const first = /^(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*([^\s;|&<>()]+)/.exec(trimmed)?.[1] ?? '';
  const slash = first.lastIndexOf('/');
  const name = (slash === -1 ? first : first.slice(slash + 1)).toLowerCase().replace(/[0-9.]+$/, '');
  if (COMMAND_WORDS.has(name) || COMMAND_WORDS.has(`${name}3`)) return /\s|^[a-z]+$/i.test(trimmed) || slash !== -1;
  if (/[;&|`]|\$\(/.test(trimmed) && /(?:^|[;&|]\s*|\$\(\s*|`\s*)(?:sudo|rm|curl|wget|bash|sh|nc|chmod|eval|python3?|perl|base64)\s/.test(trimmed)) return true;
  return trimmed.indexOf('/dev/') !== -1 && /\/dev\/(?:tcp|udp)\//.test(trimmed);
}

/**
 * Reads inline code. `runShell` analyses a string the code hands to a shell
 * (bounded by the caller's depth).
 */
export function inspectCode(findings: Findings, code: string, runShell: (text: string) => void): void {
  findings.add(R.inlineCode);
  const lower = code.toLowerCase();
  const literals = literalsOf(code);
  const network = NETWORK.test(lower);
  const shell = SHELL_CALLS.test(lower);
  if (analysis.v4 && EVALUATES.test(lower) && DOWNLOADS.test(lower)) findings.add(R.remotePipeShell);
  if (OBFUSCATION.test(lower) && (DYNAMIC_EXEC.test(lower) || shell)) findings.add(R.decoded);
  else if (DYNAMIC_EXEC.test(lower) && !literals.some(looksLikeCommand)) findings.add(R.eval);
  if (network && (REVERSE.test(lower) || (shell && /\bsocket\b|net\.connect|tcpsocket|fsockopen|io::socket/.test(lower)))) findings.add(R.reverseShell);
  if (PRIVILEGE.test(lower)) findings.add(R.setuid);
  const action: PathAction = DELETES.test(lower) ? (RECURSIVE_DELETES.test(lower) ? 'delete_tree' : 'delete') : WRITES.test(lower) ? 'write' : 'read';
  let readsFile = false;
  for (const literal of literals) {
    if (shell && looksLikeCommand(literal)) {
      runShell(literal);
      continue;
    }
    for (const url of urlsIn(literal)) touchUrl(findings, url);
    if (looksLikePath(literal) && !literal.includes('://') && !/\s/.test(literal.trim())) {
      touchPath(findings, literal, action);
      if (action === 'read') readsFile = true;
      if (action !== 'read') touchPath(findings, literal, 'read');
    }
  }
  if (network) {
    findings.add(R.fetch);
    if (readsFile || ENVIRONMENT.test(lower) || /\bopen\(|readfile|file_get_contents|\bread\(\)/.test(lower)) {
      if (/\b(?:post|put|send|sendall|write|upload|request|urlopen|fetch)\b/.test(lower) || /data\s*=|body\s*:/.test(lower)) findings.add(R.upload);
    }
  }
  if (shell && !literals.some(looksLikeCommand) && /\b(?:system|popen|exec\w*|spawn\w*|subprocess\.\w+|shell_exec|passthru)\s*\(\s*[^'"`\s)]/.test(lower)) findings.add(R.eval);
  if (ENVIRONMENT.test(lower) && !network) findings.add(R.environmentDump);
}
