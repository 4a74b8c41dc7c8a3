import { existsSync, writeFileSync } from 'node:fs';
import { LATEST_AUTHORITY_RULES_VERSION, Principal, ROLES, createStatement, nodeEd25519, signStatement, type Role, type TrustRoot } from '@agent-ledger/core';
import { Exit, UsageError } from '../cli-error.js';
import { newSigner, readKeyFile, writeKeyFile } from '../keys.js';
import { formatTrustRoot } from '../trust-root-file.js';
import { readGrantPolicy } from '../home.js';
import { reportSuccess } from './json-output.js';

/** `ledger keygen`: writes a new private key file (mode 0600) and prints its key id. */
export function keygenCommand(options: { principal: string; out: string; force?: boolean; json?: boolean }): number {
  if (!Principal.safeParse(options.principal).success) throw new UsageError(`--principal must look like kind:name, got ${options.principal}`);
  if (existsSync(options.out) && options.force !== true) throw new UsageError(`${options.out} exists; pass --force to overwrite`);
  const signer = newSigner(options.principal);
  writeKeyFile(options.out, signer);
  reportSuccess(options.json, [signer.keyId], { keyId: signer.keyId, principal: signer.principal, out: options.out });
  return Exit.ok;
}

/** Parses `FILE=role[,role]` key arguments. */
function parseKeyArgs(values: readonly string[]): { file: string; roles: Role[] }[] {
  return values.map((value) => {
    const eq = value.lastIndexOf('=');
    if (eq <= 0) throw new UsageError(`--key takes FILE=role[,role], got ${value}`);
    const roles = value.slice(eq + 1).split(',');
    for (const role of roles) if (!(ROLES as string[]).includes(role)) throw new UsageError(`unknown role ${role} (roles: ${ROLES.join(', ')})`);
    return { file: value.slice(0, eq), roles: roles as Role[] };
  });
}

/** Options of `ledger genesis`. */
export interface GenesisOptions {
  readonly origin: string;
  readonly rootKey: readonly string[];
  readonly threshold: number;
  readonly key: readonly string[];
  readonly eventPartitions: number;
  readonly freshnessMs: number;
  readonly out: string;
  readonly trustRootOut: string;
  /** Grant policy file (SPEC.md section 7.2); the default policy when absent. */
  readonly grantPolicy?: string;
  readonly json?: boolean;
}

/**
 * `ledger genesis`: the first authority statement, signed by every given root
 * key (at least the threshold), registering the first admins, sequencer and
 * services; and the trust-root file auditors pin.
 */
export function genesisCommand(options: GenesisOptions): number {
  const roots = options.rootKey.map(readKeyFile);
  if (roots.length < options.threshold || options.threshold < 1) {
    throw new UsageError(`--threshold ${options.threshold} needs at least that many --root-key files`);
  }
  const keys = parseKeyArgs(options.key).map(({ file, roles }) => {
    const signer = readKeyFile(file);
    return { keyId: signer.keyId, principal: signer.principal, roles };
  });
  if (!keys.some((k) => k.roles.includes('admin')) || !keys.some((k) => k.roles.includes('sequencer'))) {
    throw new UsageError('genesis needs at least one admin key and one sequencer key');
  }
  const trustRoot: TrustRoot = { v: 1, origin: options.origin, rootKeys: roots.map((r) => r.keyId), threshold: options.threshold };
  const first = roots[0];
  if (first === undefined) throw new UsageError('no root key');
  const statement = createStatement(
    'genesis',
    {
      origin: options.origin,
      eventPartitions: options.eventPartitions,
      freshnessMs: options.freshnessMs,
      rootKeys: trustRoot.rootKeys,
      rootThreshold: trustRoot.threshold,
      keys,
      authorityRulesVersion: LATEST_AUTHORITY_RULES_VERSION,
      ...(options.grantPolicy === undefined ? {} : { grantPolicy: readGrantPolicy(options.grantPolicy) }),
    },
    { principal: first.principal, keyId: first.keyId },
  );
  const envelope = signStatement(statement, roots, nodeEd25519);
  writeFileSync(options.out, `${JSON.stringify(envelope, null, 2)}\n`);
  writeFileSync(options.trustRootOut, formatTrustRoot(trustRoot));
  reportSuccess(options.json, [`genesis ${statement.id} signed by ${roots.length} root keys (threshold ${options.threshold})`], {
    statementId: statement.id,
    origin: options.origin,
    rootSigners: roots.length,
    threshold: options.threshold,
    out: options.out,
    trustRoot: options.trustRootOut,
  });
  return Exit.ok;
}
