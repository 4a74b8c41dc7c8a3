import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from './fixtures.js';

/**
 * `ledger completion bash|zsh|fish` is generated from the commander tree:
 * every command, subcommand and option `--help` shows is in it, and the
 * scripts complete for real in the shells (zsh and fish where installed).
 */

const bin = join(repoRoot, 'services', 'ledger', 'bin', 'ledger.js');
const ledger = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', timeout: 60_000 });
const dir = mkdtempSync(join(tmpdir(), 'ledger-completion-'));

function script(shell: string): string {
  const run = ledger('completion', shell);
  assert.equal(run.status, 0, run.stderr);
  const file = join(dir, `ledger.${shell}`);
  writeFileSync(file, run.stdout);
  return file;
}

const installed = (shell: string): boolean => spawnSync(shell, ['-c', 'true']).status === 0;

/** The commands and options `--help` lists for one command path: what completion must offer there. */
function helpOf(path: readonly string[]): { commands: string[]; options: string[] } {
  const run = ledger(...path, '--help');
  assert.equal(run.status, 0, `${path.join(' ')} --help: ${run.stderr}`);
  const commands: string[] = [];
  const options: string[] = [];
  let section = '';
  for (const line of run.stdout.split('\n')) {
    if (/^\S.*:$/.test(line)) section = line;
    const entry = /^ {2}(\S+)/.exec(line)?.[1];
    if (entry === undefined) continue;
    if (section === 'Commands:') commands.push(entry);
    if (section === 'Options:') options.push(...[...line.matchAll(/(?:^|[ ,])(--?[A-Za-z][\w-]*)/g)].map((m) => m[1] as string).slice(0, 2).filter((f) => /^-\w$|^--/.test(f)));
  }
  return { commands, options };
}

/** Runs the bash completion function for a command line whose last word is being completed. */
function bashComplete(file: string, words: readonly string[]): string[] {
  const quoted = words.map((w) => `'${w}'`).join(' ');
  const run = spawnSync('bash', ['--norc', '-c', `source '${file}'; COMP_WORDS=(${quoted}); COMP_CWORD=${words.length - 1}; _ledger_completion; printf '%s\\n' "\${COMPREPLY[@]}"`], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  return run.stdout.split('\n').filter(Boolean).sort();
}

test('bash: a top-level prefix, a subcommand, an option, an option value skipped, argument choices, and after --', () => {
  const file = script('bash');
  assert.match(spawnSync('bash', ['--norc', '-c', `source '${file}'; complete -p ledger`], { encoding: 'utf8' }).stdout, /complete -o default -F _ledger_completion ledger/);
  assert.deepEqual(bashComplete(file, ['ledger', 've']), ['verify-chain', 'verify-receipt']);
  assert.deepEqual(bashComplete(file, ['ledger', 'grant', '']), ['cosign', 'help', 'list', 'propose', 'reauthorize', 'revoke']);
  assert.deepEqual(bashComplete(file, ['ledger', 'grant', 'propose', '--ag']), ['--agent']);
  assert.deepEqual(bashComplete(file, ['ledger', 'key', 'register', '--no']), ['--no-prove']);
  // `grant` here is the value of --as, not the grant command.
  assert.deepEqual(bashComplete(file, ['ledger', 'approve', '--as', 'grant', '--js']), ['--json']);
  assert.deepEqual(bashComplete(file, ['ledger', 'completion', '']), ['bash', 'fish', 'zsh']);
  assert.deepEqual(bashComplete(file, ['ledger', 'help', 'gr']), ['grant', 'grants']);
  // A value of an option, and the MCP server's own words after --: left to bash's file names.
  assert.deepEqual(bashComplete(file, ['ledger', 'verify-chain', '--trust-root', '']), []);
  assert.deepEqual(bashComplete(file, ['ledger', 'mcp-gateway', '--', 'np']), []);
});

test('every command, subcommand and option that --help shows is in the bash script at its place', () => {
  const text = ledger('completion', 'bash').stdout;
  const nodes = new Map<string, { subs: string[]; opts: string[] }>();
  for (const m of text.matchAll(/^ {4}'([^']*)'\)\n {6}_ledger_completion_subs='([^']*)'\n {6}_ledger_completion_opts='([^']*)'/gm)) {
    nodes.set(m[1] as string, { subs: (m[2] as string).split(' ').filter(Boolean), opts: (m[3] as string).split(' ').filter(Boolean) });
  }
  let commands = 0;
  const visit = (path: string[]): void => {
    const help = helpOf(path);
    const node = nodes.get(path.join(' '));
    assert.ok(node !== undefined, `no completion for '${path.join(' ')}'`);
    assert.deepEqual([...node.subs].sort(), [...help.commands].sort(), `commands of '${path.join(' ')}'`);
    for (const option of help.options) assert.ok(node.opts.includes(option), `'${path.join(' ')}' ${option}: ${node.opts.join(' ')}`);
    for (const sub of help.commands) {
      commands += 1;
      if (sub !== 'help') visit([...path, sub]);
    }
  };
  visit([]);
  assert.ok(commands >= 40, `${commands} commands`);
  for (const name of ['verify-chain', 'completion', 'mcp-gateway', 'dashboard']) assert.ok(nodes.has(name), name);
  for (const path of ['grant propose', 'key cosign', 'gate bench', 'grants trail', 'setup claude-code', 'hook claude-code']) assert.ok(nodes.has(path), path);
});

