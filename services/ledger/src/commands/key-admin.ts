import { LedgerError, OperationalCode, OperationalError, ReasonCode } from '@agent-ledger/refusals';
import { AuthorityState, EntrySchema, KeyId, Principal, ROLES, createStatement, parseStrictJson, type Entry, type Envelope, type Role } from '@agent-ledger/core';
import { readKeyFile } from '../keys.js';
import { topicNames } from '../topics.js';
import {
  addSignature,
  apiBase,
  badArgument,
  lazyHome,
  readEnvelopeFile,
  awaitAdmitted,
  resolveSigner,
  runAdmin,
  signOne,
  submit,
  writeEnvelopeFile,
  type AdminOptions,
} from './admin.js';

/** Where a signed key statement goes: a file for the next signer, the API, or both. */
export interface KeyWriteOptions extends AdminOptions {
  /** Write the (partly) signed statement here, for more signers (`ledger key cosign`). */
  readonly out?: string;
  /** Submit it (the default without `--out`). */
  readonly submit?: boolean;
  /** After submitting, wait until the sequencer admitted (or rejected) it. */
  readonly wait?: boolean;
}

/** Options of `ledger key register`. */
export interface KeyRegisterOptions extends KeyWriteOptions {
  readonly principal: string;
  readonly roles: string;
  /** The new key by its id (public key, 64 hex). */
  readonly keyId?: string;
  /** The new key's file: its id is read from it. */
  readonly newKey?: string;
  /** With `--new-key`, the new key signs too (proof of possession; default true, `--no-prove` for rules-1 ledgers). */
  readonly prove?: boolean;
  /** An agent's risk threshold (authority rules 2). */
  readonly riskThreshold?: string;
}

function parseRoles(text: string): Role[] {
  const roles = text.split(',');
  for (const role of roles) if (!(ROLES as string[]).includes(role)) throw badArgument(`unknown role ${role} (roles: ${ROLES.join(', ')})`);
  if (new Set(roles).size !== roles.length) throw badArgument(`--roles names a role twice: ${text}`);
  return roles as Role[];
}

/**
 * Writes the envelope to `--out` and/or submits it. Without `--out` it is
 * submitted; with `--out` only when `--submit` is given too. The report
 * names every signer so far.
 */
async function deliver(options: KeyWriteOptions, envelope: Envelope, what: string): Promise<{ human: string[]; report: Record<string, unknown> }> {
  const signedBy = envelope.signatures.map((s) => s.keyId);
  const report: Record<string, unknown> = { type: envelope.statement.type, author: envelope.statement.author.principal, signedBy, body: envelope.statement.body };
  const human = [`${what}: signed by ${signedBy.length} key${signedBy.length === 1 ? '' : 's'} (${signedBy.map((k) => k.slice(0, 16)).join(', ')})`];
  if (options.out !== undefined) {
    writeEnvelopeFile(options.out, envelope);
    report.file = options.out;
    human.push(`  written to ${options.out}; another signer adds a signature with: ledger key cosign ${options.out} --as PRINCIPAL [--submit]`);
  }
  if (options.out === undefined || options.submit === true) {
    const baseUrl = apiBase(options, lazyHome(options.home));
    const submitted = await submit(baseUrl, envelope);
    Object.assign(report, { id: submitted.id, statementHash: submitted.statementHash, status: 'accepted' });
    human.push(`  submitted: statement ${submitted.statementHash} accepted`);
    if (options.wait === true) {
      const admitted = await awaitAdmitted(baseUrl, submitted, resolveSigner(options, lazyHome(options.home)));
      Object.assign(report, { status: 'admitted', authorityIndex: admitted.index });
      human.push(`  admitted on the authority stream at #${admitted.index}`);
    }
  }
  return { human, report };
}

/**
 * `ledger key register`: a `key.registered` statement for a new key of a
 * principal with its roles, signed by an admin (`--as`) and, given
 * `--new-key`, by the new key itself (proof of possession). Under authority
 * rules 2 (SPEC.md section 7.3) a privileged key, or a further key of an
 * existing principal, needs more admins and the principal's current key in
 * the same envelope: `--out FILE` writes the partly signed statement for
 * `ledger key cosign FILE`.
 */
