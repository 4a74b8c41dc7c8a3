import { nodeEd25519, sha256Hex, toBase64, toHex, utf8, type Ed25519Backend, type Signer } from '@agent-ledger/core';

/**
 * Signed reads of the ledger's API. A principal proves it holds its
 * registered Ed25519 key by signing each request:
 *
 *   authorization: Ledger-Ed25519 keyId=<64 hex>,ts=<unix ms>,nonce=<32 hex>,sig=<base64>
 *
 * over {@link readSigningMessage}: a context line of its own (so a read
 * signature is never a statement signature), the method, the path with its
 * query exactly as sent, the timestamp, the nonce and the SHA-256 of the body
 * (empty for none). The API checks the key against the authority state
 * (registered, not revoked), the timestamp against a small window and the
 * nonce against the signatures it has seen within it (a replay is refused).
 */
export const READ_AUTH_SCHEME = 'Ledger-Ed25519';

/** The context line every read signature starts with. */
export const READ_AUTH_CONTEXT = 'agent-ledger/read/v1\n';

/** The fields of a read authorization header. */
export interface ReadAuthorization {
  readonly keyId: string;
  readonly timestampMs: number;
  readonly nonce: string;
  readonly signature: string;
}

/** The bytes a read signature covers. */
export function readSigningMessage(method: string, pathWithQuery: string, timestampMs: number, nonce: string, bodyHash: string): Uint8Array {
  return utf8(`${READ_AUTH_CONTEXT}${method.toUpperCase()}\n${pathWithQuery}\n${timestampMs}\n${nonce}\n${bodyHash}`);
}

/** SHA-256 hex of a request body, or '' for none. */
export function readBodyHash(body: Uint8Array | string | undefined): string {
  if (body === undefined) return '';
  const bytes = typeof body === 'string' ? utf8(body) : body;
  return bytes.length === 0 ? '' : sha256Hex(bytes);
}

/**
 * The `authorization` header value of one signed read: `signer` signs
 * `method`, `pathWithQuery` (e.g. `/v1/pending?limit=10`), the time now, a
 * fresh nonce and the body's hash.
 */
export function signRead(signer: Signer, method: string, pathWithQuery: string, options: { readonly body?: Uint8Array | string; readonly ed25519?: Ed25519Backend; readonly nowMs?: number } = {}): string {
  const timestampMs = options.nowMs ?? Date.now();
  const nonce = toHex(globalThis.crypto.getRandomValues(new Uint8Array(16)));
  const message = readSigningMessage(method, pathWithQuery, timestampMs, nonce, readBodyHash(options.body));
  const signature = toBase64((options.ed25519 ?? nodeEd25519).sign(signer.seed, message));
  return `${READ_AUTH_SCHEME} keyId=${signer.keyId},ts=${timestampMs},nonce=${nonce},sig=${signature}`;
}

const HEADER = /^Ledger-Ed25519 keyId=([0-9a-f]{64}),ts=(\d{1,15}),nonce=([0-9a-f]{32}),sig=([A-Za-z0-9+/]{86}==)$/;

/** Parses an authorization header (untrusted): its fields, or undefined when it is not a read authorization. */
export function parseReadAuthorization(header: string): ReadAuthorization | undefined {
  const m = HEADER.exec(header.trim());
  if (m === null) return undefined;
  return { keyId: m[1] as string, timestampMs: Number(m[2]), nonce: m[3] as string, signature: m[4] as string };
}

/**
 * A fetch that signs every request it sends as `signer` (the path with its
 * query, the method and the body when it is a string or bytes): what the SDK
 * and the CLI read the API with.
 */
export function signedFetch(signer: Signer, options: { readonly fetch?: typeof fetch; readonly ed25519?: Ed25519Backend } = {}): typeof fetch {
  const inner = options.fetch ?? fetch;
  return (input, init = {}) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    const method = init.method ?? (typeof input === 'object' && 'method' in input ? input.method : 'GET');
    const body = typeof init.body === 'string' || init.body instanceof Uint8Array ? init.body : undefined;
    const headers = new Headers(init.headers);
    headers.set('authorization', signRead(signer, method, `${url.pathname}${url.search}`, { ...(body === undefined ? {} : { body }), ...(options.ed25519 === undefined ? {} : { ed25519: options.ed25519 }) }));
    return inner(input, { ...init, headers });
  };
}
