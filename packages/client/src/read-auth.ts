import { OperationalCode, OperationalError } from '@agent-ledger/refusals';
import { getPublic } from './errors.js';
import { nodeEd25519, sha256Hex, statementHash, toBase64, toHex, utf8, type Ed25519Backend, type Envelope, type Signer } from '@agent-ledger/core';

/**
 * Signed reads of the ledger's API. A principal proves it holds its
 * registered Ed25519 key by signing each request:
 *
 *   authorization: Ledger-Ed25519 keyId=<64 hex>,aud=<64 hex>,ts=<unix ms>,nonce=<32 hex>,sig=<base64>
 *
 * over {@link readSigningMessage}: a context line of its own (so a read
 * signature is never a statement signature), the method, the installation
 * the read is meant for (`aud`: the genesis statement hash, so a read signed
 * for one installation is refused by every other one where the same key is
 * registered), the path with its query exactly as sent, the timestamp, the
 * nonce and the SHA-256 of the body (empty for none). The API checks the
 * audience against its own installation, the key against the authority state
 * (registered, not revoked), the timestamp against a small window and the
 * pair (key, nonce) against every read any API process of the installation
 * accepted within it (a replay is refused, on any process, after a restart
 * too).
 */
export const READ_AUTH_SCHEME = 'Ledger-Ed25519';

/** The context line every read signature starts with (v2: the audience line was added; v1 signatures are refused). */
export const READ_AUTH_CONTEXT = 'agent-ledger/read/v2\n';

/** The fields of a read authorization header. */
export interface ReadAuthorization {
  readonly keyId: string;
  /** The installation the read was signed for: the genesis statement hash (64 hex). */
  readonly audience: string;
  readonly timestampMs: number;
  readonly nonce: string;
  readonly signature: string;
}

/** What one signed read covers. */
export interface ReadRequest {
  readonly method: string;
  /** The installation the read is meant for ({@link installationOf}). */
  readonly audience: string;
  /** The path with its query, exactly as sent (e.g. `/v1/pending?limit=10`). */
  readonly target: string;
  readonly timestampMs: number;
  readonly nonce: string;
  /** {@link readBodyHash} of the body ('' for none). */
  readonly bodyHash: string;
}

/** The bytes a read signature covers: the context line, then method, audience, target, timestamp, nonce and body hash, one per line. */
export function readSigningMessage(request: ReadRequest): Uint8Array {
  return utf8(`${READ_AUTH_CONTEXT}${request.method.toUpperCase()}\n${request.audience}\n${request.target}\n${request.timestampMs}\n${request.nonce}\n${request.bodyHash}`);
}

/** SHA-256 hex of a request body, or '' for none. */
export function readBodyHash(body: Uint8Array | string | undefined): string {
  if (body === undefined) return '';
  const bytes = typeof body === 'string' ? utf8(body) : body;
  return bytes.length === 0 ? '' : sha256Hex(bytes);
}

/**
 * The installation id a read is signed for: the statement hash of the
 * installation's genesis (fixed for the ledger's whole life, different for
 * every installation, whatever its origin name). Take it from the pinned
 * trust document (`installationOf(trust.genesis)`) or `.ledger/genesis.json`.
 */
export function installationOf(genesis: Envelope): string {
  return statementHash(genesis.statement);
}

const HEX64 = /^[0-9a-f]{64}$/;

/**
 * The `authorization` header value of one signed read: `signer` signs
 * `method`, `options.audience`, `pathWithQuery` (e.g.
 * `/v1/pending?limit=10`), the time now, a fresh nonce and the body's hash.
 */