export function keyRegisterCommand(options: KeyRegisterOptions): Promise<number> {
  return runAdmin(options.json, async () => {
    if (!Principal.safeParse(options.principal).success) throw badArgument(`--principal takes kind:name such as agent:billing-bot, not ${options.principal}`);
    const roles = parseRoles(options.roles);
    if ((options.keyId === undefined) === (options.newKey === undefined)) throw badArgument('give --key-id HEX or --new-key FILE (one of them)');
    const newKey = options.newKey === undefined ? undefined : readKeyFile(options.newKey);
    const keyId = newKey?.keyId ?? (options.keyId as string);
    if (!KeyId.safeParse(keyId).success) throw badArgument(`--key-id takes a 64-hex key id, not ${keyId}`);
    if (newKey !== undefined && newKey.principal !== options.principal) throw badArgument(`${options.newKey} speaks for ${newKey.principal}, not ${options.principal}`);
    let riskThreshold: number | undefined;
    if (options.riskThreshold !== undefined) {
      riskThreshold = Number(options.riskThreshold);
      if (!/^\d{1,4}(\.\d{1,6})?$/.test(options.riskThreshold) || riskThreshold > 1000) throw badArgument(`--risk-threshold takes a number from 0 to 1000, not ${options.riskThreshold}`);
      if (!roles.includes('agent')) throw badArgument('--risk-threshold is for agent keys');
    }
    const signer = resolveSigner(options, lazyHome(options.home));
    const body = { keyId, principal: options.principal, roles, ...(riskThreshold === undefined ? {} : { riskThreshold }) };
    let envelope: Envelope = signOne(createStatement('key.registered', body, signer), signer);
    // Proof of possession (SPEC.md section 7.3): the new key signs its own registration.
    if (options.prove !== false && newKey !== undefined) envelope = addSignature(envelope, newKey);
    return deliver(options, envelope, `key ${keyId.slice(0, 16)} for ${options.principal} (${roles.join(', ')}) registered by ${signer.principal}`);
  });
}

/**
 * `ledger key cosign FILE`: adds one more signature (`--as` or
 * `--signer-key`) over the same statement bytes of a partly signed key
 * statement, after checking every signature already on it; writes it back
 * (or to `--out`) and, with `--submit`, submits it.
 */
export function keyCosignCommand(file: string, options: KeyWriteOptions): Promise<number> {
  return runAdmin(options.json, async () => {
    const envelope = readEnvelopeFile(file);
    const type = envelope.statement.type;
    // A root rotation signed offline (the root keys never touch this machine) is carried here as a file too.
    if (type !== 'key.registered' && type !== 'key.revoked' && type !== 'root.rotated') throw badArgument(`${file} holds a ${type}, not a key statement or a root rotation`);
    const signer = resolveSigner(options, lazyHome(options.home));
    const signed = addSignature(envelope, signer);
    const out = options.out ?? file;
    return deliver({ ...options, out, submit: options.submit === true }, signed, `${type} by ${envelope.statement.author.principal} co-signed by ${signer.principal}`);
  });
}

/** `ledger key submit FILE`: submits a (fully) signed key statement. */
export function keySubmitCommand(file: string, options: AdminOptions & { readonly wait?: boolean }): Promise<number> {
  return runAdmin(options.json, async () => {
    const envelope = readEnvelopeFile(file);
    const type = envelope.statement.type;
    if (type !== 'key.registered' && type !== 'key.revoked') throw badArgument(`${file} holds a ${type}, not a key statement`);
    return deliver({ ...options, submit: true }, envelope, `${type} by ${envelope.statement.author.principal}`);
  });
}

