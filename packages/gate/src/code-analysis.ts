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
/** Version 8: more decoders (Perl's and Ruby's, PHP's, JavaScript's). */
const OBFUSCATION_V8 = /\bdecode_base64\b|\bdecode64\b|\bstrict_decode64\b|\burlsafe_decode64\b|\bbase64_decode\b|\bhex2bin\b|\bstr_rot13\b|\bgzinflate\b|\bgzuncompress\b|\bfromhex\b|\bbinascii\.a2b_\w+|\bstring\.fromcharcode\b|\bbuffer\.from\s*\([^)]{0,4096}['"](?:base64|base64url|hex)['"]|\batob\s*\(|\bunpack1?\s*\(?\s*['"][hmu]|\.unpack1?\s*\(?\s*['"][hmu]|\bpack\s*\(?\s*['"][hu]|\[\s*['"][^'"]{16,4096}['"]\s*\]\s*\.pack\b/i;
/** Version 8: evaluation without parentheses or through other names (perl `eval $x`, ruby `eval x`, `new Function`, `vm.runIn*`). */
const DYNAMIC_EXEC_V8 = /\b(?:eval|exec|instance_eval|class_eval|module_eval|system)\b\s*(?:\(|[\w$@'"`{[])|\bnew\s+function\b|\bfunction\s*\(|\bvm\.run\w*|\brequire\s*\(\s*['"]child_process/i;
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
/** Version 5: process spawning that version 4 did not name (Rust, Go, Java, .NET, Deno, Bun). */
const SHELL_CALLS_V5 = /\b(?:command::new|process::command|exec\.command|runtime\.getruntime\(\)\.exec|processbuilder|process\.start|deno\.(?:run|command)|bun\.spawn(?:sync)?|\$\.spawn|execa(?:sync|command)?|shelljs|child_process)\b/i;
/** Version 5: sockets by module or constructor (`require("net")`, `socket.socket`, `TCPSocket.new`, `net.Dial`, `.connect(port, host)`). */
const NETWORK_V5 = /require\(\s*['"](?:node:)?(?:net|tls|dgram)['"]\s*\)|from\s+['"](?:node:)?(?:net|tls|dgram)['"]|\bimport\s+(?:socket|asyncio|telnetlib)\b|\bsocket\.(?:socket|create_connection)\b|\btcpsocket\b|\bnet\.dial\b|\bnew\s+(?:java\.net\.)?socket\s*\(|\.connect\(\s*\d{2,5}\s*,|\bfsockopen\b|\bsocket::inet\b|\bio::socket\b|\bdeno\.connect\b/i;
/** Version 5: a shell or the standard streams handed to a socket (version 4's pattern missed a quoted "/bin/sh"). */
const REVERSE_V5 = /\b(?:dup2|pty\.spawn)\b|(?:^|[^\w/])\/bin\/(?:ba|z|da|k)?sh\b|\bcmd\.exe\b|\.pipe\(\s*\w+\.stdin\s*\)|\bstdin\s*:\s*\w*sock|\bfileno\(\)/i;
/** Version 5: a socket, for the shell-plus-socket reading. */
const SOCKET_V5 = /\bsocket\b|\.connect\(|createconnection|tcpsocket|fsockopen|io::socket|net\.dial/i;

/**
 * Version 6: commands that Tcl, Expect and the like run as a statement of
 * their own, without quotes (`exec rm -rf ~`, `spawn ssh host`, `open "|cmd"`,
 * `[exec curl ...]`): the text after the word, to its statement's end.
 */
const STATEMENT_COMMAND = /(?:^|[\n;[{])\s*(?:exec|spawn|system)\s+([^\n;\]}]{1,4096})|\bopen\s+["{]\|([^"}\n]{1,4096})/g;

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

/**
 * Version 5: the quote-like literals of Ruby and Perl (`%q(...)`, `%Q[...]`,
 * `%x{...}`, `q(...)`, `qq{...}`, `qx(...)`), which hold commands as surely
 * as quotes do. Their text, one per literal.
 */
const QUOTE_LIKE = /(?:^|[^\w$@%])(%[qQxwW]?|qq|qx|qw|q)(?:\(([^()]{1,4096})\)|\[([^[\]]{1,4096})\]|\{([^{}]{1,4096})\}|<([^<>]{1,4096})>|\|([^|]{1,4096})\||!([^!]{1,4096})!)/g;
function quoteLikeLiterals(code: string, out: string[], commands: string[]): void {
  if (code.indexOf('%') === -1 && code.indexOf('q') === -1) return;
  QUOTE_LIKE.lastIndex = 0;
  for (let m = QUOTE_LIKE.exec(code); m !== null && out.length < 256; m = QUOTE_LIKE.exec(code)) {
    const text = m[2] ?? m[3] ?? m[4] ?? m[5] ?? m[6] ?? m[7] ?? '';
    // %x(...) and qx(...) run their text in a shell, as backquotes do.
    if (m[1] === '%x' || m[1] === 'qx') commands.push(text);
    else out.push(text);
  }
}

/**
 * Version 5: expressions that name the home directory, in the languages the
 * gate reads (`os.path.expanduser('~')`, `process.env.HOME`, `os.homedir()`,
 * `Dir.home`, `$ENV{HOME}`, ...): replaced by the literal `'~'` before
 * literals are joined, so a command built from one resolves as the shell's would.
 */
const HOME_EXPRESSION = /os\.path\.expanduser\(\s*(['"])~\1\s*\)|os\.(?:environ\[\s*(['"])HOME\2\s*\]|environ\.get\(\s*(['"])HOME\3\s*\)|getenv\(\s*(['"])HOME\4\s*\))|(?:pathlib\.)?Path\.home\(\)|process\.env(?:\.HOME|\[\s*(['"])HOME\5\s*\])|(?:os|require\(\s*(['"])(?:node:)?os\6\s*\))\.homedir\(\)|Dir\.home|ENV\[\s*(['"])HOME\7\s*\]|\$ENV\{\s*(['"]?)HOME\8\s*\}|getenv\(\s*(['"])HOME\9\s*\)|System\.getProperty\(\s*"user\.home"\s*\)/g;
/** One string literal (single or double quoted, no newline), as a source fragment. */
const LITERAL = String.raw`(?:'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")`;
/**
 * A literal, a concatenation operator and what it joins: `+` or Lua's `..`
 * with a literal, a variable or an expression; Perl's and PHP's `.` with a
 * literal or a `$variable` (a `.` before a name is a method call: `'x'.join`).
 */
const CONCATENATION = new RegExp(String.raw`(${LITERAL})\s*(?:(?:\+|\.\.)\s*(${LITERAL}|\$?[A-Za-z_][\w.]*(?:\[[^\]\n]{0,64}\]|\([^()\n]{0,64}\))?)|\.\s*(${LITERAL}|\$[A-Za-z_]\w*))`, 'g');
/** A formatted literal (Python f-string, Ruby interpolation, `%s` / `{}` filled by % or .format): its holes become a variable. */
const INTERPOLATION_HOLE = /#\{[^}\n]{0,128}\}|\{[^{}\n]{0,128}\}|%[sdrfi]/g;

/** Formatted literals: Python f-strings, literals filled by `%` or `.format(`, Ruby strings with `#{...}`. */
const FORMATTED_LITERAL = new RegExp(String.raw`\b[fF][rR]?(${LITERAL})|(${LITERAL})(?=\s*(?:%|\.format\())|("(?:[^"\\\n]|\\.)*#\{(?:[^"\\\n]|\\.)*")`, 'g');

/** The text of a literal fragment (quotes removed). */
function literalText(fragment: string): string {
  return fragment.slice(1, -1);
}

/**
 * Version 5: code with its string concatenations joined (`'rm -rf ' + path`
 * becomes `'rm -rf $V'`, `"cu"."rl ..."` becomes `"curl ..."`), home
 * expressions resolved and formatted literals' holes made variables: what a
 * shell call will be handed, as far as the code says it. Bounded: at most 64
 * joins.
 */
export function joinedCode(code: string): string {
  let text = code.length > 65_536 ? code.slice(0, 65_536) : code;
  HOME_EXPRESSION.lastIndex = 0;
  if (HOME_EXPRESSION.test(text)) text = text.replace(HOME_EXPRESSION, "'~'");
  // Formatted literals: f'...', f"...", Ruby "#{...}", and literals filled by `%` or `.format(`.
  text = text.replace(FORMATTED_LITERAL, (_m, f?: string, formatted?: string, ruby?: string) => {
    const literal = f ?? formatted ?? ruby ?? '';
    return literal.replace(INTERPOLATION_HOLE, '$V');
  });
  for (let joins = 0; joins < 64; joins++) {
    CONCATENATION.lastIndex = 0;
    const m = CONCATENATION.exec(text);
    if (m === null) break;
    const left = m[1] ?? '';
    const right = m[2] ?? m[3] ?? '';
    const quote = left[0] ?? "'";
    const rightText = right[0] === "'" || right[0] === '"' ? literalText(right) : '$V';
    text = `${text.slice(0, m.index)}${quote}${literalText(left)}${rightText}${quote}${text.slice(m.index + m[0].length)}`;
  }
  return text;
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
  const v5 = analysis.v5;
  // Version 5: concatenations joined and home expressions resolved before anything is read.
  const read = v5 ? joinedCode(code) : code;
  const lower = read.toLowerCase();
  const literals = literalsOf(read);
  const commands: string[] = [];
  if (v5) quoteLikeLiterals(read, literals, commands);
  // Version 6: commands run by a statement of their own (Tcl's and Expect's exec and spawn, open of a pipe).
  if (analysis.v6 && (lower.indexOf('exec') !== -1 || lower.indexOf('spawn') !== -1 || lower.indexOf('system') !== -1 || lower.indexOf('open') !== -1)) {
    STATEMENT_COMMAND.lastIndex = 0;
    for (let m = STATEMENT_COMMAND.exec(read); m !== null && commands.length < 64; m = STATEMENT_COMMAND.exec(read)) {
      const command = (m[1] ?? m[2] ?? '').replace(/[{}]/g, "'");
      if (looksLikeCommand(command)) commands.push(command);
    }
  }
  for (const command of commands) runShell(command);
  const network = NETWORK.test(lower) || (v5 && NETWORK_V5.test(lower));
  const shell = SHELL_CALLS.test(lower) || (v5 && SHELL_CALLS_V5.test(lower));
  if (v5 && network && (REVERSE_V5.test(lower) || (shell && SOCKET_V5.test(lower)))) findings.add(R.reverseShell);
  if (analysis.v4 && EVALUATES.test(lower) && DOWNLOADS.test(lower)) findings.add(R.remotePipeShell);
  if (OBFUSCATION.test(lower) && (DYNAMIC_EXEC.test(lower) || shell)) findings.add(R.decoded);
  // Version 8: decoded data evaluated without parentheses (perl `eval pack(...)`, ruby `eval Base64.decode64 ...`) or decoded by more names.
  else if (analysis.v8 && (OBFUSCATION.test(lower) || OBFUSCATION_V8.test(lower)) && (DYNAMIC_EXEC.test(lower) || DYNAMIC_EXEC_V8.test(lower) || shell)) findings.add(R.decoded);
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
