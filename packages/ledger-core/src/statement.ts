import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import { canonicalJson } from './jcs.js';
import type { Ed25519Backend } from './ed25519.js';
import { fromBase64, fromHex, toBase64, toHex, utf8 } from './encoding.js';
import { sha256Hex } from './hash.js';
import type { BodyOf, Envelope, Statement, StatementType } from './statements.js';
import { uuidv7 } from './uuid.js';

/**
 * Domain-separation prefix of every statement signature (SPEC.md section 4):
 * a signature made for a statement can never be mistaken for one over a
 * checkpoint note or any other message the system signs.
 */
export const STATEMENT_SIGNING_CONTEXT = 'agent-ledger/statement/v1\n';
const contextBytes = utf8(STATEMENT_SIGNING_CONTEXT);

/** A private signing key with the identity it speaks for. */
export interface Signer {
  readonly principal: string;
  /** Raw 32-byte Ed25519 public key as lowercase hex. */
  readonly keyId: string;
  /** 32-byte Ed25519 seed (RFC 8032 private key). */
  readonly seed: Uint8Array;
}

/** The exact bytes an author signs: the context prefix, then the statement's JCS bytes. */
export function signingMessage(statementCanonical: string): Uint8Array {
  const body = utf8(statementCanonical);
  const message = new Uint8Array(contextBytes.length + body.length);
  message.set(contextBytes, 0);
  message.set(body, contextBytes.length);
  return message;
}

/** SHA-256 (hex) of a statement's canonical bytes: how other statements refer to it. */
export function statementHash(statement: Statement): string {
  return sha256Hex(canonicalJson(statement));
}

/** Builds an unsigned statement with a fresh UUIDv7 whose time equals `issuedAt`. */
export function createStatement<T extends StatementType>(
  type: T,
  body: BodyOf<T>,
  author: { principal: string; keyId: string },
  issuedAt: Date = new Date(),
): Statement<T> {
  const millis = issuedAt.getTime();
  // Only the public identity is copied: a Signer passed here must not leak its seed into the statement.
  return { v: 1, id: uuidv7(millis), type, issuedAt: new Date(millis).toISOString(), author: { principal: author.principal, keyId: author.keyId }, body };
}

/**
 * Signs a statement with one or more keys (genesis takes several root keys;
 * every other statement takes exactly its author's key).
 */
export function signStatement<T extends StatementType>(
  statement: Statement<T>,
  signers: readonly Signer[],
  ed25519: Ed25519Backend,
): Envelope<T> {
  return signCanonicalStatement(statement, canonicalJson(statement), signers, ed25519);
}

/** {@link signStatement} for a caller that already holds `canonical`, the statement's canonical JSON (JCS). */
export function signCanonicalStatement<T extends StatementType>(
  statement: Statement<T>,
  canonical: string,
  signers: readonly Signer[],
  ed25519: Ed25519Backend,
): Envelope<T> {
  const message = signingMessage(canonical);
  return {
    statement,
    signatures: signers.map((s) => ({ keyId: s.keyId, sig: toBase64(ed25519.sign(s.seed, message)) })),
  };
}

/**
 * Checks every signature of an envelope against the key its `keyId` names and
 * returns the key ids that signed. Throws INVALID_SIGNATURE on the first bad
 * signature, and SCHEMA_INVALID when one key signs twice.
 */
export function verifyEnvelopeSignatures(
  envelope: Envelope,
  statementCanonical: string,
  ed25519: Ed25519Backend,
): string[] {
  const message = signingMessage(statementCanonical);
  const seen = new Set<string>();
  for (const { keyId, sig } of envelope.signatures) {
    if (seen.has(keyId)) throw new LedgerError(ReasonCode.SCHEMA_INVALID, `key ${keyId.slice(0, 16)} signs twice`);
    seen.add(keyId);
    const ok = ed25519.verify(fromHex(keyId, 32), message, fromBase64(sig, 64));
    if (!ok) throw new LedgerError(ReasonCode.INVALID_SIGNATURE, `signature by key ${keyId.slice(0, 16)} does not verify`);
  }
  return [...seen];
}

/** Public key (hex key id) of a seed. */
export function keyIdOf(seed: Uint8Array, ed25519: Ed25519Backend): string {
  return toHex(ed25519.publicKeyFromSeed(seed));
}
