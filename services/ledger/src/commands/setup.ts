import { existsSync, mkdirSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fetchTrust, pinTrust } from '@agent-ledger/client';
import { Principal, createStatement } from '@agent-ledger/core';
import { writeExecutorConfig } from '../hook/config.js';
import { apiFetch } from '../api-fetch.js';
import { apiCaFile } from '../home.js';
import { installPreToolUseHook, shellQuote } from '../hook/settings.js';
import { FailMode } from '../hook/tool-call.js';
import { newSigner, readKeyFile, writeKeyFile } from '../keys.js';
import { addSignature, apiBase, awaitAdmitted, badArgument, lazyHome, resolveSigner, runAdmin, signOne, submit, type AdminOptions } from './admin.js';

/** Options of `ledger setup claude-code`. */
export interface SetupClaudeCodeOptions extends AdminOptions {
  /** The project whose `.claude/settings.json` gets the hook (default: the current directory). */
  readonly project?: string;
  /** The agent principal of this machine (default `agent:claude-code-<host>`). */
  readonly agent?: string;
  /** What the hook does when the ledger cannot be reached. */
  readonly failMode?: string;
  /** The hook's budget in seconds (Claude Code's timeout for it is 10 s more). */
  readonly budget?: number;
  /** The agent's risk threshold, registered with its key. */
  readonly riskThreshold?: string;
}

/** The `ledger` binary this command runs from, for the hook's command line. */
function ledgerBin(): string {
  return fileURLToPath(new URL('../../../bin/ledger.js', import.meta.url));
}

/** The default principal of this machine's Claude Code agent. */
export function machineAgent(): string {
  const host = hostname().replace(/[^A-Za-z0-9._@-]+/g, '-').slice(0, 100) || 'host';
  return `agent:claude-code-${host}`;
}

/**
 * `ledger setup claude-code [--project DIR]`: puts a project's Claude Code
 * behind the ledger. It makes an agent key for this machine (in the
 * installation's `keys/`) and registers it through the key rules: a first
 * key of an agent principal is signed by one admin (`--as`) and by the new
 * key itself (proof of possession; SPEC.md section 7.3), and the command
 * waits until the sequencer admitted it; an existing key file is reused. It
 * writes `.claude/agent-ledger.json` (API, key file, the gate's key ids to
 * pin, the trust root, fail mode, budget) and adds the PreToolUse hook to
 * `.claude/settings.json`, merged with what is there.
 */
export function setupClaudeCodeCommand(options: SetupClaudeCodeOptions): Promise<number> {
  return runAdmin(options.json, async () => {
    const home = lazyHome(options.home);
    const project = resolve(options.project ?? '.');
    if (!existsSync(project)) throw badArgument(`--project ${project} does not exist`);
    const agent = options.agent ?? machineAgent();
    if (!Principal.safeParse(agent).success || !agent.startsWith('agent:')) throw badArgument(`--agent takes an agent principal such as agent:laptop-1, not ${agent}`);
    const failMode = options.failMode ?? FailMode.closed;
    if (!(Object.values(FailMode) as string[]).includes(failMode)) throw badArgument(`--fail-mode takes closed, ask or open, not ${failMode}`);
    const budgetSeconds = options.budget ?? 110;
    if (!Number.isInteger(budgetSeconds) || budgetSeconds < 5 || budgetSeconds > 3590) throw badArgument('--budget takes whole seconds from 5 to 3590');
    let riskThreshold: number | undefined;
    if (options.riskThreshold !== undefined) {
      riskThreshold = Number(options.riskThreshold);
      if (!/^\d{1,4}(\.\d{1,6})?$/.test(options.riskThreshold) || riskThreshold > 1000) throw badArgument(`--risk-threshold takes a number from 0 to 1000, not ${options.riskThreshold}`);
    }
    const baseUrl = apiBase(options, home);
    const human: string[] = [];
    const report: Record<string, unknown> = { project, agent };

    // 1. The agent key of this machine, registered once.
    const keyFile = join(home().dir, 'keys', `${agent.replace(':', '-')}.key`);
    if (existsSync(keyFile)) {
      const key = readKeyFile(keyFile);
      if (key.principal !== agent) throw badArgument(`${keyFile} speaks for ${key.principal}, not ${agent}`);
      human.push(`agent key ${key.keyId.slice(0, 16)} for ${agent}: ${keyFile} (exists; registered when it was made)`);
      Object.assign(report, { keyId: key.keyId, keyFile, registered: 'earlier' });
    } else {
      const admin = resolveSigner(options, home);
      const key = newSigner(agent);
      const body = { keyId: key.keyId, principal: agent, roles: ['agent' as const], ...(riskThreshold === undefined ? {} : { riskThreshold }) };
      // Proof of possession: the new key signs its own registration beside the admin.
      const envelope = addSignature(signOne(createStatement('key.registered', body, admin), admin), key);
      const submitted = await submit(baseUrl, envelope);
      const admitted = await awaitAdmitted(baseUrl, submitted, admin);
      writeKeyFile(keyFile, key);
      human.push(`agent key ${key.keyId.slice(0, 16)} for ${agent} registered by ${admin.principal} at authority index ${admitted.index}: ${keyFile}`);
      Object.assign(report, { keyId: key.keyId, keyFile, registered: { by: admin.principal, authorityIndex: admitted.index, statementHash: submitted.statementHash } });
    }

    // 2. What the hook reads: the API, the key, the pinned trust document, fail mode and budget.
    //    The trust document is fetched once, checked against the installation's trust root, and pinned.
    const claudeDir = join(project, '.claude');
    const configFile = join(claudeDir, 'agent-ledger.json');
    const trustFile = join(claudeDir, 'agent-ledger-trust.json');
    mkdirSync(claudeDir, { recursive: true });
    const trust = await fetchTrust(baseUrl, { trustRoot: home().trustRoot, fetch: apiFetch() });
    pinTrust(trustFile, trust);
    const caFile = apiCaFile(home().config);
    writeExecutorConfig(configFile, { v: 1, api: baseUrl, keyFile, trust: trustFile, failMode: failMode as FailMode, budgetMs: budgetSeconds * 1000, ...(caFile === undefined ? {} : { caFile: resolve(caFile) }) });
    const gateKeys = trust.keys.filter((k) => k.roles.includes('gate')).length;
    human.push(`hook configuration: ${configFile} (fail mode ${failMode}, budget ${budgetSeconds} s); trust pinned in ${trustFile} (${gateKeys} gate key${gateKeys === 1 ? '' : 's'}, authority size ${trust.authoritySize})`);

    // 3. The hook itself, merged into the project's settings; Claude Code's timeout leaves the hook 10 s to answer.
    const settingsFile = join(claudeDir, 'settings.json');
    const command = [process.execPath, ledgerBin(), 'hook', 'claude-code', '--config', configFile].map(shellQuote).join(' ');
    installPreToolUseHook(settingsFile, command, budgetSeconds + 10);
    human.push(`PreToolUse hook for every tool: ${settingsFile}`, `  ${command}`);
    Object.assign(report, { configFile, trustFile, settingsFile, command, failMode, budgetSeconds });
    return { human, report };
  });
}
