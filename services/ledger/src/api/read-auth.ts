import { timingSafeEqual, createHash } from 'node:crypto';
import { OperationalCode, OperationalError } from '@agent-ledger/refusals';
import { fromHex, nodeEd25519, type Role } from '@agent-ledger/core';
import { parseReadAuthorization, readSigningMessage } from '@agent-ledger/client';

/** How the API answers reads: `signed` (each read signed by a registered key, the default) or `open` (anyone who reaches the port reads everything). */
export type ReadAuthMode = 'signed' | 'open';

/**
 * Who reads: a registered principal (by the key that signed the request), the
 * metrics scraper's token, anyone (open mode), or nobody proven (a request the
 * authentication hook did not see: it reads nothing).
 */
export type Reader =
  | { readonly kind: 'principal'; readonly principal: string; readonly keyId: string; readonly roles: readonly Role[] }
  | { readonly kind: 'metrics-token' }
  | { readonly kind: 'open' }
  | { readonly kind: 'anonymous' };

/** How far a read's timestamp may be from the API's clock, either way. */
export const READ_AUTH_WINDOW_MS = 30_000;
/**
 * Clock skew allowed between the API processes of one installation: a
 * remembered (key, nonce) is kept this much longer than the window, so that a
 * process whose clock runs behind never accepts a read that another process,
 * whose clock runs ahead, has already forgotten.
 */
export const READ_AUTH_SKEW_MS = 30_000;
/** Reads this process remembers itself at most (its fast first check; the shared store holds every one). */
const MAX_REMEMBERED = 100_000;

/** The registered key a read names, as the authority state holds it. */
export interface ReadKey {
  readonly principal: string;
  readonly keyId: string;
  readonly roles: readonly Role[];
  readonly revokedAt?: number | undefined;
}

/**
 * Where every API process of the installation records the reads it accepted
 * (`read_nonces` in Postgres or PGlite): `claim` is true the first time a
 * (key, nonce) pair is claimed, false ever after until `expiresAtMs`.
 */
export interface ReadNonceStore {
  claim(keyId: string, nonce: string, expiresAtMs: number, nowMs: number): Promise<boolean>;
}

/** A 401: missing or invalid authentication. */
export function unauthenticated(message: string): OperationalError {
  return new OperationalError(OperationalCode.UNAUTHENTICATED, message);
}

/** A 403: the principal's role does not cover what it asked for. */
export function forbidden(message: string): OperationalError {
  return new OperationalError(OperationalCode.FORBIDDEN, message);
}

/**
 * A 404 for what the reader may not see, worded as for what does not exist:
 * one answer for both (same status, code, message and `retryable`), so a
 * principal cannot probe for proposals, statements or entries that are not
 * its own.
 */
export function hiddenOrMissing(message: string, retryable = false): OperationalError {
  return new OperationalError(OperationalCode.NOT_FOUND, message, { retryable });
}

/** What the authenticator needs from the process. */
export interface ReadAuthenticatorOptions {
  /** This installation's id: the genesis statement hash every read must be signed for (`aud`). */
  readonly installation: string;
  /** The registered key of an id, from the authority state this process folds (throws while that state is unavailable). */
  readonly keyOf: (keyId: string) => ReadKey | undefined;
  /** The store shared by every API process of the installation. */
  readonly nonces: ReadNonceStore;
  readonly metricsToken?: string;
  readonly windowMs?: number;
  readonly skewMs?: number;
}

/**
 * Checks signed reads (`authorization: Ledger-Ed25519 keyId=..,aud=..,ts=..,nonce=..,sig=..`,
 * packages/client/src/read-auth.ts), in this order: the header's one exact
 * shape; the audience is this installation (a read signed for another
 * installation where the same key is registered is refused); the timestamp
 * within {@link READ_AUTH_WINDOW_MS} of now; the key registered and not
 * revoked in the authority state this process folds; the signature good over
 * the method, the audience, the request target as received and the empty
 * body's hash; and the (key, nonce) pair never accepted before: first by this
 * process's own memory, then by the store every API process of the
 * installation shares (its primary key decides a race), which survives
 * restarts. Any failure is UNAUTHENTICATED (401), or UNAVAILABLE (503,
 * retryable) when the authority state or the shared store cannot answer:
 * never a read let through unchecked. `/metrics` also takes
 * `authorization: Bearer <token>` when a scraper token is configured.
 */
export class ReadAuthenticator {
  readonly #options: ReadAuthenticatorOptions;
  readonly #metricsToken: Buffer | undefined;
  readonly #windowMs: number;
  readonly #skewMs: number;
  /** (key, nonce) pairs this process accepted, by the time they leave the window (ms). */
  readonly #seen = new Map<string, number>();

  constructor(options: ReadAuthenticatorOptions) {
    this.#options = options;
    this.#metricsToken = options.metricsToken === undefined ? undefined : digest(options.metricsToken);
    this.#windowMs = options.windowMs ?? READ_AUTH_WINDOW_MS;
    this.#skewMs = options.skewMs ?? READ_AUTH_SKEW_MS;
  }

