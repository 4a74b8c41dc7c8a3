import { OperationalCode, OperationalError } from '@agent-ledger/refusals';
import { AuthorityState, EntrySchema, KeyId, Principal, ROLES, createStatement, parseStrictJson, type Entry, type Envelope, type Role } from '@agent-ledger/core';
import { readKeyFile } from '../keys.js';
import { topicNames } from '../topics.js';
import {
  addSignature,
  apiBase,
  badArgument,
  lazyHome,
  readEnvelopeFile,
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
}

/** Options of `ledger key register`. */
export interface KeyRegisterOptions extends KeyWriteOptions {
  readonly principal: string;
  readonly roles: string;
  /** The new key by its id (public key, 64 hex). */
  readonly keyId?: string;
  /** The new key's file: its id is read from it. */
  readonly newKey?: string;
  /** The new key signs too: proof that whoever registers it holds it. */
  readonly prove?: boolean;
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
    const submitted = await submit(apiBase(options, lazyHome(options.home)), envelope);
    Object.assign(report, { statementHash: submitted.statementHash, status: submitted.status ?? 'accepted' });
    human.push(`  submitted: statement ${submitted.statementHash} ${submitted.status ?? 'accepted'}`);
  }
  return { human, report };
}

/**
 * `ledger key register`: a `key.registered` statement for a new key of a
 * principal with its roles, signed by an admin (`--as`). Registering a
 * privileged key may need several admins and the key's own signature
 * (SPEC.md section 7): `--out FILE` writes the partly signed statement for
 * `ledger key cosign FILE`, and `--prove` has the new key sign too.
 */
export function keyRegisterCommand(options: KeyRegisterOptions): Promise<number> {
  return runAdmin(options.json, async () => {
    if (!Principal.safeParse(options.principal).success) throw badArgument(`--principal takes kind:name such as agent:billing-bot, not ${options.principal}`);
    const roles = parseRoles(options.roles);
    if ((options.keyId === undefined) === (options.newKey === undefined)) throw badArgument('give --key-id HEX or --new-key FILE (one of them)');
    if (options.prove === true && options.newKey === undefined) throw badArgument('--prove needs --new-key FILE: the new key signs');
    const newKey = options.newKey === undefined ? undefined : readKeyFile(options.newKey);
    const keyId = newKey?.keyId ?? (options.keyId as string);
    if (!KeyId.safeParse(keyId).success) throw badArgument(`--key-id takes a 64-hex key id, not ${keyId}`);
    if (newKey !== undefined && newKey.principal !== options.principal) throw badArgument(`${options.newKey} speaks for ${newKey.principal}, not ${options.principal}`);
    const signer = resolveSigner(options, lazyHome(options.home));
    let envelope: Envelope = signOne(createStatement('key.registered', { keyId, principal: options.principal, roles }, signer), signer);
    if (options.prove === true && newKey !== undefined) envelope = addSignature(envelope, newKey);
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
    if (type !== 'key.registered' && type !== 'key.revoked') throw badArgument(`${file} holds a ${type}, not a key statement`);
    const signer = resolveSigner(options, lazyHome(options.home));
    const signed = addSignature(envelope, signer);
    const out = options.out ?? file;
    return deliver({ ...options, out, submit: options.submit === true }, signed, `${type} by ${envelope.statement.author.principal} co-signed by ${signer.principal}`);
  });
}

/** `ledger key submit FILE`: submits a (fully) signed key statement. */
export function keySubmitCommand(file: string, options: AdminOptions): Promise<number> {
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
    const { createKafkaBus } = await import('@agent-ledger/kafka');
    const bus = createKafkaBus({ brokers: home.config.kafkaBrokers, clientId: `ledger-keys-${process.pid}` });
    const state = new AuthorityState(home.trustRoot);
    try {
      for await (const record of bus.readRange(topicNames(home.config.topicPrefix).authority, 0, '0')) {
        const entry = EntrySchema.parse(parseStrictJson(record.value.toString('utf8'))) as unknown as Entry;
        if (entry.index < state.size) continue;
        state.apply(entry.envelope.statement, entry.index, Date.parse(entry.sequencedAt));
      }
    } catch (err) {
      if (err instanceof OperationalError) throw err;
      const code = (err as { code?: unknown }).code;
      if (typeof code === 'string' && /^[A-Z_]+$/.test(code)) throw err;
      throw new OperationalError(OperationalCode.UNAVAILABLE, `cannot read the authority stream: ${(err as Error).message}`, { cause: err });
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
