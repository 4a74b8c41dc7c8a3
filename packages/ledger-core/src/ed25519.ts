/**
 * Ed25519 (RFC 8032, "pure" Ed25519, no context, no prehash) for the ledger.
 *
 * Everything in the ledger is signed with Ed25519, and every party that checks
 * a signature (the service, the offline verifier, an auditor's browser) must
 * reach the same verdict on the same bytes. RFC 8032 does not give one verdict:
 * section 5.1.7 allows both a cofactored and a cofactorless group equation, and
 * implementations differ on non-canonical encodings and on the range of S
 * (see "Taming the many EdDSAs", Chalkias, Garillot, Nikolaenko, SSR 2020,
 * IACR ePrint 2020/1244). So the system fixes ONE rule, and both backends in
 * this module implement exactly that rule.
 *
 * ## The system verdict rule
 *
 * It is the cofactorless check as OpenSSL 3 (`ossl_ed25519_verify`) performs it.
 * Given a 32-byte public key A_enc, a message M and a 64-byte signature R_enc || S_enc:
 *
 * 1. S = little-endian integer of S_enc; reject unless S < L (RFC 8032 5.1.7
 *    step 1, and section 8.4: without it signatures are malleable).
 * 2. Decode A_enc (RFC 8032 5.1.3) LENIENTLY, as OpenSSL does: the y
 *    coordinate is the low 255 bits taken mod p, so an encoding with y >= p is
 *    accepted as y - p, and x = 0 with the sign bit set is accepted as x = 0.
 *    Reject only if no x satisfies the curve equation.
 * 3. k = SHA-512(R_enc || A_enc || M) mod L, hashing the bytes exactly as
 *    received (a non-canonical A_enc is hashed as is, not re-encoded).
 *    Reducing k mod L matters for keys with a torsion component: RFC 8032
 *    5.1.7 step 2 uses k unreduced, OpenSSL reduces it first.
 * 4. R' = [S]B - [k]A (the cofactorless equation of RFC 8032 5.1.7 step 3,
 *    the variant the RFC calls "sufficient, but not required").
 * 5. Accept iff the canonical encoding of R' (RFC 8032 5.1.2) equals R_enc
 *    byte for byte. R_enc is never decoded, so a non-canonical or undecodable
 *    R_enc is simply never equal and the signature is rejected.
 *
 * Small-order and mixed-order public keys are NOT rejected by the verdict rule
 * (OpenSSL does not reject them). They are rejected once, when a key is
 * registered, by {@link checkPublicKey}; keeping the check out of the verdict
 * keeps the verdict identical to OpenSSL's.
 *
 * @module
 */
import * as ed from '@noble/ed25519';
import { sha512 } from '@noble/hashes/sha2.js';
import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import {
  createPrivateKey,
  createPublicKey,
  randomFillSync,
  sign as nodeSign,
  timingSafeEqual,
  verify as nodeVerify,
  type KeyObject,
} from 'node:crypto';

/**
 * One implementation of Ed25519 for the ledger. Both implementations in this
 * module sign byte-identically (Ed25519 signing is deterministic, RFC 8032
 * 5.1.6) and verify with the same rule (see the module documentation).
 */
export interface Ed25519Backend {
  /** Which implementation this is: `node` (OpenSSL through node:crypto) or `noble` (@noble/ed25519, pure JS). */
  readonly name: 'node' | 'noble';
  /**
   * The 32-byte public key of a 32-byte secret seed (RFC 8032 5.1.5).
   * @throws LedgerError SCHEMA_INVALID when `seed` is not a 32-byte Uint8Array.
   */
  publicKeyFromSeed(seed: Uint8Array): Uint8Array;
  /**
   * The 64-byte signature of `message` under `seed` (RFC 8032 5.1.6, pure Ed25519).
   * @throws LedgerError SCHEMA_INVALID when `seed` is not a 32-byte Uint8Array or `message` is not a Uint8Array.
   */
  sign(seed: Uint8Array, message: Uint8Array): Uint8Array;
  /**
   * THE system verdict rule (module documentation). Never throws: a wrong
   * length, a non-Uint8Array argument, an undecodable key or any other garbage
   * yields `false`.
   */
  verify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean;
}

/** Result of {@link checkPublicKey}: `ok`, or the first check that failed. */
export type PublicKeyCheck =
  | { ok: true }
  | { ok: false; reason: 'length' | 'non_canonical' | 'not_on_curve' | 'small_order' | 'not_torsion_free' };

