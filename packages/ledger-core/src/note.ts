/**
 * C2SP signed notes (https://c2sp.org/signed-note), Ed25519 signature type
 * 0x01 only, byte-compatible with golang.org/x/mod/sumdb/note.
 *
 *     <text, ending in "\n">
 *     <blank line>
 *     — <key name> base64(4-byte key ID || signature)\n   (one or more)
 *
 * The Ed25519 primitive is injected through {@link NoteSigner.sign} and
 * {@link NoteVerifier.verify}, so this module carries no key material and no
 * crypto backend of its own (SHA-256 for key IDs comes from node:crypto).
 *
 * Error codes: a malformed, unsigned or badly signed note is
 * CHECKPOINT_INVALID; bad arguments from the caller (invalid key name, wrong
 * key length, text not ending in a newline, no signers) are SCHEMA_INVALID.
 */
import { createHash } from 'node:crypto';
import { LedgerError, ReasonCode } from '@agent-ledger/refusals';

/** signed-note signature type byte for Ed25519. */
const SIG_TYPE_ED25519 = 0x01;
const ED25519_PUBLIC_KEY_SIZE = 32;
const ED25519_SIGNATURE_SIZE = 64;
const KEY_ID_SIZE = 4;
/** Largest note openNote will read, in UTF-8 bytes. */
const MAX_NOTE_BYTES = 1024 * 1024;
/**
 * Most signature lines openNote will read. The spec says verifiers MUST accept
 * at least 16; 100 matches golang.org/x/mod/sumdb/note.
 */
const MAX_SIGNATURES = 100;
/** U+2014 EM DASH, U+0020 SPACE: the start of every signature line. */
const SIG_PREFIX = '\u2014 ';

// ASCII controls other than newline (signed-note: "MUST NOT contain any ASCII
// control characters (those below U+0020) other than newline").
const CONTROL_EXCEPT_NEWLINE = /[\u0000-\u0009\u000b-\u001f]/;
// Unpaired UTF-16 surrogates cannot be encoded as UTF-8 (signed-note: "MUST be valid UTF-8").
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
// Unicode spaces as Go's unicode.IsSpace sees them: JS \s plus U+0085 (and
// U+FEFF, which \s includes and Go does not; rejecting it is stricter).
const UNICODE_SPACE = /[\s\u0085]/;
const BASE64_SHAPE = /^[A-Za-z0-9+/]*={0,2}$/;

/** A party that signs notes with one Ed25519 key. */
export interface NoteSigner {
  /** Key name, e.g. the log origin "example.com/log42". */
  readonly name: string;
  /** 32-byte Ed25519 public key (used to derive the key ID). */
  readonly publicKey: Uint8Array;
  /** Returns the 64-byte Ed25519 signature of `message` (the note text as UTF-8). */
  sign(message: Uint8Array): Uint8Array;
}

/** A trusted Ed25519 key that notes are checked against. */
export interface NoteVerifier {
  readonly name: string;
  /** 32-byte Ed25519 public key. */
  readonly publicKey: Uint8Array;
  /** Ed25519 verification, e.g. `nodeEd25519.verify`. Must return exactly `true` to accept. */
  verify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean;
}

/** The result of {@link openNote}. */
export interface OpenedNote {
  /** The signed text, including its final newline, excluding the blank separator line. */
  readonly text: string;
  /** Names of the known keys whose signatures verified, in order of first appearance, without repeats. */
  readonly verifiedBy: readonly string[];
  /** Number of distinct signature lines from keys not in the verifier list (ignored, as the spec requires). */
  readonly unverified: number;
}

function invalidNote(message: string, cause?: unknown): LedgerError {
  return new LedgerError(ReasonCode.CHECKPOINT_INVALID, message, cause === undefined ? {} : { cause });
}

function badArgument(message: string): LedgerError {
  return new LedgerError(ReasonCode.SCHEMA_INVALID, message);
}

/**
 * signed-note: key names "MUST be non-empty and MUST NOT contain any Unicode
 * spaces or plus (U+002B) characters". Control characters are excluded too,
 * since a note may not contain them anywhere.
 */
function isValidKeyName(name: unknown): name is string {
  return (
    typeof name === 'string' &&
    name.length > 0 &&
    !name.includes('+') &&
    !UNICODE_SPACE.test(name) &&
    !CONTROL_EXCEPT_NEWLINE.test(name) &&
    !LONE_SURROGATE.test(name)
  );
}

function checkKey(name: unknown, publicKey: unknown): asserts publicKey is Uint8Array {
  if (!isValidKeyName(name)) {
    throw badArgument(`invalid note key name ${JSON.stringify(String(name))}`);
  }
  if (!(publicKey instanceof Uint8Array) || publicKey.length !== ED25519_PUBLIC_KEY_SIZE) {
    throw badArgument(`Ed25519 public key for ${name} must be ${ED25519_PUBLIC_KEY_SIZE} bytes`);
  }
}

