import type { Command } from 'commander';
import { UsageError } from '../cli-error.js';

/** The shells `ledger completion` writes a script for. */
export const SHELLS = ['bash', 'zsh', 'fish'] as const;

/** One of {@link SHELLS}. */
export type Shell = (typeof SHELLS)[number];

/** A command or option as completion offers it: its name and a one-line description. */
interface Described {
  readonly name: string;
  readonly description: string;
}

/** An option of a command: every spelling, whether a value follows it, and the values it allows when it says. */
interface CompletionOption {
  readonly short: string | undefined;
  readonly long: string | undefined;
  readonly takesValue: boolean;
  readonly choices: readonly string[];
  readonly description: string;
}

/** One command of the tree, by its path from the program (`[]` for `ledger`, `['grant', 'propose']`). */
export interface CompletionNode {
  readonly path: readonly string[];
  readonly subcommands: readonly Described[];
  readonly options: readonly CompletionOption[];
  /** Values its positional arguments allow (their choices; for `help`, the sibling commands). */
  readonly argumentChoices: readonly string[];
}

/** Names, flags and choices go into shell code unquoted: only these characters. */
const WORD = /^-{0,2}[A-Za-z0-9][A-Za-z0-9_.:=+-]*$/;

function word(text: string): string {
  // A name outside this set would need quoting in three shells; none exists, so refuse rather than emit a broken script.
  if (!WORD.test(text)) throw new UsageError(`completion: cannot complete the name ${JSON.stringify(text)}`);
  return text;
}

/** The first clause of a description, on one line and short enough for a completion menu. */
function brief(description: string): string {
  const line = (description.split(/; | \(|\n/)[0] ?? '').trim();
  return line.length > 72 ? `${line.slice(0, 71)}…` : line;
}

/**
 * Walks the commander tree as `--help` shows it (visible commands and
 * options, the implicit `help` command included), so completion lists
 * exactly what the parser accepts and cannot go stale.
 */
export function completionTree(program: Command): CompletionNode[] {
  const nodes: CompletionNode[] = [];
  /** `helpOf`: the command whose implicit `help [command]` this is (commander's own, not among its commands). */
  const visit = (command: Command, path: readonly string[], helpOf?: Command): void => {
    const help = command.createHelp();
    const visible = help.visibleCommands(command);
    const options = help.visibleOptions(command).map((option) => ({
      short: option.short === undefined ? undefined : word(option.short),
      long: option.long === undefined ? undefined : word(option.long),
      takesValue: option.required || option.optional,
      choices: (option.argChoices ?? []).map(word),
      description: brief(option.description),
    }));
    // The argument of `help [command]` is the name of a sibling command.
    const argumentChoices = helpOf !== undefined ? helpOf.commands.map((c) => word(c.name())) : command.registeredArguments.flatMap((argument) => (argument.argChoices ?? []).map(word));
    nodes.push({ path, subcommands: visible.map((c) => ({ name: word(c.name()), description: brief(c.summary() || c.description()) })), options, argumentChoices });
    for (const sub of visible) visit(sub, [...path, sub.name()], command.commands.includes(sub) ? undefined : command);
  };
  visit(program, []);
  return nodes;
}

const flagsOf = (options: readonly CompletionOption[], which: (o: CompletionOption) => boolean): string[] =>
  options.filter(which).flatMap((o) => [o.short, o.long].filter((f): f is string => f !== undefined));

/** `'it''s'` for zsh, `'it\'s'` for fish: a single-quoted word. */
const zshQuote = (text: string): string => `'${text.replaceAll("'", "'\\''")}'`;
const fishQuote = (text: string): string => `'${text.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;

/**
 * bash: `_ledger_completion_node PATH` sets the words of one command; the
 * completion function walks COMP_WORDS to the deepest command named (the
 * value after an option that takes one is skipped), then offers options
 * after `-`, an option's choices after it, else subcommands and argument
 * choices; with nothing to offer, bash completes file names (`-o default`).
 */
function bashScript(program: string, nodes: readonly CompletionNode[]): string {
  const fn = `_${program}_completion`;
  const cases = nodes.map((node) => {
    const choices = node.options.flatMap((o) => (o.choices.length === 0 ? [] : [o.short, o.long].filter((f): f is string => f !== undefined).map((f) => `${f}=${o.choices.join(',')}`)));
    return [
      `    '${node.path.join(' ')}')`,
      `      ${fn}_subs='${node.subcommands.map((s) => s.name).join(' ')}'`,
      `      ${fn}_opts='${flagsOf(node.options, () => true).join(' ')}'`,
      `      ${fn}_vals='${flagsOf(node.options, (o) => o.takesValue).join(' ')}'`,
      `      ${fn}_choices='${choices.join(' ')}'`,
      `      ${fn}_args='${node.argumentChoices.join(' ')}' ;;`,
    ].join('\n');
  });
  return `# bash completion for ${program}, generated from its command tree: ${program} completion bash