// ---------------------------------------------------------------------------
// Constants and helpers shared by both backends.

/** The field prime p = 2^255 - 19 (RFC 8032 5.1). */
const P = (1n << 255n) - 19n;
/** The group order L = 2^252 + 27742317777372353535851937790883648493 (RFC 8032 5.1). */
const L = (1n << 252n) + 27742317777372353535851937790883648493n;
/** Mask of the low 255 bits: the y coordinate of an encoded point (RFC 8032 5.1.2). */
const MASK_255 = (1n << 255n) - 1n;

const PUBLIC_KEY_LENGTH = 32;
const SIGNATURE_LENGTH = 64;
const SEED_LENGTH = 32;

// Noble's synchronous API looks its SHA-512 up at call time (`ed.hashes.sha512`)
// and throws when it is unset. Set it once, without replacing a hash another
// module may already have installed (noble checks every digest is 64 bytes).
if (ed.hashes.sha512 === undefined) ed.hashes.sha512 = sha512;

function isBytes(value: unknown): value is Uint8Array {
  return value instanceof Uint8Array;
}

function requireSeed(seed: unknown): asserts seed is Uint8Array {
  if (!isBytes(seed) || seed.length !== SEED_LENGTH) {
    throw new LedgerError(ReasonCode.SCHEMA_INVALID, `an Ed25519 seed must be ${SEED_LENGTH} bytes`);
  }
}

function requireMessage(message: unknown): asserts message is Uint8Array {
  if (!isBytes(message)) throw new LedgerError(ReasonCode.SCHEMA_INVALID, 'an Ed25519 message must be a Uint8Array');
}

/** Little-endian bytes to an unsigned integer (RFC 8032 5.1.2 and 5.1.7 read integers little-endian). */
function littleEndianToBigInt(bytes: Uint8Array): bigint {
  let hex = '';
  for (let i = bytes.length - 1; i >= 0; i--) hex += (bytes[i] as number).toString(16).padStart(2, '0');
  return hex === '' ? 0n : BigInt('0x' + hex);
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] as number) ^ (b[i] as number);
  return diff === 0;
}

/** Cheap shape test every verify starts with, identical in both backends so they fail alike. */
function wellFormed(publicKey: unknown, message: unknown, signature: unknown): boolean {
  return (
    isBytes(publicKey) &&
    publicKey.length === PUBLIC_KEY_LENGTH &&
    isBytes(message) &&
    isBytes(signature) &&
    signature.length === SIGNATURE_LENGTH
  );
}

// ---------------------------------------------------------------------------
// node:crypto (OpenSSL) backend.

/**
 * DER prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410 section 4):
 * SEQUENCE { AlgorithmIdentifier id-Ed25519, BIT STRING (0 unused bits, 32-byte key) }.
 */
const SPKI_PREFIX = Uint8Array.from([0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00]);
/** DER prefix of an Ed25519 PKCS#8 OneAsymmetricKey (RFC 8410 section 7); the 32-byte seed follows. */
const PKCS8_PREFIX = Uint8Array.from([
  0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
]);

/**
 * KeyObjects by raw public key. Building a KeyObject parses DER and allocates
 * an OpenSSL EVP_PKEY, which costs more than the verify itself (building one
 * per call more than halves the verify rate); the ledger verifies many
 * signatures by few keys. Bounded so that a stream of
 * distinct (possibly hostile) keys cannot grow memory: when full, the oldest
 * inserted entry goes (first in, first out; no bookkeeping on hits).
 */
const KEY_CACHE_LIMIT = 4096;
const keyCache = new Map<string, KeyObject>();

function cachedPublicKey(publicKey: Uint8Array): KeyObject {
  // latin1 maps each byte to one UTF-16 unit: a cheap, collision-free 32-char key.
  const id = Buffer.from(publicKey.buffer, publicKey.byteOffset, PUBLIC_KEY_LENGTH).toString('latin1');
  let key = keyCache.get(id);
  if (key === undefined) {
    const der = new Uint8Array(SPKI_PREFIX.length + PUBLIC_KEY_LENGTH);
    der.set(SPKI_PREFIX, 0);
    der.set(publicKey, SPKI_PREFIX.length);
    key = createPublicKey({ key: Buffer.from(der.buffer), format: 'der', type: 'spki' });
    if (keyCache.size >= KEY_CACHE_LIMIT) {
      const oldest = keyCache.keys().next();
      if (oldest.done !== true) keyCache.delete(oldest.value);
    }
    keyCache.set(id, key);
  }
  return key;
}