/** Strict standard base64 (RFC 4648 section 4): padded, canonical, no whitespace. Null if invalid. */
function decodeBase64Strict(text: string): Uint8Array | null {
  if (text.length % 4 !== 0 || !BASE64_SHAPE.test(text)) return null;
  const bytes = Buffer.from(text, 'base64');
  // Re-encoding rejects misplaced padding and non-zero trailing bits.
  if (bytes.toString('base64') !== text) return null;
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function toHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

function utf8(text: string): Uint8Array {
  const b = Buffer.from(text, 'utf8');
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

/**
 * The signed-note key ID for an Ed25519 key:
 * SHA-256(key name || 0x0A || 0x01 || 32-byte public key)[:4].
 */
export function noteKeyId(name: string, publicKey: Uint8Array): Uint8Array {
  checkKey(name, publicKey);
  const digest = createHash('sha256')
    .update(name, 'utf8')
    .update(new Uint8Array([0x0a, SIG_TYPE_ED25519]))
    .update(publicKey)
    .digest();
  return new Uint8Array(digest.subarray(0, KEY_ID_SIZE));
}

/**
 * The verifier key string used by sumdb/note and tlog tooling:
 * "<name>+<key ID as 8 lowercase hex digits>+<base64(0x01 || public key)>".
 */
export function verifierKeyString(name: string, publicKey: Uint8Array): string {
  const keyId = noteKeyId(name, publicKey);
  const typed = new Uint8Array(1 + ED25519_PUBLIC_KEY_SIZE);
  typed[0] = SIG_TYPE_ED25519;
  typed.set(publicKey, 1);
  return `${name}+${toHex(keyId)}+${Buffer.from(typed).toString('base64')}`;
}

/**
 * Signs `text` (which must end in "\n" and be a valid note text) with every
 * signer, returning the note: text, a blank line, then one signature line per
 * signer in order. Signer errors propagate unchanged.
 */
export function signNote(text: string, signers: readonly NoteSigner[]): string {
  if (typeof text !== 'string' || !text.endsWith('\n')) {
    throw badArgument('note text must end in a newline');
  }
  if (CONTROL_EXCEPT_NEWLINE.test(text) || LONE_SURROGATE.test(text)) {
    throw badArgument('note text must be valid UTF-8 without control characters other than newline');
  }
  if (!Array.isArray(signers) || signers.length === 0) {
    throw badArgument('a note needs at least one signer');
  }
  if (signers.length > MAX_SIGNATURES) {
    throw badArgument(`a note may carry at most ${MAX_SIGNATURES} signatures`);
  }
  const message = utf8(text);
  if (message.length > MAX_NOTE_BYTES) {
    throw badArgument(`note text exceeds ${MAX_NOTE_BYTES} bytes`);
  }
  let out = `${text}\n`;
  for (const signer of signers) {
    const keyId = noteKeyId(signer.name, signer.publicKey);
    const signature = signer.sign(message);
    if (!(signature instanceof Uint8Array) || signature.length !== ED25519_SIGNATURE_SIZE) {
      throw badArgument(`signer ${signer.name} did not return a ${ED25519_SIGNATURE_SIZE}-byte Ed25519 signature`);
    }
    const blob = new Uint8Array(KEY_ID_SIZE + ED25519_SIGNATURE_SIZE);
    blob.set(keyId, 0);
    blob.set(signature, KEY_ID_SIZE);
    out += `${SIG_PREFIX}${signer.name} ${Buffer.from(blob).toString('base64')}\n`;
  }
  return out;
}

interface KnownKey {
  readonly name: string;
  readonly publicKey: Uint8Array;
  readonly verify: NoteVerifier['verify'];
}

function indexVerifiers(verifiers: readonly NoteVerifier[]): Map<string, KnownKey> {
  if (!Array.isArray(verifiers)) throw badArgument('verifiers must be an array');
  const known = new Map<string, KnownKey>();
  for (const v of verifiers) {
    if (v === null || typeof v !== 'object' || typeof v.verify !== 'function') {
      throw badArgument('each verifier needs name, publicKey and verify()');
    }
    const keyId = noteKeyId(v.name, v.publicKey);
    const slot = `${v.name}+${toHex(keyId)}`;
    const existing = known.get(slot);
    if (existing !== undefined) {
      // The same key listed twice is harmless; two different keys with the
      // same name and key ID make signatures ambiguous (sumdb/note refuses too).
      if (toHex(existing.publicKey) !== toHex(v.publicKey)) {
        throw badArgument(`ambiguous verifier key ${slot}`);
      }
      continue;
    }
    known.set(slot, { name: v.name, publicKey: v.publicKey.slice(), verify: v.verify.bind(v) });
  }
  return known;
}

/**
 * Parses a signed note and checks its signatures against `verifiers`.
 *
 * Following c2sp.org/signed-note: signatures whose (key name, key ID) match no
 * verifier are ignored (counted in `unverified`); every signature from a known
 * key must verify, or the whole note is rejected; at least one must verify.
 *
 * Throws LedgerError(CHECKPOINT_INVALID) when the note is malformed (over
 * 1 MiB, invalid UTF-8, control characters, no blank-line separator, a
 * signature line that does not match `— <name> <base64>`, non-canonical
 * base64, more than 100 signatures), when a known key's signature fails, or
 * when no known key signed it. Throws SCHEMA_INVALID for an invalid verifier
 * list. Never throws anything else.
 */
export function openNote(note: string, verifiers: readonly NoteVerifier[]): OpenedNote {
  const known = indexVerifiers(verifiers);
  if (typeof note !== 'string') throw invalidNote('note must be a string');
  // UTF-16 length is a lower bound on UTF-8 length: cheap first cut.
  if (note.length > MAX_NOTE_BYTES || Buffer.byteLength(note, 'utf8') > MAX_NOTE_BYTES) {
    throw invalidNote(`note exceeds ${MAX_NOTE_BYTES} bytes`);
  }
  if (LONE_SURROGATE.test(note)) throw invalidNote('note is not valid UTF-8');
  if (CONTROL_EXCEPT_NEWLINE.test(note)) throw invalidNote('note contains a control character');

  // "the text is separated from the signatures by the last empty line in the note"
  const split = note.lastIndexOf('\n\n');
  if (split < 0) throw invalidNote('note has no blank line before its signatures');
  const text = note.slice(0, split + 1);
  const block = note.slice(split + 2);
  if (block.length === 0 || !block.endsWith('\n')) {
    throw invalidNote('note signature block is empty or does not end in a newline');
  }
  const lines = block.slice(0, -1).split('\n');
  if (lines.length > MAX_SIGNATURES) {
    throw invalidNote(`note has more than ${MAX_SIGNATURES} signatures`);
  }

  // Parse every line before verifying anything, so a malformed line is
  // reported as such regardless of position.
  const parsed: { readonly line: string; readonly name: string; readonly keyId: Uint8Array; readonly sig: Uint8Array }[] = [];
  for (const line of lines) {
    if (!line.startsWith(SIG_PREFIX)) throw invalidNote('note signature line does not start with an em dash and a space');
    const rest = line.slice(SIG_PREFIX.length);
    const space = rest.indexOf(' ');
    if (space < 0) throw invalidNote('note signature line has no signature');
    const name = rest.slice(0, space);
    if (!isValidKeyName(name)) throw invalidNote('note signature line has an invalid key name');
    const raw = decodeBase64Strict(rest.slice(space + 1));
    if (raw === null) throw invalidNote('note signature is not canonical base64');
    if (raw.length < KEY_ID_SIZE + 1) throw invalidNote('note signature is too short');
    parsed.push({ line, name, keyId: raw.subarray(0, KEY_ID_SIZE), sig: raw.subarray(KEY_ID_SIZE) });
  }

  const message = utf8(text);
  const verifiedBy: string[] = [];
  const unverifiedLines = new Set<string>();
  for (const { line, name, keyId, sig } of parsed) {
    const slot = `${name}+${toHex(keyId)}`;
    const key = known.get(slot);
    if (key === undefined) {
      // "Verifiers MUST ignore signatures from unknown keys, even if they share
      // a name or ID (but not both) with a known key."
      unverifiedLines.add(line);
      continue;
    }
    // "If the key name and ID match a known key, verifiers MUST verify the
    // signature. If a signature from a known key fails to verify, clients
    // SHOULD reject the whole note." We do.
    let ok = false;
    let cause: unknown;
    if (sig.length === ED25519_SIGNATURE_SIZE) {
      try {
        ok = key.verify(key.publicKey, message, sig) === true;
      } catch (err) {
        cause = err;
      }
    }
    if (!ok) throw invalidNote(`invalid note signature for key ${slot}`, cause);
    if (!verifiedBy.includes(name)) verifiedBy.push(name);
  }
  // "If no signature from a known key verifies successfully, clients MUST reject the note."
  if (verifiedBy.length === 0) throw invalidNote('note is not signed by any known key');
  return Object.freeze({ text, verifiedBy: Object.freeze(verifiedBy), unverified: unverifiedLines.size });
}
