import sh, { type ShNode } from 'mvdan-sh';

/**
 * Shell text read by a real shell parser: mvdan/sh's `syntax` package
 * (`mvdan-sh` on npm, its author's JavaScript build). It parses bash, POSIX sh
 * and mksh synchronously, so the gate's synchronous decide() calls it directly
 * (no initialisation step: the parser is built once, at module load).
 *
 * The script is broken into simple commands, each with its argv (words with
 * quotes removed and escapes decoded), its assignments, its redirections
 * (here-documents with their bodies) and the commands whose output is its
 * input (pipelines). Commands inside `$(...)`, backquotes and `<(...)` are
 * simple commands too. What no reading can settle is marked, never guessed:
 * a word holding a variable or a substitution is `dynamic`.
 */

const { syntax } = sh;
const parser = syntax.NewParser(syntax.Variant(syntax.LangBash));

/** Redirection operators (mvdan/sh tokens). */
const Op = {
  rdrOut: 54, appOut: 55, rdrIn: 56, rdrInOut: 57, dplIn: 58, dplOut: 59, clbOut: 60, hdoc: 61, dashHdoc: 62, wordHdoc: 63, rdrAll: 64, appAll: 65,
  and: 10, or: 11, pipe: 12, pipeAll: 13,
} as const;

/** One word of a command, after quote removal. */
export interface Word {
  readonly text: string;
  /** Holds a variable (other than HOME, TMPDIR, PWD, USER, LEDGER_HOME), a substitution or an arithmetic expansion. */
  readonly dynamic: boolean;
  /** A substitution in it runs a network fetch. */
  readonly fetched: boolean;
  /** A substitution in it decodes a payload (base64 -d, xxd -r, ...). */
  readonly decoded: boolean;
  /** Holds a process substitution. */
  readonly procSubst: boolean;
  /** A variable in it was assigned a literal earlier in the script (its text has the value). */
  readonly indirect: boolean;
  /** The argv of the commands inside its substitutions, joined ('' when none). */
  readonly inner: string;
}

/** How a redirection uses its target. */
export type RedirectKind = 'write' | 'read' | 'dup' | 'heredoc' | 'herestring';

export interface Redirect {
  readonly kind: RedirectKind;
  readonly target: Word;
  /** Body of a here-document, or the word of a here-string. */
  readonly body: string | null;
}

export interface Assignment {
  readonly name: string;
  readonly value: Word | null;
}

export interface SimpleCommand {
  readonly argv: readonly Word[];
  readonly assigns: readonly Assignment[];
  readonly redirects: readonly Redirect[];
  /** Commands whose output this command reads (the left side of a pipe), or null. */
  readonly pipeFrom: readonly SimpleCommand[] | null;
  /** `export`, `declare`, `local`, `readonly`, `typeset` when the command is one of them. */
  readonly declaration: string | null;
}

export interface ParsedScript {
  readonly commands: readonly SimpleCommand[];
  /** The parser rejected the text. */
  readonly failed: boolean;
  /** A function calls itself through a pipe or in the background. */
  readonly forkBomb: boolean;
  /** Names of functions defined in the script. */
  readonly functions: readonly string[];
}

const PLAIN_VARIABLES = new Set(['HOME', 'TMPDIR', 'PWD', 'USER', 'LEDGER_HOME', 'LOGNAME']);
const FETCH_PROGRAMS = new Set(['iwr', 'irm', 'invoke-webrequest', 'invoke-restmethod', 'curl', 'wget', 'fetch', 'aria2c', 'http', 'https', 'xh', 'httpie', 'lwp-request', 'lynx', 'links', 'elinks', 'nc', 'ncat', 'netcat', 'socat', 'telnet', 'openssl', 'tftp', 'ftp', 'dig', 'nslookup', 'host']);

function basename(text: string): string {
  const slash = text.lastIndexOf('/');
  return (slash === -1 ? text : text.slice(slash + 1)).toLowerCase();
}

