import { PathClass, pathFacts } from './path-model.js';

/**
 * Rules version 7: Python a code tool runs that only computes and reads
 * project files (`import json; print(json.load(open('package.json'))['version'])`).
 * Such code is read as inline code is (a read of what it names), not as a
 * shell line it is not. Strict on purpose: anything outside the small set
 * below keeps the reading of version 6 (a human confirms). Untrusted text:
 * the patterns are linear and the text is cut at 16 KiB.
 */

/** Modules whose import neither runs programs, reaches the network, writes files nor loads native code. */
const SAFE_MODULES: ReadonlySet<string> = new Set(['json', 'sys', 'math', 're', 'datetime', 'collections', 'itertools', 'functools', 'pathlib', 'csv', 'textwrap', 'statistics', 'string', 'decimal', 'fractions', 'typing', 'pprint', 'os.path']);

/** Names and calls that run, load, reach, write or reflect (any one keeps the code held). */
const UNSAFE = /\b(?:eval|exec|compile|execfile|__import__|getattr|setattr|delattr|globals|locals|vars|breakpoint|input|memoryview|importlib|builtins|subprocess|socket|urllib|requests|http|httpx|aiohttp|ctypes|cffi|shutil|pickle|marshal|shelve|tempfile|glob|signal|threading|multiprocessing|asyncio|platform|pty|fcntl|mmap|resource|webbrowser|smtplib|ftplib|telnetlib|paramiko|zipfile|tarfile|sqlite3|codecs|base64|zlib|lzma|bz2|gzip|binascii|environ|getenv|putenv|system|popen|spawn\w*|fork|kill|chmod|chown|unlink|rmdir|mkdir|makedirs|rename|replace|remove|removedirs|symlink\w*|hardlink\w*|link_to|touch|write\w*|writelines|truncate|expanduser|expandvars|home|cwd|resolve|iterdir|rglob|walk|scandir|listdir|modules|setrecursionlimit|settrace|setprofile|stdin|exit|quit)\b|__\w+__|\bos\s*\.\s*(?!path\b)\w|\bsys\s*\.\s*(?!argv\b|version\b|maxsize\b|float_info\b|stdout\b|stderr\b)\w|\\\s*$/m;
/** One import statement: `import a, b.c as d` or `from a.b import c`. */
const IMPORT = /^\s*(?:import\s+([\w.]+(?:\s+as\s+\w+)?(?:\s*,\s*[\w.]+(?:\s+as\s+\w+)?)*)|from\s+([\w.]+)\s+import\s+[\w\s,()*]+)\s*(?:#.*)?$/;
/** String literals (single line; prefixes r, b, u, f allowed, then checked). */
const LITERAL = /([rbuf]{0,2})('(?:[^'\\\n]|\\.){0,4096}'|"(?:[^"\\\n]|\\.){0,4096}")/gi;
/** `open(` with a mode that writes (w, a, x, +) as its second argument or a `mode=`. */
const OPEN_WRITES = /\bopen\s*\([^)]{0,512}?(?:,\s*|mode\s*=\s*)[rbuf]{0,2}['"][^'"]{0,8}[wax+]/i;

/** True when Python code only imports from the safe set, calls nothing that runs, writes or reflects, and names only paths inside the project. */
export function isPlainReadingPython(code: string): boolean {
  if (code.length > 16_384 || code.indexOf('"""') !== -1 || code.indexOf("'''") !== -1) return false;
  if (UNSAFE.test(code) || OPEN_WRITES.test(code)) return false;
  const lines = code.split('\n', 512);
  for (const line of lines) {
    const trimmed = line.trim();
    if (!/^(?:import|from)\s/.test(trimmed)) continue;
    const m = IMPORT.exec(trimmed);
    if (m === null) return false;
    const modules = m[1] !== undefined ? m[1].split(',').map((part) => part.trim().split(/\s+/)[0] ?? '') : [m[2] ?? ''];
    for (const module of modules) if (!SAFE_MODULES.has(module)) return false;
  }
  LITERAL.lastIndex = 0;
  let count = 0;
  for (let m = LITERAL.exec(code); m !== null; m = LITERAL.exec(code)) {
    if (++count > 256) return false;
    // A formatted literal computes its text: its holes are code too, read above; its text is still a path.
    const body = (m[2] ?? '').slice(1, -1);
    if (body.indexOf('{') !== -1 && /f/i.test(m[1] ?? '')) return false;
    if (!insideProject(body)) return false;
  }
  return true;
}

/** True when a literal is not a path outside the project nor a sensitive one (a URL, a home or absolute path, `..`, credentials). */
function insideProject(text: string): boolean {
  if (text.indexOf('://') !== -1 || text.startsWith('/') || text.startsWith('~') || text.startsWith('\\') || /^[a-z]:[\\/]/i.test(text) || text.indexOf('$') !== -1) return false;
  if (/(?:^|[\\/])\.\.(?:[\\/]|$)/.test(text)) return false;
  if (!/[\\/.]/.test(text) || /\s/.test(text)) return true;
  return (pathFacts(text).classes & (PathClass.credential | PathClass.ssh | PathClass.ledger | PathClass.history | PathClass.gitHooks)) === 0;
}