# Load it with: source <(${program} completion bash)
${fn}_node() {
  case "$1" in
${cases.join('\n')}
    *) ${fn}_subs='' ${fn}_opts='' ${fn}_vals='' ${fn}_choices='' ${fn}_args='' ;;
  esac
}

${fn}() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev='' cmdpath='' word i entry
  (( COMP_CWORD > 0 )) && prev="\${COMP_WORDS[COMP_CWORD-1]}"
  COMPREPLY=()
  ${fn}_node ''
  for (( i = 1; i < COMP_CWORD; i++ )); do
    word="\${COMP_WORDS[i]}"
    # After --, the words are another program's (mcp-gateway's server): file names.
    [[ "$word" == -- ]] && return 0
    if [[ " $${fn}_vals " == *" $word "* ]]; then
      (( i++ ))
      continue
    fi
    if [[ " $${fn}_subs " == *" $word "* ]]; then
      cmdpath="\${cmdpath:+$cmdpath }$word"
      ${fn}_node "$cmdpath"
    fi
  done
  if [[ -n "$prev" && " $${fn}_vals " == *" $prev "* ]]; then
    for entry in $${fn}_choices; do
      [[ "\${entry%%=*}" == "$prev" ]] && entry="\${entry#*=}" && COMPREPLY=( $(compgen -W "\${entry//,/ }" -- "$cur") )
    done
    return 0
  fi
  if [[ "$cur" == -* ]]; then
    COMPREPLY=( $(compgen -W "$${fn}_opts" -- "$cur") )
  else
    COMPREPLY=( $(compgen -W "$${fn}_subs $${fn}_args" -- "$cur") )
  fi
  return 0
}

complete -o default -F ${fn} ${program}
`;
}

/**
 * zsh: the same walk over \`words\`, offering commands and options with
 * their descriptions (_describe) and file names where a value or an
 * argument without choices goes. Works sourced (after compinit) or as an
 * autoloaded \`_${'ledger'}\` file on fpath.
 */
function zshScript(program: string, nodes: readonly CompletionNode[]): string {
  const fn = `_${program}`;
  const describe = (name: string, description: string): string => zshQuote(`${name.replaceAll(':', '\\:')}:${description}`);
  const cases = nodes.map((node) => {
    const optionEntries = node.options.flatMap((o) => [o.short, o.long].filter((f): f is string => f !== undefined).map((f) => describe(f, o.description)));
    const choices = node.options.flatMap((o) => (o.choices.length === 0 ? [] : [o.short, o.long].filter((f): f is string => f !== undefined).map((f) => `${f}=${o.choices.join(',')}`)));
    return [
      `    '${node.path.join(' ')}')`,
      `      subs=(${node.subcommands.map((s) => s.name).join(' ')})`,
      `      subdescs=(${node.subcommands.map((s) => describe(s.name, s.description)).join(' ')})`,
      `      optdescs=(${optionEntries.join(' ')})`,
      `      vals=(${flagsOf(node.options, (o) => o.takesValue).join(' ')})`,
      `      choices=(${choices.join(' ')})`,
      `      args=(${node.argumentChoices.join(' ')}) ;;`,
    ].join('\n');
  });
  return `#compdef ${program}
# zsh completion for ${program}, generated from its command tree: ${program} completion zsh
# Load it with: source <(${program} completion zsh)   (after compinit), or save it as _${program} on $fpath
${fn}_node() {
  case "$1" in
${cases.join('\n')}
    *) subs=() subdescs=() optdescs=() vals=() choices=() args=() ;;
  esac
}