/** True when argv runs a network fetch (read by the words that hold its output). */
export function isFetchCommand(argv: readonly Word[]): boolean {
  const first = argv[0];
  if (first === undefined) return false;
  let name = basename(first.text);
  let i = 0;
  while ((name === 'sudo' || name === 'env' || name === 'command' || name === 'exec' || name === 'nohup' || name === 'timeout') && i + 1 < argv.length) {
    i += 1;
    while (i < argv.length && ((argv[i] as Word).text.startsWith('-') || (argv[i] as Word).text.includes('=') || /^\d+[smhd]?$/.test((argv[i] as Word).text))) i += 1;
    if (i >= argv.length) return false;
    name = basename((argv[i] as Word).text);
  }
  return FETCH_PROGRAMS.has(name) || name.startsWith('invoke-webrequest');
}

/** True when argv decodes a payload: base64 -d, xxd -r, openssl enc -d / base64 -d, uudecode, gunzip, zcat, rev. */
export function isDecoderCommand(argv: readonly Word[]): boolean {
  const first = argv[0];
  if (first === undefined) return false;
  const name = basename(first.text);
  const has = (...flags: string[]): boolean => argv.some((w) => flags.includes(w.text) || (w.text.startsWith('-') && !w.text.startsWith('--') && flags.some((f) => f.length === 2 && f.startsWith('-') && w.text.slice(1).includes(f.slice(1)))));
  switch (name) {
    case 'base64': case 'base32': case 'basenc': case 'gbase64':
      return has('-d', '-D', '--decode');
    case 'xxd':
      return has('-r', '-revert');
    case 'openssl':
      return has('-d', '-base64', '-a') && argv.some((w) => w.text === 'enc' || w.text === 'base64' || w.text.startsWith('-aes') || w.text === '-d');
    case 'uudecode': case 'gunzip': case 'zcat': case 'bunzip2': case 'bzcat': case 'xzcat': case 'unxz': case 'rev': case 'zstdcat': case 'lzcat':
      return true;
    case 'gzip': case 'bzip2': case 'xz': case 'zstd':
      return has('-d', '--decompress');
    case 'tr':
      return argv.length >= 3 && /a-z/i.test(argv[1]?.text ?? '') && /n-z|[n-z]a-m/i.test(argv[2]?.text ?? '');
    case 'printf':
      return argv.slice(1).some((w) => /\\(?:x[0-9a-f]{2}|[0-7]{3})/i.test(w.text));
    case 'echo':
      return argv.some((w) => w.text === '-e') && argv.slice(1).some((w) => /\\(?:x[0-9a-f]{2}|[0-7]{3})/i.test(w.text));
    default:
      return false;
  }
}

/** Decodes the escapes of an ANSI-C quoted string ($'...'). */
function ansiC(text: string): string {
  return text.replace(/\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|[0-7]{1,3}|.)/g, (_, esc: string) => {
    const c = esc[0];
    if (c === 'x' || c === 'u') return String.fromCharCode(parseInt(esc.slice(1), 16));
    if (c !== undefined && c >= '0' && c <= '7') return String.fromCharCode(parseInt(esc, 8));
    switch (c) {
      case 'n': return '\n';
      case 't': return '\t';
      case 'r': return '\r';
      case 'e': case 'E': return '\u001b';
      case 'a': return '\u0007';
      case 'b': return '\b';
      case 'f': return '\f';
      case 'v': return '\v';
      default: return esc;
    }
  });
}

/** Walks one parse; an instance per parse (scripts nest through `sh -c` in the analysis, not here). */
class ScriptWalker {
  readonly commands: SimpleCommand[] = [];
  readonly functions: string[] = [];
  readonly literals = new Map<string, string>();
  forkBomb = false;
  #currentFunction: string | null = null;
  #functionRecurses = false;
  #functionForks = false;

  word(node: ShNode | null | undefined): Word {
    if (node === null || node === undefined) return EMPTY_WORD;
    const state = { text: '', dynamic: false, fetched: false, decoded: false, procSubst: false, indirect: false, inner: '' };
    this.#parts(node.Parts as ShNode[], state, false);
    return state;
  }