test('zsh: the script parses and completes commands, options, choices and values', (t) => {
  if (!installed('zsh')) {
    t.skip('zsh is not installed');
    return;
  }
  const file = script('zsh');
  assert.equal(spawnSync('zsh', ['-n', file]).status, 0);
  // compsys's own functions stand in: each prints what it was asked to offer.
  const complete = (words: readonly string[]): string => {
    const run = spawnSync(
      'zsh',
      ['-f', '-c', `compdef() { :; }; _describe() { print -rl -- "\${(@P)4%%:*}"; }; compadd() { if [[ $1 == -a ]]; then print -rl -- "\${(@P)2}"; else print -rl -- "\${@[2,-1]}"; fi; }; _files() { print FILES; }; source '${file}'; words=(${words.map((w) => `'${w}'`).join(' ')}); CURRENT=${words.length}; _ledger`],
      { encoding: 'utf8' },
    );
    assert.equal(run.status, 0, run.stderr);
    return run.stdout;
  };
  assert.match(complete(['ledger', '']), /^verify-chain$/m);
  assert.match(complete(['ledger', '']), /^completion$/m);
  assert.deepEqual(complete(['ledger', 'grant', '']).split('\n').filter(Boolean).sort(), ['cosign', 'help', 'list', 'propose', 'reauthorize', 'revoke']);
  assert.match(complete(['ledger', 'grant', 'propose', '--']), /^--agent$/m);
  assert.match(complete(['ledger', 'approve', '--as', 'grant', '--']), /^--json$/m);
  assert.deepEqual(complete(['ledger', 'completion', '']).split('\n').filter(Boolean), ['bash', 'zsh', 'fish']);
  assert.equal(complete(['ledger', 'verify-chain', '--trust-root', '']), 'FILES\n');
});

test('fish: complete -C offers commands with descriptions, subcommands, options and choices', (t) => {
  if (!installed('fish')) {
    t.skip('fish is not installed');
    return;
  }
  const file = script('fish');
  assert.equal(spawnSync('fish', ['--no-execute', file]).status, 0);
  const complete = (line: string): string[] => {
    const run = spawnSync('fish', ['--no-config', '-c', `source '${file}'; complete -C '${line}'`], { encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    return run.stdout.split('\n').filter(Boolean).map((l) => l.split('\t')[0] as string).sort();
  };
  assert.deepEqual(complete('ledger ve'), ['verify-chain', 'verify-receipt']);
  assert.deepEqual(complete('ledger grant '), ['cosign', 'help', 'list', 'propose', 'reauthorize', 'revoke']);
  assert.deepEqual(complete('ledger grant propose --ag'), ['--agent']);
  assert.deepEqual(complete('ledger approve --as grant --js'), ['--json']);
  assert.deepEqual(complete('ledger completion '), ['bash', 'fish', 'zsh']);
});