${fn}() {
  local -a subs subdescs optdescs vals choices args
  local cmdpath='' word entry prev="\${words[CURRENT-1]}"
  local -i i
  ${fn}_node ''
  for (( i = 2; i < CURRENT; i++ )); do
    word="\${words[i]}"
    if [[ "$word" == -- ]]; then _files; return; fi
    if (( \${vals[(Ie)$word]} )); then
      (( i++ ))
      continue
    fi
    if (( \${subs[(Ie)$word]} )); then
      cmdpath="\${cmdpath:+$cmdpath }$word"
      ${fn}_node "$cmdpath"
    fi
  done
  if (( CURRENT > 2 )) && [[ -n "$prev" ]] && (( \${vals[(Ie)$prev]} )); then
    for entry in $choices; do
      if [[ "\${entry%%=*}" == "$prev" ]]; then compadd -- \${(s:,:)\${entry#*=}}; return; fi
    done
    _files
    return
  fi
  if [[ "\${words[CURRENT]}" == -* ]]; then
    _describe -t options option optdescs
  elif (( \${#subdescs} )); then
    _describe -t commands command subdescs
  elif (( \${#args} )); then
    compadd -a args
  else
    _files
  fi
}

if [[ "\${funcstack[1]}" == ${fn} ]]; then
  ${fn} "$@"
else
  compdef ${fn} ${program}
fi
`;
}

/**
 * fish: \`__${'ledger'}_cmdpath\` walks the command line to the deepest
 * command named; every command, option and choice is one \`complete\`
 * line conditioned on that path.
 */
function fishScript(program: string, nodes: readonly CompletionNode[]): string {
  const fn = `__${program.replaceAll('-', '_')}`;
  const subsCases = nodes.filter((n) => n.subcommands.length > 0).map((n) => `        case '${n.path.join(' ')}'\n            echo ${n.subcommands.map((s) => s.name).join(' ')}`);
  const valsCases = nodes
    .map((n) => ({ n, vals: flagsOf(n.options, (o) => o.takesValue) }))
    .filter(({ vals }) => vals.length > 0)
    .map(({ n, vals }) => `        case '${n.path.join(' ')}'\n            echo ${vals.join(' ')}`);
  const lines: string[] = [];
  for (const node of nodes) {
    const at = `-n "${fn}_at '${node.path.join(' ')}'"`;
    for (const sub of node.subcommands) lines.push(`complete -c ${program} -f ${at} -a ${sub.name} -d ${fishQuote(sub.description)}`);
    if (node.argumentChoices.length > 0) lines.push(`complete -c ${program} -f ${at} -a '${node.argumentChoices.join(' ')}'`);
    for (const option of node.options) {
      const spellings = [option.short === undefined ? '' : ` -s ${option.short.slice(1)}`, option.long === undefined ? '' : ` -l ${option.long.slice(2)}`].join('');
      const value = option.choices.length > 0 ? ` -x -a '${option.choices.join(' ')}'` : option.takesValue ? ' -r -F' : '';
      lines.push(`complete -c ${program}${node.subcommands.length > 0 ? ' -f' : ''} ${at}${spellings}${value} -d ${fishQuote(option.description)}`);
    }
  }
  return `# fish completion for ${program}, generated from its command tree: ${program} completion fish
# Load it with: ${program} completion fish | source   (or save it as ~/.config/fish/completions/${program}.fish)
function ${fn}_subcommands
    switch "$argv[1]"
${subsCases.join('\n')}
    end
end

function ${fn}_values
    switch "$argv[1]"
${valsCases.join('\n')}
    end
end

# The deepest command named on the command line; '--' once past a '--' (another program's words follow).
function ${fn}_cmdpath
    set -l tokens (commandline -opc)
    set -e tokens[1]
    set -l cmdpath ''
    set -l skip 0
    for token in $tokens
        if test $skip -eq 1
            set skip 0
            continue
        end
        if test "$token" = '--'
            echo -- '--'
            return
        end
        if contains -- $token (string split ' ' -- (${fn}_values "$cmdpath"))
            set skip 1
        else if contains -- $token (string split ' ' -- (${fn}_subcommands "$cmdpath"))
            set cmdpath (string trim -- "$cmdpath $token")
        end
    end
    echo -- $cmdpath
end

function ${fn}_at
    test (${fn}_cmdpath) = "$argv[1]"
end

complete -c ${program} -e
${lines.join('\n')}
`;
}

/**
 * `ledger completion bash|zsh|fish`: prints a completion script for that
 * shell, generated from the command tree of \`program\` (every command,
 * subcommand and option name, and the choices of those that have them).
 */
export function completionCommand(shell: string, program: Command): number {
  if (!(SHELLS as readonly string[]).includes(shell)) throw new UsageError(`completion: unknown shell ${shell} (${SHELLS.join(', ')})`);
  const nodes = completionTree(program);
  const name = word(program.name());
  const script = shell === 'bash' ? bashScript(name, nodes) : shell === 'zsh' ? zshScript(name, nodes) : fishScript(name, nodes);
  process.stdout.write(script);
  return 0;
}
