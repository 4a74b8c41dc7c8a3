import type { Word } from './shell-syntax.js';

/** Options of one command, in any spelling: `-rf`, `-r -f`, `-fr`, `--recursive --force`, `--opt=value`, `--opt value`. */
export interface Options {
  /** Short letters seen (case kept: `-R` and `-r` differ for some programs). */
  readonly short: ReadonlySet<string>;
  /** Long names seen, without dashes. */
  readonly long: ReadonlySet<string>;
  /** Values of options that take one, by letter or long name (last wins; all kept in `allValues`). */
  readonly values: ReadonlyMap<string, Word>;
  readonly allValues: readonly (readonly [string, Word])[];
  /** Arguments that are not options, in order. */
  readonly operands: readonly Word[];
}

/**
 * Reads options the way getopt_long does: short letters cluster, a letter in
 * `withValue` takes the rest of its cluster or the next word, a long name in
 * `withValue` takes `=value` or the next word, `--` ends options. With
 * `stopAtOperand` the first operand ends options (commands that take another
 * command: sudo, env, timeout, xargs).
 */
export function readOptions(args: readonly Word[], withValue: ReadonlySet<string> = NONE, stopAtOperand = false): Options {
  const short = new Set<string>();
  const long = new Set<string>();
  const values = new Map<string, Word>();
  const allValues: (readonly [string, Word])[] = [];
  const operands: Word[] = [];
  let i = 0;
  const setValue = (name: string, value: Word): void => {
    values.set(name, value);
    allValues.push([name, value]);
  };
  for (; i < args.length; i++) {
    const word = args[i] as Word;
    const text = word.text;
    if (text === '--') {
      i += 1;
      break;
    }
    if (text.startsWith('--') && text.length > 2) {
      const eq = text.indexOf('=');
      const name = (eq === -1 ? text.slice(2) : text.slice(2, eq)).toLowerCase();
      long.add(name);
      if (eq !== -1) setValue(name, { ...word, text: text.slice(eq + 1) });
      else if (withValue.has(name) && i + 1 < args.length) setValue(name, args[++i] as Word);
      continue;
    }
    if (text.startsWith('-') && text.length > 1 && !/^-\d+$/.test(text)) {
      for (let j = 1; j < text.length; j++) {
        const letter = text[j] as string;
        short.add(letter);
        if (withValue.has(letter)) {
          if (j + 1 < text.length) setValue(letter, { ...word, text: text.slice(j + 1) });
          else if (i + 1 < args.length) setValue(letter, args[++i] as Word);
          break;
        }
      }
      continue;
    }
    operands.push(word);
    if (stopAtOperand) {
      i += 1;
      break;
    }
  }
  for (; i < args.length; i++) operands.push(args[i] as Word);
  return { short, long, values, allValues, operands };
}

const NONE: ReadonlySet<string> = new Set();

/** True when the short letters hold any of `letters` or the long names any of `names`. */
export function hasOption(options: Options, letters: string, ...names: string[]): boolean {
  for (const letter of letters) if (options.short.has(letter)) return true;
  for (const name of names) if (options.long.has(name)) return true;
  return false;
}

/** Basename of a program word, lowercased, without a version suffix on interpreters (python3.11 -> python). */
export function programName(text: string): string {
  const slash = text.lastIndexOf('/');
  let name = (slash === -1 ? text : text.slice(slash + 1)).toLowerCase();
  if (name.endsWith('.exe')) name = name.slice(0, -4);
  const versioned = /^(python|pip|perl|ruby|node|php|pypy|lua|bash|zsh|gem|pydoc|idle|easy_install)[0-9.]+$/.exec(name);
  if (versioned !== null) name = versioned[1] as string;
  return name;
}