/**
 * Private KeyObjects by the seed array that made them. Importing a private
 * key computes its public key (a scalar multiplication), which costs more
 * than the signature itself. A WeakMap keyed by the caller's own seed array
 * keeps nothing alive that the caller dropped; a copy of the seed guards
 * against the array being changed in place.
 */
const privateKeyCache = new WeakMap<Uint8Array, { seed: Uint8Array; key: KeyObject }>();

function cachedPrivateKey(seed: Uint8Array): KeyObject {
  const hit = privateKeyCache.get(seed);
  if (hit !== undefined && timingSafeEqual(hit.seed, seed)) return hit.key;
  const key = privateKeyFromSeed(seed);
  privateKeyCache.set(seed, { seed: Uint8Array.from(seed), key });
  return key;
}

function privateKeyFromSeed(seed: Uint8Array): KeyObject {
  const der = new Uint8Array(PKCS8_PREFIX.length + SEED_LENGTH);
  der.set(PKCS8_PREFIX, 0);
  der.set(seed, PKCS8_PREFIX.length);
  const key = createPrivateKey({ key: Buffer.from(der.buffer), format: 'der', type: 'pkcs8' });
  der.fill(0);
  return key;
}

/**
 * The fast path: Ed25519 from node:crypto, which is OpenSSL. OpenSSL's
 * `ossl_ed25519_verify` IS the system verdict rule, so `verify` only adds the
 * length pre-checks and a bounded KeyObject cache.
 */
export const nodeEd25519: Ed25519Backend = Object.freeze({
  name: 'node' as const,

  publicKeyFromSeed(seed: Uint8Array): Uint8Array {
    requireSeed(seed);
    const spki = createPublicKey(privateKeyFromSeed(seed)).export({ format: 'der', type: 'spki' });
    return new Uint8Array(spki.subarray(SPKI_PREFIX.length));
  },

  sign(seed: Uint8Array, message: Uint8Array): Uint8Array {
    requireSeed(seed);
    requireMessage(message);
    // Algorithm `null`: Ed25519 hashes internally (RFC 8032 5.1.6); no digest is chosen.
    return new Uint8Array(nodeSign(null, message, cachedPrivateKey(seed)));
  },

  verify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
    // OpenSSL returns false for a signature of the wrong length, but a key of
    // the wrong length fails in createPublicKey with an exception, and
    // non-Uint8Array arguments throw in node:crypto's argument checks.
    // Checking first keeps "never throws" cheap and explicit.
    if (!wellFormed(publicKey, message, signature)) return false;
    try {
      return nodeVerify(null, message, cachedPublicKey(publicKey), signature);
    } catch {
      return false;
    }
  },
});

// ---------------------------------------------------------------------------
// @noble/ed25519 backend.

/**
 * The system verdict rule on noble's Point API. noble's own `verify` is NOT
 * used: in both of its modes it checks the cofactored equation
 * [8][S]B = [8]R + [8][k]A (RFC 8032 5.1.7 step 3, first form) and so accepts
 * signatures OpenSSL rejects (ed25519-speccheck vectors 4 and 5). Its default
 * ZIP-215 mode also accepts non-canonical R (speccheck 9 and 10, Wycheproof
 * tcId 151); its `zip215: false` mode refuses small-order keys that OpenSSL
 * accepts (speccheck 0, 1 and 11); and it throws on wrong lengths.
 */
function verifyByRule(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  const encodedR = signature.subarray(0, 32);
  // Step 1: S < L (RFC 8032 5.1.7 step 1; section 8.4).
  const S = littleEndianToBigInt(signature.subarray(32, 64));
  if (S >= L) return false;
  // Step 2: decode A as OpenSSL does. noble's `zip215 = true` decoding is the
  // lenient one: y is taken from the low 255 bits without requiring y < p
  // (arithmetic then reduces it mod p), and x = 0 with the sign bit set is
  // kept as x = 0. It still throws when y gives no point on the curve.
  let A: ed.Point;
  try {
    A = ed.Point.fromBytes(publicKey, true);
  } catch {
    return false;
  }
  // Step 3: k = SHA-512(R || A || M) mod L over the bytes as received.
  const digest = new Uint8Array(64 + message.length);
  digest.set(encodedR, 0);
  digest.set(publicKey, 32);
  digest.set(message, 64);
  const k = littleEndianToBigInt(sha512(digest)) % L;
  // Step 4: R' = [S]B - [k]A. Unsafe (variable-time) multiplication is fine:
  // every input is public. It also permits the scalar 0.
  const recomputed = ed.Point.BASE.multiply(S, false).subtract(A.multiply(k, false));
  // Step 5: canonical encoding of R' against the received R bytes.
  return equalBytes(recomputed.toBytes(), encodedR);
}