export function signRead(signer: Signer, method: string, pathWithQuery: string, options: { readonly audience: string; readonly body?: Uint8Array | string; readonly ed25519?: Ed25519Backend; readonly nowMs?: number; readonly nonce?: string }): string {
  if (!HEX64.test(options.audience)) throw new OperationalError(OperationalCode.BAD_ARGUMENT, 'a read audience is the installation id: 64 lower-case hex (installationOf)');
  const timestampMs = options.nowMs ?? Date.now();
  const nonce = options.nonce ?? toHex(globalThis.crypto.getRandomValues(new Uint8Array(16)));
  const message = readSigningMessage({ method, audience: options.audience, target: pathWithQuery, timestampMs, nonce, bodyHash: readBodyHash(options.body) });
  const signature = toBase64((options.ed25519 ?? nodeEd25519).sign(signer.seed, message));
  return `${READ_AUTH_SCHEME} keyId=${signer.keyId},aud=${options.audience},ts=${timestampMs},nonce=${nonce},sig=${signature}`;
}

/**
 * One exact shape, nothing else: fields in this order, lower-case hex, a
 * timestamp without leading zeros, and the one canonical base64 text of a
 * 64-byte signature (the last character before `==` carries 2 bits and 4 zero
 * bits: A, Q, g or w). So one signed read has one header text.
 */
const HEADER = /^Ledger-Ed25519 keyId=([0-9a-f]{64}),aud=([0-9a-f]{64}),ts=(0|[1-9]\d{0,14}),nonce=([0-9a-f]{32}),sig=([A-Za-z0-9+/]{85}[AQgw]==)$/;

/** Parses an authorization header (untrusted): its fields, or undefined when it is not a read authorization. */
export function parseReadAuthorization(header: string): ReadAuthorization | undefined {
  const m = HEADER.exec(header);
  if (m === null) return undefined;
  return { keyId: m[1] as string, audience: m[2] as string, timestampMs: Number(m[3]), nonce: m[4] as string, signature: m[5] as string };
}

/**
 * The installation id an API serves (`GET /v1/installation`, unsigned).
 * Trust on first use: prefer the id of a pinned trust document
 * ({@link installationOf}); this is for callers that pinned nothing.
 */
export async function fetchInstallation(baseUrl: string, options: { readonly fetch?: typeof fetch; readonly requestTimeoutMs?: number } = {}): Promise<string> {
  const body = await getPublic(baseUrl, '/v1/installation', options);
  const installation = (body as { installation?: unknown } | null)?.installation;
  if (typeof installation !== 'string' || !HEX64.test(installation)) throw new OperationalError(OperationalCode.INTERNAL, 'GET /v1/installation: the answer names no installation id', { retryable: true });
  return installation;
}

/**
 * A fetch that signs every request it sends as `signer` (the path with its
 * query, the method and the body when it is a string or bytes): what the SDK
 * and the CLI read the API with. The audience is `options.audience` (from a
 * pinned trust document or the installation's genesis); without it, each
 * API origin's own id is asked once ({@link fetchInstallation}) and kept.
 */
export function signedFetch(signer: Signer, options: { readonly fetch?: typeof fetch; readonly ed25519?: Ed25519Backend; readonly audience?: string } = {}): typeof fetch {
  const inner = options.fetch ?? fetch;
  const discovered = new Map<string, Promise<string>>();
  const audienceFor = (origin: string): Promise<string> => {
    if (options.audience !== undefined) return Promise.resolve(options.audience);
    let known = discovered.get(origin);
    if (known === undefined) {
      known = fetchInstallation(origin, { fetch: inner });
      discovered.set(origin, known);
      // A failed discovery is asked again next time.
      known.catch(() => discovered.delete(origin));
    }
    return known;
  };
  return async (input, init = {}) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    const method = init.method ?? (typeof input === 'object' && 'method' in input ? input.method : 'GET');
    const body = typeof init.body === 'string' || init.body instanceof Uint8Array ? init.body : undefined;
    const headers = new Headers(init.headers);
    const audience = await audienceFor(url.origin);
    headers.set('authorization', signRead(signer, method, `${url.pathname}${url.search}`, { audience, ...(body === undefined ? {} : { body }), ...(options.ed25519 === undefined ? {} : { ed25519: options.ed25519 }) }));
    return inner(input, { ...init, headers });
  };
}