/** `ledger key revoke KEY_ID --reason TEXT`: nothing the key signs after this entry counts. */
export function keyRevokeCommand(keyId: string, options: KeyWriteOptions & { readonly reason: string }): Promise<number> {
  return runAdmin(options.json, async () => {
    if (!KeyId.safeParse(keyId).success) throw badArgument(`a key is named by its 64-hex key id, not ${keyId}`);
    if (options.reason.length < 1 || options.reason.length > 256) throw badArgument('--reason is 1 to 256 characters');
    const signer = resolveSigner(options, lazyHome(options.home));
    const envelope = signOne(createStatement('key.revoked', { keyId, reason: options.reason }, signer), signer);
    return deliver(options, envelope, `key ${keyId.slice(0, 16)} revoked by ${signer.principal} (${options.reason})`);
  });
}

/** One key as `key list` reports it. */
export interface KeyListRow {
  readonly keyId: string;
  readonly principal: string;
  readonly roles: readonly Role[];
  readonly registeredAt: number;
  readonly revokedAt: number | null;
  readonly status: 'active' | 'revoked';
}

/**
 * `ledger key list`: every key the authority stream registered, with its
 * roles and the authority indexes that bound it. Read from the committed
 * authority stream (read_committed) and folded with the same rules as the
 * sequencer and verify-chain, so it lists what the ledger judges by.
 */
export function keyListCommand(options: { readonly home?: string; readonly json?: boolean; readonly principal?: string; readonly all?: boolean }): Promise<number> {
  return runAdmin(options.json, async () => {
    if (options.principal !== undefined && !Principal.safeParse(options.principal).success) throw badArgument(`--principal takes kind:name, not ${options.principal}`);
    const home = lazyHome(options.home)();
    const { readingBus } = await import('../dev-storage.js');
    // The broker's own log lines stay quiet: a failure is reported once, typed.
    const bus = readingBus(home, `ledger-keys-${process.pid}`);
    const state = new AuthorityState(home.trustRoot);
    const records = bus.readRange(topicNames(home.config.topicPrefix).authority, 0, '0')[Symbol.asyncIterator]();
    try {
      for (;;) {
        let next: IteratorResult<{ value: Buffer }>;
        try {
          next = await records.next();
        } catch (err) {
          // The broker could not be read: an outage, never a refusal of the log's content.
          if (err instanceof OperationalError) throw err;
          throw new OperationalError(OperationalCode.UNAVAILABLE, `cannot read the authority stream from ${home.config.kafkaBrokers.join(',')}: ${(err as Error).message}`, { cause: err });
        }
        if (next.done === true) break;
        // The log's content: what does not fold is a typed LedgerError, as the sequencer and verify-chain would say.
        const parsed = EntrySchema.safeParse(parseStrictJson(next.value.value.toString('utf8')));
        if (!parsed.success) throw new LedgerError(ReasonCode.SCHEMA_INVALID, `authority stream entry ${state.size}: not a ledger entry`);
        const entry = parsed.data as unknown as Entry;
        if (entry.index < state.size) continue;
        state.apply(entry.envelope.statement, entry.index, Date.parse(entry.sequencedAt));
      }
    } finally {
      await bus.close();
    }
    const keys: KeyListRow[] = [...state.keys()]
      .filter((k) => options.principal === undefined || k.principal === options.principal)
      .map((k): KeyListRow => ({ keyId: k.keyId, principal: k.principal, roles: k.roles, registeredAt: k.registeredAt, revokedAt: k.revokedAt ?? null, status: k.revokedAt === undefined ? 'active' : 'revoked' }))
      .filter((k) => options.all === true || k.status === 'active' || options.principal !== undefined)
      .sort((a, b) => a.principal.localeCompare(b.principal) || a.registeredAt - b.registeredAt);
    const human = keys.length === 0
      ? ['no keys']
      : keys.map((k) => `${k.keyId}  ${k.principal}  ${k.roles.join(',')}  registered #${k.registeredAt}${k.revokedAt === null ? '' : `  revoked #${k.revokedAt}`}`);
    return { human, report: { authorityIndex: state.size, keys } };
  });
}
