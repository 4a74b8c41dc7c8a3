import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import { STATEMENT_SIGNING_CONTEXT, type Ed25519Backend, type Entry } from '@agent-ledger/core';

/** Bytes every signed message starts with (SPEC.md section 4). */
const CONTEXT = Buffer.from(STATEMENT_SIGNING_CONTEXT, 'utf8');
/** Capacity kept between batches; a batch of larger statements grows the buffer for itself only. */
const KEPT_BYTES = 2 << 20;
/** Public keys kept decoded, by key id; bounded like node:crypto's KeyObject cache in ledger-core. */
const KEY_CACHE_LIMIT = 4096;

const publicKeys = new Map<string, Uint8Array>();

/**
 * Raw bytes of a key id already checked against the `KeyId` schema (64
 * lowercase hex characters), so the decode cannot fail or be ambiguous.
 */
function publicKeyOf(keyId: string): Uint8Array {
  let key = publicKeys.get(keyId);
  if (key === undefined) {
    key = new Uint8Array(Buffer.from(keyId, 'hex'));
    if (publicKeys.size >= KEY_CACHE_LIMIT) {
      const oldest = publicKeys.keys().next();
      if (oldest.done !== true) publicKeys.delete(oldest.value);
    }
    publicKeys.set(keyId, key);
  }
  return key;
}

/** Characters that may end the data of a canonical base64 of 64 bytes: their low 4 bits are 0. */
const LAST_DATA_CHARACTERS = new Set(['A', 'Q', 'g', 'w']);
const signatureScratch = Buffer.alloc(64);

/**
 * The 64 bytes of a signature the `SignatureB64` schema accepted (86 base64
 * characters, then `==`), in a buffer reused by the next call. Refused as
 * ledger-core's `fromBase64(sig, 64)` refuses it: only the canonical
 * encoding (RFC 4648 section 4: unused bits zero), which for such a text
 * means its 86th character carries 2 bits of data and 4 zero bits.
 */
function decodeSignature(sig: string): Uint8Array {
  if (!LAST_DATA_CHARACTERS.has(sig.charAt(85))) throw new LedgerError(ReasonCode.SCHEMA_INVALID, 'not the canonical base64 of 64 byte value');
  signatureScratch.write(sig, 0, 64, 'base64');
  return signatureScratch;
}

/**
 * Checks every signature against the key its `keyId` names and returns the
 * key ids that signed: ledger-core's `verifyEnvelopeSignatures` (SCHEMA_INVALID
 * when one key signs twice, INVALID_SIGNATURE at the first bad signature, in
 * order), given the signed message instead of the statement's canonical text.
 * For signatures the `BundleEntrySchema` accepted (key ids and signatures in
 * their schema's form).
 */
export function verifySignatures(signatures: Entry['envelope']['signatures'], message: Uint8Array, ed25519: Ed25519Backend): string[] {
  if (signatures.length === 1) {
    const { keyId, sig } = signatures[0] as { keyId: string; sig: string };
    if (!ed25519.verify(publicKeyOf(keyId), message, decodeSignature(sig))) {
      throw new LedgerError(ReasonCode.INVALID_SIGNATURE, `signature by key ${keyId.slice(0, 16)} does not verify`);
    }
    return [keyId];
  }
  const seen = new Set<string>();
  for (const { keyId, sig } of signatures) {
    if (seen.has(keyId)) throw new LedgerError(ReasonCode.SCHEMA_INVALID, `key ${keyId.slice(0, 16)} signs twice`);
    seen.add(keyId);
    if (!ed25519.verify(publicKeyOf(keyId), message, decodeSignature(sig))) {
      throw new LedgerError(ReasonCode.INVALID_SIGNATURE, `signature by key ${keyId.slice(0, 16)} does not verify`);
    }
  }
  return [...seen];
}

/**
 * The signed messages (SPEC.md section 4: the context, then the statement's
 * canonical bytes) of the entries of a batch whose signatures are still to be
 * verified, back to back in one buffer kept from batch to batch. The
 * statement bytes are encoded once, here, and the entry's hashes are taken
 * from them too.
 *
 * Why the signatures wait: Ed25519 verification and the JavaScript around it
 * (parsing, canonical JSON, hashing, encoding results) evict each other from
 * the CPU caches when they alternate line by line; verifying a whole batch's
 * signatures in a row measured about a tenth faster per line.
 */
export class SignedMessages {
  #bytes = Buffer.allocUnsafeSlow(256 * 1024);
  #end = 0;
  readonly #starts: number[] = [];
  readonly #ends: number[] = [];

  /** Bytes held. */
  get byteLength(): number {
    return this.#end;
  }

  /** Adds the message of a statement, given its canonical text (RFC 8785); returns its number. */
  add(statementCanonical: string): number {
    // A UTF-16 code unit is at most 3 bytes of UTF-8.
    const room = CONTEXT.length + 3 * statementCanonical.length;
    if (this.#end + room > this.#bytes.length) {
      const grown = Buffer.allocUnsafeSlow(Math.max(this.#end + room, 2 * this.#bytes.length));
      this.#bytes.copy(grown, 0, 0, this.#end);
      this.#bytes = grown;
    }
    const start = this.#end;
    CONTEXT.copy(this.#bytes, start);
    this.#end = start + CONTEXT.length + this.#bytes.write(statementCanonical, start + CONTEXT.length, 'utf8');
    this.#starts.push(start);
    this.#ends.push(this.#end);
    return this.#starts.length - 1;
  }

  /** The signed message number `n`. Valid until {@link clear}. */
  message(n: number): Buffer {
    return this.#bytes.subarray(this.#starts[n], this.#ends[n]);
  }

  /** The statement's canonical bytes in message number `n`. Valid until {@link clear}. */
  statement(n: number): Buffer {
    return this.#bytes.subarray((this.#starts[n] as number) + CONTEXT.length, this.#ends[n]);
  }

  /** Forgets every message (numbers start again at 0). */
  clear(): void {
    this.#end = 0;
    this.#starts.length = 0;
    this.#ends.length = 0;
    if (this.#bytes.length > KEPT_BYTES) this.#bytes = Buffer.allocUnsafeSlow(256 * 1024);
  }
}
