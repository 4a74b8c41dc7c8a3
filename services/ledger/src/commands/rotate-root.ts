import { writeFileSync } from 'node:fs';
import { LedgerClient } from '@agent-ledger/client';
import { KeyId, ROLES, createStatement, nodeEd25519, signStatement, type BodyOf, type Role, type Signer } from '@agent-ledger/core';
import { Exit, UsageError } from '../cli-error.js';
import { LedgerHome, apiCaFile } from '../home.js';
import { readKeyFile } from '../keys.js';
import { apiFetch } from '../api-fetch.js';
import { reportSuccess } from './json-output.js';

/** Options of `ledger rotate-root`. */
export interface RotateRootOptions {
  /** Current root key files (at least the current threshold). */
  readonly rootKey: readonly string[];
  /** New root key files (at least the new threshold sign; all of them form the new set). */
  readonly newRootKey: readonly string[];
  readonly threshold: number;
  /** Key ids to revoke in the same statement (a compromised admin's, say). */
  readonly revoke: readonly string[];
  /** `FILE=role[,role]`: keys to register in the same statement. */
  readonly register: readonly string[];
  readonly reason: string;
  /** Write the signed envelope here. */
  readonly out?: string;
  /** Submit it to the installation's API (or `api`). */
  readonly submit?: boolean;
  readonly api?: string;
  readonly home?: string;
  readonly json?: boolean;
}

/**
 * `ledger rotate-root`: signs a `root.rotated` statement with the current
 * root keys and the new ones (SPEC.md section 7.1), optionally revoking and
 * registering keys in the same statement (the recovery path after an admin
 * key compromise), and writes and/or submits it. The ledger accepts it only
 * with the current threshold of current root signatures and the new
 * threshold of new ones; auditors keep pinning the genesis trust root, and
 * verify-chain follows the rotations from there.
 */
export async function rotateRootCommand(options: RotateRootOptions): Promise<number> {
  const current = options.rootKey.map(readKeyFile);
  const next = options.newRootKey.map(readKeyFile);
  if (current.length === 0 || next.length === 0) throw new UsageError('rotate-root needs --root-key (current) and --new-root-key (new) files');
  if (options.threshold < 1 || options.threshold > next.length) throw new UsageError(`--threshold ${options.threshold} must be between 1 and the ${next.length} new root keys`);
  for (const keyId of options.revoke) if (!KeyId.safeParse(keyId).success) throw new UsageError(`--revoke takes a 64-hex key id, got ${keyId}`);
  const registerKeys = options.register.map((value) => {
    const eq = value.lastIndexOf('=');
    if (eq <= 0) throw new UsageError(`--register takes FILE=role[,role], got ${value}`);
    const roles = value.slice(eq + 1).split(',');
    for (const role of roles) if (!(ROLES as string[]).includes(role)) throw new UsageError(`unknown role ${role} (roles: ${ROLES.join(', ')})`);
    const signer = readKeyFile(value.slice(0, eq));
    return { keyId: signer.keyId, principal: signer.principal, roles: roles as Role[] };
  });
  const body: BodyOf<'root.rotated'> = {
    rootKeys: next.map((k) => k.keyId),
    rootThreshold: options.threshold,
    revokeKeys: [...options.revoke],
    registerKeys,
    reason: options.reason,
  };
  const author = current[0] as Signer;
  const signers = [...current, ...next.filter((k) => !current.some((c) => c.keyId === k.keyId))];
  const envelope = signStatement(createStatement('root.rotated', body, { principal: author.principal, keyId: author.keyId }), signers, nodeEd25519);
  if (options.out !== undefined) writeFileSync(options.out, `${JSON.stringify(envelope, null, 2)}\n`);
  const human: string[] = [];
  let statementHash: string | null = null;
  if (options.submit === true) {
    const home = LedgerHome.open(options.home);
    const client = new LedgerClient({ baseUrl: options.api ?? home.apiUrl(), signer: author, deciderKeys: [], fetch: apiFetch(apiCaFile(home.config)) });
    statementHash = (await client.submit(envelope)).statementHash;
    human.push(`root.rotated ${statementHash} submitted`);
  }
  human.push(`root.rotated signed by ${current.length} current and ${next.length} new root keys: new set of ${next.length}, threshold ${options.threshold}; ${body.revokeKeys.length} revoked, ${registerKeys.length} registered`);
  if (options.out === undefined && options.submit !== true) human.push('nothing written: pass --out FILE and/or --submit');
  reportSuccess(options.json, human, {
    statementId: envelope.statement.id,
    currentRootSigners: current.length,
    newRootKeys: next.length,
    threshold: options.threshold,
    revoked: body.revokeKeys.length,
    registered: registerKeys.length,
    out: options.out ?? null,
    submitted: statementHash !== null,
    statementHash,
  });
  return Exit.ok;
}