  #parts(parts: readonly ShNode[], out: { text: string; dynamic: boolean; fetched: boolean; decoded: boolean; procSubst: boolean; indirect: boolean; inner: string }, quoted: boolean): void {
    for (const part of parts) {
      switch (syntax.NodeType(part)) {
        case 'Lit': {
          const value = part.Value as string;
          out.text += quoted ? value.replace(/\\([$`"\\\n])/g, '$1') : value.replace(/\\(.)/gs, '$1');
          break;
        }
        case 'SglQuoted':
          out.text += part.Dollar === true ? ansiC(part.Value as string) : (part.Value as string);
          break;
        case 'DblQuoted':
          this.#parts(part.Parts as ShNode[], out, true);
          break;
        case 'ParamExp': {
          const name = (part.Param?.Value as string | undefined) ?? '';
          const plain = PLAIN_VARIABLES.has(name) && part.Exp == null && part.Repl == null && part.Slice == null && part.Index == null && part.Length !== true && part.Excl !== true;
          const known = this.literals.get(name);
          if (known !== undefined && !plain) {
            out.text += known;
            out.dynamic = true;
            out.indirect = true;
          } else {
            out.text += `$${name}`;
            if (!plain) out.dynamic = true;
          }
          break;
        }
        case 'CmdSubst': {
          const inner = this.#substitution(part.Stmts as ShNode[]);
          out.inner += inner.text;
          out.text += '$(...)';
          out.dynamic = true;
          if (inner.fetched) out.fetched = true;
          if (inner.decoded) out.decoded = true;
          break;
        }
        case 'ProcSubst': {
          const inner = this.#substitution(part.Stmts as ShNode[]);
          out.inner += inner.text;
          out.text += '<(...)';
          out.dynamic = true;
          out.procSubst = true;
          if (inner.fetched) out.fetched = true;
          if (inner.decoded) out.decoded = true;
          break;
        }
        case 'ArithmExp':
          out.text += '$((...))';
          out.dynamic = true;
          break;
        case 'ExtGlob':
          out.text += `${String(part.Op ?? '')}(${String(part.Pattern?.Value ?? '')})`;
          break;
        default:
          out.text += '?';
          out.dynamic = true;
      }
    }
  }

  #substitution(stmts: readonly ShNode[]): { fetched: boolean; decoded: boolean; text: string } {
    const start = this.commands.length;
    this.stmts(stmts, null);
    let fetched = false;
    let decoded = false;
    let text = '';
    for (let i = start; i < this.commands.length; i++) {
      const argv = (this.commands[i] as SimpleCommand).argv;
      if (isFetchCommand(argv)) fetched = true;
      if (isDecoderCommand(argv)) decoded = true;
      if (text.length < 1024) text += ` ${argv.map((w) => w.text).join(' ')}`;
    }
    return { fetched, decoded, text };
  }

  stmts(stmts: readonly ShNode[] | null | undefined, pipeIn: readonly SimpleCommand[] | null): void {
    if (stmts === null || stmts === undefined) return;
    let first = true;
    for (const stmt of stmts) {
      this.stmt(stmt, first ? pipeIn : null);
      first = false;
    }
  }

  stmt(stmt: ShNode, pipeIn: readonly SimpleCommand[] | null): void {
    if (stmt.Background === true && this.#currentFunction !== null) this.#functionForks = true;
    const redirects = (stmt.Redirs as ShNode[] | null)?.map((r) => this.#redirect(r)) ?? [];
    const cmd = stmt.Cmd as ShNode | null;
    if (cmd === null || cmd === undefined) {
      if (redirects.length > 0) this.commands.push({ argv: [], assigns: [], redirects, pipeFrom: pipeIn, declaration: null });
      return;
    }
    const type = syntax.NodeType(cmd);
    if (type === 'CallExpr') {
      const assigns = (cmd.Assigns as ShNode[]).map((a) => this.#assign(a));
      const argv = (cmd.Args as ShNode[]).map((w) => this.word(w));
      if (argv.length === 0) for (const a of assigns) if (a.value !== null && !a.value.dynamic) this.literals.set(a.name, a.value.text);
      if (this.#currentFunction !== null && argv[0]?.text === this.#currentFunction) this.#functionRecurses = true;
      this.commands.push({ argv, assigns, redirects, pipeFrom: pipeIn, declaration: null });
      return;
    }
    // A compound command's redirections apply to all of it: recorded on an empty command.
    if (redirects.length > 0) this.commands.push({ argv: [], assigns: [], redirects, pipeFrom: null, declaration: null });
    switch (type) {
      case 'BinaryCmd': {
        const op = cmd.Op as number;
        if (op === Op.pipe || op === Op.pipeAll) {
          if (this.#currentFunction !== null) this.#functionForks = true;
          const start = this.commands.length;
          this.stmt(cmd.X as ShNode, pipeIn);
          const left = this.commands.slice(start);
          this.stmt(cmd.Y as ShNode, left);
        } else {
          this.stmt(cmd.X as ShNode, pipeIn);
          this.stmt(cmd.Y as ShNode, null);
        }
        return;
      }
      case 'Subshell':
      case 'Block':
        this.stmts(cmd.Stmts as ShNode[], pipeIn);
        return;
      case 'IfClause': {
        let clause: ShNode | null = cmd;
        while (clause !== null && clause !== undefined) {
          this.stmts(clause.Cond as ShNode[], pipeIn);
          this.stmts(clause.Then as ShNode[], null);
          clause = clause.Else as ShNode | null;
        }
        return;
      }
      case 'WhileClause':
        this.stmts(cmd.Cond as ShNode[], pipeIn);
        this.stmts(cmd.Do as ShNode[], null);
        return;
      case 'ForClause': {
        const loop = cmd.Loop as ShNode | null;
        if (loop !== null && loop !== undefined && syntax.NodeType(loop) === 'WordIter') for (const item of (loop.Items as ShNode[] | null) ?? []) this.word(item);
        this.stmts(cmd.Do as ShNode[], null);
        return;
      }
      case 'CaseClause':
        this.word(cmd.Word as ShNode);
        for (const item of (cmd.Items as ShNode[] | null) ?? []) this.stmts(item.Stmts as ShNode[], null);
        return;
      case 'FuncDecl': {
        const name = (cmd.Name?.Value as string | undefined) ?? '';
        this.functions.push(name);
        const outer = [this.#currentFunction, this.#functionRecurses, this.#functionForks] as const;
        this.#currentFunction = name;
        this.#functionRecurses = false;
        this.#functionForks = false;
        this.stmt(cmd.Body as ShNode, null);
        if (this.#functionRecurses && this.#functionForks) this.forkBomb = true;
        [this.#currentFunction, this.#functionRecurses, this.#functionForks] = outer;
        return;
      }
      case 'DeclClause': {
        const variant = (cmd.Variant?.Value as string | undefined) ?? 'declare';
        const assigns: Assignment[] = [];
        const argv: Word[] = [plainWord(variant)];
        for (const arg of (cmd.Args as ShNode[] | null) ?? []) {
          if (arg.Naked === true && (arg.Name === null || arg.Name === undefined)) argv.push(this.word(arg.Value as ShNode));
          else assigns.push(this.#assign(arg));
        }
        this.commands.push({ argv, assigns, redirects: [], pipeFrom: pipeIn, declaration: variant });
        return;
      }
      case 'TimeClause':
      case 'CoprocClause':
        if (cmd.Stmt !== null && cmd.Stmt !== undefined) this.stmt(cmd.Stmt as ShNode, pipeIn);
        return;
      default:
        // Tests, arithmetic, let: only their substitutions run commands.
        this.#substitutionsIn(cmd);
    }
  }

  #substitutionsIn(node: ShNode): void {
    const found: ShNode[] = [];
    syntax.Walk(node, (n: ShNode | null) => {
      if (n === null) return true;
      const t = syntax.NodeType(n);
      if (t === 'CmdSubst' || t === 'ProcSubst') {
        found.push(n);
        return false;
      }
      return true;
    });
    for (const n of found) this.#substitution(n.Stmts as ShNode[]);
  }

  #assign(node: ShNode): Assignment {
    const name = (node.Name?.Value as string | undefined) ?? '';
    const value = node.Value === null || node.Value === undefined ? (node.Array !== null && node.Array !== undefined ? DYNAMIC_WORD : null) : this.word(node.Value as ShNode);
    return { name, value };
  }

  #redirect(node: ShNode): Redirect {
    const op = node.Op as number;
    const target = this.word(node.Word as ShNode);
    switch (op) {
      case Op.rdrOut: case Op.appOut: case Op.clbOut: case Op.rdrAll: case Op.appAll:
        return { kind: 'write', target, body: null };
      case Op.rdrIn:
        return { kind: 'read', target, body: null };
      case Op.rdrInOut:
        return { kind: 'write', target, body: null };
      case Op.hdoc: case Op.dashHdoc:
        return { kind: 'heredoc', target, body: this.word(node.Hdoc as ShNode).text };
      case Op.wordHdoc:
        return { kind: 'herestring', target, body: target.text };
      default:
        return { kind: 'dup', target, body: null };
    }
  }
}

const EMPTY_WORD: Word = Object.freeze({ text: '', dynamic: false, fetched: false, decoded: false, procSubst: false, indirect: false, inner: '' });
const DYNAMIC_WORD: Word = Object.freeze({ text: '$(...)', dynamic: true, fetched: false, decoded: false, procSubst: false, indirect: false, inner: '' });

/** A literal word (for argv built by the analysis, e.g. from `ssh host cmd`). */
export function plainWord(text: string): Word {
  return { text, dynamic: false, fetched: false, decoded: false, procSubst: false, indirect: false, inner: '' };
}

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;
/** Words that start compound commands or change how the rest is read. */
const RESERVED = new Set(['if', 'then', 'else', 'elif', 'fi', 'for', 'in', 'while', 'until', 'do', 'done', 'case', 'esac', 'function', 'select', 'time', 'coproc', '{', '}', '!', '[[', ']]']);
/** Characters of unquoted words in the simple reading. */
const WORD_CHAR = /[A-Za-z0-9_./:=@%+,~*?-]/;

interface RawWord {
  text: string;
  /** The word up to its first quote (an assignment's NAME= must be unquoted). */
  unquotedPrefix: string;
  quoted: boolean;
}

/**
 * Commands of a common, simple shape read without the parser: words of plain
 * characters, single quotes and double quotes without expansions, joined by
 * `|`, `&&`, `||` and `;`, with `>`, `>>`, `<`, `&>`, `N>` and `N>&M`
 * redirections. For such text the parser's answer is fixed (words with quotes
 * removed, pipelines reading from their left side), so reading it directly
 * gives the same commands at a fraction of the cost; a property test compares
 * the two. Anything else (expansions, globs in brackets, here-documents,
 * compound commands, background jobs, comments): null, and the parser reads it.
 */
function plainCommand(text: string): ParsedScript | null {
  if (text.length > 4096) return null;
  const commands: SimpleCommand[] = [];
  let pipeline: SimpleCommand[] = [];
  let words: RawWord[] = [];
  let redirects: Redirect[] = [];
  let expectCommand = false;
  let i = 0;
  const n = text.length;
  const finish = (): boolean => {
    if (words.length === 0 && redirects.length === 0) return false;
    const assigns: Assignment[] = [];
    let k = 0;
    while (k < words.length && !((words[k] as RawWord).unquotedPrefix === '' && (words[k] as RawWord).quoted) && ASSIGNMENT.test((words[k] as RawWord).unquotedPrefix)) {
      const w = words[k++] as RawWord;
      const eq = w.text.indexOf('=');
      assigns.push({ name: w.text.slice(0, eq), value: eq + 1 === w.text.length && !w.quoted ? null : plainWord(w.text.slice(eq + 1)) });
    }
    const argv = words.slice(k);
    if (argv.length === 0) return false;
    const first = argv[0] as RawWord;
    if (!first.quoted && (RESERVED.has(first.text) || /^[A-Za-z_][A-Za-z0-9_]*\+=/.test(first.text) || /^(?:export|declare|local|readonly|typeset|nameref)$/.test(first.text))) return false;
    const command: SimpleCommand = { argv: argv.map((w) => plainWord(w.text)), assigns, redirects, pipeFrom: pipeline.length === 0 ? null : pipeline.slice(), declaration: null };
    commands.push(command);
    pipeline.push(command);
    words = [];
    redirects = [];
    return true;
  };
  const readWord = (): RawWord | null => {
    let out = '';
    let prefix = '';
    let quoted = false;
    const begin = i;
    while (i < n) {
      const c = text[i] as string;
      if (c === "'") {
        const close = text.indexOf("'", i + 1);
        if (close === -1) return null;
        out += text.slice(i + 1, close);
        quoted = true;
        i = close + 1;
      } else if (c === '"') {
        let j = i + 1;
        while (j < n && text[j] !== '"') {
          const d = text[j] as string;
          if (d === '$' || d === '`' || d === '\\') return null;
          j++;
        }
        if (j >= n) return null;
        out += text.slice(i + 1, j);
        quoted = true;
        i = j + 1;
      } else if (WORD_CHAR.test(c)) {
        out += c;
        if (!quoted) prefix += c;
        i++;
      } else break;
    }
    if (i === begin) return null;
    return { text: out, unquotedPrefix: prefix, quoted };
  };
  while (i < n) {
    const c = text[i] as string;
    if (c === ' ' || c === '\t') {
      i++;
      continue;
    }
    if (c === '|' || c === '&' || c === ';') {
      const two = text.slice(i, i + 2);
      if (two === '&&' || two === '||') {
        if (!finish()) return null;
        pipeline = [];
        expectCommand = true;
        i += 2;
      } else if (c === '|' && two !== '|&') {
        if (!finish()) return null;
        expectCommand = true;
        i += 1;
      } else if (c === ';' && two !== ';;' && two !== ';&') {
        if (!finish()) return null;
        pipeline = [];
        expectCommand = false;
        i += 1;
      } else if (two === '&>') {
        i += 2;
        const append = text[i] === '>';
        if (append) i++;
        while (text[i] === ' ' || text[i] === '\t') i++;
        const target = readWord();
        if (target === null || (i < n && (text[i] === '<' || text[i] === '>'))) return null;
        redirects.push({ kind: 'write', target: plainWord(target.text), body: null });
      } else return null;
      continue;
    }
    // Redirections: [N]> [N]>> [N]< [N]>&M [N]<&M.
    const fd = /^([0-9]?)(>>|>&|<&|>|<)/.exec(text.slice(i, i + 3));
    if (fd !== null && (fd[1] === '' || words.length >= 0)) {
      const op = fd[2] as string;
      if (text[i + (fd[0] as string).length] === '|' || text[i + (fd[0] as string).length] === '>' || text[i + (fd[0] as string).length] === '(' || (op === '<' && text[i + 1] === '<')) return null;
      i += (fd[0] as string).length;
      while (text[i] === ' ' || text[i] === '\t') i++;
      const target = readWord();
      if (target === null) return null;
      // A target running into another redirection (`<1>a`) may read as a file descriptor: the parser decides.
      if (i < n && (text[i] === '<' || text[i] === '>')) return null;
      const kind: RedirectKind = op === '>' || op === '>>' ? 'write' : op === '<' ? 'read' : 'dup';
      redirects.push({ kind, target: plainWord(target.text), body: null });
      continue;
    }
    const w = readWord();
    if (w === null) return null;
    // A word that runs into a redirection (`a2>f` is the word a2, then >f) or any other character the simple reading does not take.
    if (i < n && !/[ \t|&;<>]/.test(text[i] as string)) return null;
    // A word running into < or > (`12>f`, `a''1<1`) may end in a file descriptor: the parser decides.
    if (i < n && (text[i] === '<' || text[i] === '>')) return null;
    words.push(w);
    expectCommand = false;
  }
  if (expectCommand) return null;
  if (words.length > 0 || redirects.length > 0) {
    if (!finish()) return null;
  }
  return { commands, failed: false, forkBomb: false, functions: [] };
}

const FAILED: ParsedScript = Object.freeze({ commands: [], failed: true, forkBomb: false, functions: [] });

/**
 * Parses shell text into simple commands. Never throws: text the parser
 * rejects gives `failed: true` (the caller fails closed on it).
 */
export function parseShell(text: string): ParsedScript {
  return plainCommand(text) ?? parseShellFully(text);
}

/** {@link parseShell} always through the parser (tests compare the two readings). */
export function parseShellFully(text: string): ParsedScript {
  let file: ShNode;
  try {
    file = parser.Parse(text, '');
  } catch {
    return FAILED;
  }
  const walker = new ScriptWalker();
  try {
    walker.stmts(file.Stmts as ShNode[], null);
  } catch {
    return FAILED;
  }
  return { commands: walker.commands, failed: false, forkBomb: walker.forkBomb, functions: walker.functions };
}