/**
 * The portable path: pure JavaScript (@noble/ed25519 and @noble/hashes), for
 * browsers and runtimes without node:crypto. Signing uses noble's RFC 8032
 * implementation; verifying uses the system verdict rule, not noble's `verify`.
 */
export const nobleEd25519: Ed25519Backend = Object.freeze({
  name: 'noble' as const,

  publicKeyFromSeed(seed: Uint8Array): Uint8Array {
    requireSeed(seed);
    return Uint8Array.from(ed.getPublicKey(seed));
  },

  sign(seed: Uint8Array, message: Uint8Array): Uint8Array {
    requireSeed(seed);
    requireMessage(message);
    return Uint8Array.from(ed.sign(message, seed));
  },

  verify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
    if (!wellFormed(publicKey, message, signature)) return false;
    try {
      return verifyByRule(publicKey, message, signature);
    } catch {
      return false;
    }
  },
});

// ---------------------------------------------------------------------------
// Registration-time key check.

const KEY_OK: PublicKeyCheck = Object.freeze({ ok: true });
function keyRefused(reason: Exclude<PublicKeyCheck, { ok: true }>['reason']): PublicKeyCheck {
  return Object.freeze({ ok: false, reason });
}

/**
 * The check a public key must pass before it may be registered. The verdict
 * rule deliberately accepts keys that no honest signer produces (OpenSSL does),
 * so the ledger refuses them at the door instead. Checks run in this order and
 * the first failure is reported:
 *
 * - `length`: not a 32-byte Uint8Array.
 * - `non_canonical`: y >= p, or x = 0 with the sign bit set. RFC 8032 5.1.3
 *   says decoding fails for both; OpenSSL accepts them, and a second encoding
 *   of the same key would give the same signer two key ids.
 * - `not_on_curve`: no x satisfies the curve equation for this y (RFC 8032 5.1.3 step 2).
 * - `small_order`: [8]A is the identity, i.e. A is one of the 8 torsion
 *   points. Under such a key one signature can verify for many messages (for
 *   the identity, any [r]B || r verifies for every message), so it proves
 *   nothing about who signed what ("Taming the many EdDSAs", section 3).
 * - `not_torsion_free`: [L]A is not the identity: A has a small-order
 *   component. Honest keys are [s]B and always torsion-free; mixed-order keys
 *   are where cofactored and cofactorless verifiers disagree.
 *
 * Never throws.
 */
export function checkPublicKey(publicKey: Uint8Array): PublicKeyCheck {
  if (!isBytes(publicKey) || publicKey.length !== PUBLIC_KEY_LENGTH) return keyRefused('length');
  if ((littleEndianToBigInt(publicKey) & MASK_255) >= P) return keyRefused('non_canonical');
  let A: ed.Point;
  try {
    // Strict RFC 8032 5.1.3 decoding: also refuses x = 0 with the sign bit set.
    A = ed.Point.fromBytes(publicKey, false);
  } catch {
    // Tell the two strict failures apart: if the lenient decoding works, only
    // the sign of a zero x was wrong, which is an encoding problem.
    try {
      ed.Point.fromBytes(publicKey, true);
      return keyRefused('non_canonical');
    } catch {
      return keyRefused('not_on_curve');
    }
  }
  try {
    if (A.isSmallOrder()) return keyRefused('small_order');
    if (!A.isTorsionFree()) return keyRefused('not_torsion_free');
  } catch {
    return keyRefused('not_on_curve');
  }
  return KEY_OK;
}

/**
 * 32 fresh random bytes to use as an Ed25519 secret seed (RFC 8032 5.1.5:
 * "32 octets (256 bits ...) of cryptographically secure random data"), from
 * node:crypto's CSPRNG (the same source as WebCrypto's getRandomValues).
 */
export function generateSeed(): Uint8Array {
  return randomFillSync(new Uint8Array(SEED_LENGTH));
}