  /**
   * The reader of one request (untrusted headers), or UNAUTHENTICATED.
   * `target` is the request target as received (path and query); signed
   * reads carry no body (the body hash signed is the empty one).
   */
  async authenticate(method: string, target: string, header: string | undefined, options: { readonly allowMetricsToken?: boolean } = {}, nowMs = Date.now()): Promise<Reader> {
    if (header === undefined || header === '') throw unauthenticated('this read needs an authorization header signed by a registered key (the SDK and the CLI sign their reads)');
    if (header.startsWith('Bearer ')) {
      if (options.allowMetricsToken !== true || this.#metricsToken === undefined) throw unauthenticated('a bearer token is accepted on /metrics only, and only when a scraper token is configured');
      if (!timingSafeEqual(digest(header.slice('Bearer '.length).trim()), this.#metricsToken)) throw unauthenticated('the bearer token is not the configured scraper token');
      return { kind: 'metrics-token' };
    }
    const auth = header.length > 400 ? undefined : parseReadAuthorization(header);
    if (auth === undefined) throw unauthenticated('the authorization header is not a Ledger-Ed25519 read signature (keyId, aud, ts, nonce, sig: docs/http.md "Signed reads")');
    if (auth.audience !== this.#options.installation) {
      throw unauthenticated(`this read is signed for installation ${auth.audience.slice(0, 16)}, this API serves ${this.#options.installation.slice(0, 16)} (GET /v1/installation)`);
    }
    if (Math.abs(nowMs - auth.timestampMs) > this.#windowMs) throw unauthenticated(`the signed read is ${nowMs > auth.timestampMs ? 'stale' : 'from the future'}: its timestamp is more than ${this.#windowMs / 1000} s from the API's clock`);
    let record: ReadKey | undefined;
    try {
      record = this.#options.keyOf(auth.keyId);
    } catch (err) {
      throw new OperationalError(OperationalCode.UNAVAILABLE, 'the authority state is not available: retry shortly', { cause: err, retryable: true });
    }
    if (record === undefined) throw unauthenticated(`key ${auth.keyId.slice(0, 16)} is not registered`);
    if (record.revokedAt !== undefined) throw unauthenticated(`key ${auth.keyId.slice(0, 16)} is revoked`);
    const message = readSigningMessage({ method, audience: this.#options.installation, target, timestampMs: auth.timestampMs, nonce: auth.nonce, bodyHash: '' });
    if (!nodeEd25519.verify(fromHex(auth.keyId, 32), message, new Uint8Array(Buffer.from(auth.signature, 'base64')))) throw unauthenticated('the read signature does not verify');
    await this.#claim(auth.keyId, auth.nonce, auth.timestampMs, nowMs);
    return { kind: 'principal', principal: record.principal, keyId: record.keyId, roles: record.roles };
  }

  /**
   * Refuses a (key, nonce) pair accepted before within the window, by any API
   * process of the installation; remembers this one, here and in the store.
   */
  async #claim(keyId: string, nonce: string, timestampMs: number, nowMs: number): Promise<void> {
    const replayed = (): OperationalError => unauthenticated('this signed read was already used (here or on another API process): sign each request afresh');
    const pair = `${keyId}:${nonce}`;
    // Map order is insertion order, nearly expiry order: drop the expired ones at the front.
    for (const [seen, expiry] of this.#seen) {
      if (expiry >= nowMs) break;
      this.#seen.delete(seen);
    }
    if (this.#seen.has(pair)) throw replayed();
    let first: boolean;
    try {
      first = await this.#options.nonces.claim(keyId, nonce, timestampMs + this.#windowMs + this.#skewMs, nowMs);
    } catch (err) {
      throw new OperationalError(OperationalCode.UNAVAILABLE, 'the replay check of signed reads is not available (the database): retry shortly', { cause: err, retryable: true });
    }
    // Remembered here either way: a replay of it is refused again without asking the store.
    this.#seen.set(pair, timestampMs + this.#windowMs);
    if (this.#seen.size > MAX_REMEMBERED) {
      const oldest = this.#seen.keys().next();
      if (oldest.done !== true) this.#seen.delete(oldest.value);
    }
    if (!first) throw replayed();
  }
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** True when the reader may read everything (an admin or an auditor, or the API runs open). */
export function readsEverything(reader: Reader): boolean {
  return reader.kind === 'open' || (reader.kind === 'principal' && (reader.roles.includes('admin') || reader.roles.includes('auditor')));
}

/** True when the reader holds one of `roles` (or reads everything). */
export function holdsRole(reader: Reader, roles: readonly Role[]): boolean {
  return readsEverything(reader) || (reader.kind === 'principal' && reader.roles.some((r) => roles.includes(r)));
}

/** The principal of a principal reader, else undefined. */
export function principalOf(reader: Reader): string | undefined {
  return reader.kind === 'principal' ? reader.principal : undefined;
}
