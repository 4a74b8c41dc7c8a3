import { timingSafeEqual, createHash } from 'node:crypto';
import { OperationalCode, OperationalError } from '@agent-ledger/refusals';
import { fromBase64, fromHex, nodeEd25519, type Role } from '@agent-ledger/core';
import { parseReadAuthorization, readSigningMessage } from '@agent-ledger/client';
import type { AuthorityFollower } from '../authority-follower.js';

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
/** Signatures remembered against replay at most (beyond it reads are answered UNAVAILABLE until old ones expire). */
const MAX_REMEMBERED = 500_000;

/** A 401: missing or invalid authentication. */
export function unauthenticated(message: string): OperationalError {
  return new OperationalError(OperationalCode.UNAUTHENTICATED, message);
}

/** A 403: the principal's role does not cover what it asked for. */
export function forbidden(message: string): OperationalError {
  return new OperationalError(OperationalCode.FORBIDDEN, message);
}

/**
 * Checks signed reads (`authorization: Ledger-Ed25519 keyId=..,ts=..,nonce=..,sig=..`,
 * packages/client/src/read-auth.ts) against the authority state this process
 * folds: the key must be registered and not revoked, the timestamp within
 * {@link READ_AUTH_WINDOW_MS} of now, the signature good over the method,
 * the request target as received and the body's hash, and the signature not
 * seen before (each one is remembered until it leaves the window, so a
 * captured request cannot be replayed to this process). `/metrics` also takes
 * `authorization: Bearer <token>` when a scraper token is configured.
 */
export class ReadAuthenticator {
  readonly #follower: AuthorityFollower;
  readonly #metricsToken: Buffer | undefined;
  readonly #windowMs: number;
  /** Signatures seen, by the time they leave the window (ms). */
  readonly #seen = new Map<string, number>();

  constructor(follower: AuthorityFollower, options: { readonly metricsToken?: string; readonly windowMs?: number } = {}) {
    this.#follower = follower;
    this.#metricsToken = options.metricsToken === undefined ? undefined : digest(options.metricsToken);
    this.#windowMs = options.windowMs ?? READ_AUTH_WINDOW_MS;
  }

  /**
   * The reader of one request (untrusted headers), or UNAUTHENTICATED.
   * `target` is the request target as received (path and query).
   */
  authenticate(method: string, target: string, header: string | undefined, bodyHash: string, options: { readonly allowMetricsToken?: boolean } = {}, nowMs = Date.now()): Reader {
    if (header === undefined || header === '') throw unauthenticated('this read needs an authorization header signed by a registered key (the SDK and the CLI sign their reads)');
    if (header.startsWith('Bearer ')) {
      if (options.allowMetricsToken !== true || this.#metricsToken === undefined) throw unauthenticated('a bearer token is accepted on /metrics only, and only when a scraper token is configured');
      if (!timingSafeEqual(digest(header.slice('Bearer '.length).trim()), this.#metricsToken)) throw unauthenticated('the bearer token is not the configured scraper token');
      return { kind: 'metrics-token' };
    }
    const auth = parseReadAuthorization(header.slice(0, 400));
    if (auth === undefined) throw unauthenticated('the authorization header is not a Ledger-Ed25519 read signature');
    if (Math.abs(nowMs - auth.timestampMs) > this.#windowMs) throw unauthenticated(`the signed read is ${nowMs > auth.timestampMs ? 'stale' : 'from the future'}: its timestamp is more than ${this.#windowMs / 1000} s from the API's clock`);
    let record;
    try {
      record = this.#follower.current().state.key(auth.keyId);
    } catch (err) {
      throw new OperationalError(OperationalCode.UNAVAILABLE, 'the authority state is not available: retry shortly', { cause: err, retryable: true });
    }
    if (record === undefined) throw unauthenticated(`key ${auth.keyId.slice(0, 16)} is not registered`);
    if (record.revokedAt !== undefined) throw unauthenticated(`key ${auth.keyId.slice(0, 16)} is revoked`);
    const signature = Buffer.from(auth.signature, 'base64');
    const message = readSigningMessage(method, target, auth.timestampMs, auth.nonce, bodyHash);
    if (!nodeEd25519.verify(fromHex(auth.keyId, 32), message, new Uint8Array(signature))) throw unauthenticated('the read signature does not verify');
    this.#remember(auth.signature, auth.timestampMs + this.#windowMs, nowMs);
    return { kind: 'principal', principal: record.principal, keyId: record.keyId, roles: record.roles };
  }

  /** Refuses a signature seen before within the window; remembers this one. */
  #remember(signature: string, expiresMs: number, nowMs: number): void {
    if (this.#seen.has(signature)) throw unauthenticated('this signed read was already used: sign each request afresh');
    if (this.#seen.size >= MAX_REMEMBERED) {
      for (const [seen, expiry] of this.#seen) if (expiry < nowMs) this.#seen.delete(seen);
      if (this.#seen.size >= MAX_REMEMBERED) throw new OperationalError(OperationalCode.UNAVAILABLE, 'too many signed reads in the window: retry shortly', { retryable: true });
    }
    this.#seen.set(signature, expiresMs);
    // Map order is insertion order, nearly expiry order: drop the expired ones at the front.
    for (const [seen, expiry] of this.#seen) {
      if (expiry >= nowMs) break;
      this.#seen.delete(seen);
    }
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
