import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createPrivateKey, createPublicKey, sign as edSign, verify as edVerify, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import { noteKeyId, openNote, signNote, verifierKeyString } from '../src/note.js';
import type { KeyObject } from 'node:crypto';
import type { NoteSigner, NoteVerifier } from '../src/note.js';
import { formatCheckpoint, parseCheckpoint } from '../src/checkpoint.js';
import type { Checkpoint } from '../src/checkpoint.js';
import { MerkleTree, leafHash, verifyInclusion } from '../src/merkle.js';

// ---------------------------------------------------------------- helpers

function vectorDir(name: string): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'test', 'vectors', name);
    if (existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`test/vectors/${name} not found above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}

function readVector<T>(file: string): T {
  return JSON.parse(readFileSync(join(vectorDir('checkpoint'), file), 'utf8')) as T;
}

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const b64 = (b: Uint8Array): string => Buffer.from(b).toString('base64');
const fromB64 = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'base64'));
const EM = '\u2014';

function expectCode(fn: () => unknown, code: ReasonCode, label = ''): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof LedgerError, `${label}: expected LedgerError, got ${String(err)}`);
    assert.equal(err.code, code, label);
    return true;
  });
}

// Ed25519 straight from node:crypto (the production backend is injected the same way).
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_ED25519_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

const publicKeyCache = new Map<string, KeyObject>();
function ed25519Verify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  const id = hex(publicKey);
  let key = publicKeyCache.get(id);
  if (key === undefined) {
    key = createPublicKey({ key: Buffer.concat([SPKI_ED25519_PREFIX, publicKey]), format: 'der', type: 'spki' });
    publicKeyCache.set(id, key);
  }
  return edVerify(null, message, key, signature);
}

function signerFromSeed(name: string, seed: Uint8Array): NoteSigner {
  const key = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  const spki = createPublicKey(key).export({ format: 'der', type: 'spki' });
  return {
    name,
    publicKey: new Uint8Array(spki.subarray(SPKI_ED25519_PREFIX.length)),
    sign: (message) => new Uint8Array(edSign(null, message, key)),
  };
}

function verifierFor(name: string, publicKey: Uint8Array): NoteVerifier {
  return { name, publicKey, verify: ed25519Verify };
}

/** Parses a "name+hex8+base64(0x01||pk)" verifier key the way sumdb/note does, checking the key ID. */
function verifierFromKeyString(vkey: string): NoteVerifier {
  const [name, id, key] = vkey.split('+', 3) as [string, string, string];
  const raw = fromB64(vkey.slice(name.length + id.length + 2));
  assert.equal(raw[0], 0x01, 'Ed25519 key type');
  assert.equal(raw.length, 33);
  const publicKey = raw.slice(1);
  assert.equal(hex(noteKeyId(name, publicKey)), id);
  assert.ok(key.length > 0);
  return verifierFor(name, publicKey);
}

/** Parses a sumdb/note "PRIVATE+KEY+name+hex8+base64(0x01||seed)" signer key. */
function signerFromKeyString(skey: string): NoteSigner {
  const parts = skey.split('+');
  assert.equal(parts[0], 'PRIVATE');
  assert.equal(parts[1], 'KEY');
  const name = parts[2] as string;
  const id = parts[3] as string;
  const raw = fromB64(parts.slice(4).join('+'));
  assert.equal(raw[0], 0x01);
  const signer = signerFromSeed(name, raw.slice(1));
  assert.equal(hex(noteKeyId(name, signer.publicKey)), id);
  return signer;
}

/** Any UTF-16 code unit, lone surrogates and control characters included (fast-check's 'binary' unit is slow). */
const anyCodeUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));

function newSigner(name: string): NoteSigner {
  return signerFromSeed(name, randomBytes(32));
}

// ---------------------------------------------------------------- vectors

interface PeterVectors {
  keys: { PeterNeumann: { verifierKey: string; signerKey: string; keyId: string }; EnochRoot: { verifierKey: string; keyId: string } };
  text: string;
  signedByPeter: string;
  opened: { note: string; verifiers: string[]; verifiedBy: string[]; unverified: number }[];
  unverifiable: { note: string; verifiers: string[] }[];
  badSignatureNote: string;
  malformedNotes: string[];
}

interface SumdbVectors {
  verifierKey: string;
  note: string;
  expected: { text: string; origin: string; size: number; rootHash: string; extensions: string[]; verifiedBy: string[] };
}

interface TreeNoteVectors {
  golden: { leafData: string; size: number; origin: string; text: string };
  withExtensions: { text: string; extensions: string[] }[];
  invalid: string[];
}

interface SpecVectors {
  checkpointNote: {
    note: string;
    expected: { origin: string; size: number; rootHash: string; extensions: string[]; signatureName: string };
  };
  signedNote: { note: string; expected: { text: string; signatureName: string } };
}

describe('checkpoint: vector files', () => {
  it('every vector file names its source', () => {
    const files = readdirSync(vectorDir('checkpoint')).filter((f) => f.endsWith('.json'));
    assert.ok(files.length >= 3);
    for (const f of files) {
      const v = readVector<{ source?: unknown }>(f);
      assert.ok(v.source !== undefined && v.source !== null, `${f} has no source`);
    }
  });
});

describe('note: golang.org/x/mod sumdb/note vectors (PeterNeumann, EnochRoot)', () => {
  const v = readVector<PeterVectors>('sumdb-note-peterneumann.json');
  const peter = verifierFromKeyString(v.keys.PeterNeumann.verifierKey);
  const enoch = verifierFromKeyString(v.keys.EnochRoot.verifierKey);
  const byName: Record<string, NoteVerifier> = { PeterNeumann: peter, EnochRoot: enoch };

  it('key IDs and verifier key strings', () => {
    assert.equal(hex(noteKeyId('PeterNeumann', peter.publicKey)), v.keys.PeterNeumann.keyId);
    assert.equal(hex(noteKeyId('EnochRoot', enoch.publicKey)), v.keys.EnochRoot.keyId);
    assert.equal(verifierKeyString('PeterNeumann', peter.publicKey), v.keys.PeterNeumann.verifierKey);
    assert.equal(verifierKeyString('EnochRoot', enoch.publicKey), v.keys.EnochRoot.verifierKey);
  });

  it('signNote reproduces the published signed note byte for byte', () => {
    const signer = signerFromKeyString(v.keys.PeterNeumann.signerKey);
    assert.equal(hex(signer.publicKey), hex(peter.publicKey));
    assert.equal(signNote(v.text, [signer]), v.signedByPeter);
  });

  it('openNote: verified and ignored signatures', () => {
    for (const c of v.opened) {
      const opened = openNote(c.note, c.verifiers.map((n) => byName[n] as NoteVerifier));
      assert.equal(opened.text, v.text);
      assert.deepEqual(opened.verifiedBy, c.verifiedBy);
      assert.equal(opened.unverified, c.unverified);
    }
  });

  it('openNote rejects: unverifiable, bad signature, malformed', () => {
    for (const c of v.unverifiable) {
      expectCode(() => openNote(c.note, c.verifiers.map((n) => byName[n] as NoteVerifier)), ReasonCode.CHECKPOINT_INVALID, 'unverifiable');
    }
    expectCode(() => openNote(v.badSignatureNote, [peter]), ReasonCode.CHECKPOINT_INVALID, 'bad signature');
    v.malformedNotes.forEach((note, i) => {
      expectCode(() => openNote(note, [peter]), ReasonCode.CHECKPOINT_INVALID, `malformed #${i}`);
    });
  });
});

describe('checkpoint: real sum.golang.org checkpoint (2024-09-23)', () => {
  const v = readVector<SumdbVectors>('sum-golang-org-2024-09-23.json');
  const verifier = verifierFromKeyString(v.verifierKey);

  it('opens with the production key and parses', () => {
    const opened = openNote(v.note, [verifier]);
    assert.equal(opened.text, v.expected.text);
    assert.deepEqual(opened.verifiedBy, v.expected.verifiedBy);
    assert.equal(opened.unverified, 0);
    const cp = parseCheckpoint(opened.text);
    assert.equal(cp.origin, v.expected.origin);
    assert.equal(cp.size, v.expected.size);
    assert.equal(b64(cp.rootHash), v.expected.rootHash);
    assert.deepEqual(cp.extensions, v.expected.extensions);
    assert.equal(formatCheckpoint(cp), opened.text);
  });

  it('a one-character change to the body is rejected', () => {
    expectCode(() => openNote(v.note.replace('30055305', '30055306'), [verifier]), ReasonCode.CHECKPOINT_INVALID);
  });
});

describe('checkpoint: golang.org/x/mod sumdb/tlog tree note vectors', () => {
  const v = readVector<TreeNoteVectors>('sumdb-tlog-tree-note.json');
  const root = leafHash(new TextEncoder().encode(v.golden.leafData));

  it('format and parse the golden tree', () => {
    const cp: Checkpoint = { origin: v.golden.origin, size: v.golden.size, rootHash: root, extensions: [] };
    assert.equal(formatCheckpoint(cp), v.golden.text);
    const parsed = parseCheckpoint(v.golden.text);
    assert.equal(parsed.origin, v.golden.origin);
    assert.equal(parsed.size, v.golden.size);
    assert.equal(hex(parsed.rootHash), hex(root));
    assert.deepEqual(parsed.extensions, []);
  });

  it('extension lines', () => {
    for (const c of v.withExtensions) {
      const parsed = parseCheckpoint(c.text);
      assert.deepEqual(parsed.extensions, c.extensions);
      assert.equal(formatCheckpoint(parsed), c.text);
    }
    const many = v.golden.text + 'JOE\n'.repeat(1000);
    assert.equal(parseCheckpoint(many).extensions.length, 1000);
  });

  it('invalid trees', () => {
    v.invalid.forEach((text, i) => expectCode(() => parseCheckpoint(text), ReasonCode.CHECKPOINT_INVALID, `invalid #${i}`));
  });
});

describe('checkpoint: C2SP specification examples', () => {
  const v = readVector<SpecVectors>('c2sp-spec-examples.json');

  function splitNote(note: string): { text: string; lines: string[] } {
    const split = note.lastIndexOf('\n\n');
    return { text: note.slice(0, split + 1), lines: note.slice(split + 2, -1).split('\n') };
  }

  it('tlog-checkpoint example parses; its signature line is well formed', () => {
    const { text, lines } = splitNote(v.checkpointNote.note);
    const cp = parseCheckpoint(text);
    const e = v.checkpointNote.expected;
    assert.equal(cp.origin, e.origin);
    assert.equal(cp.size, e.size);
    assert.equal(b64(cp.rootHash), e.rootHash);
    assert.deepEqual(cp.extensions, e.extensions);
    assert.equal(formatCheckpoint(cp), text);
    assert.equal(lines.length, 1);
    const [prefix, name, sig] = (lines[0] as string).split(' ') as [string, string, string];
    assert.equal(prefix, EM);
    assert.equal(name, e.signatureName);
    assert.equal(fromB64(sig).length, 4 + 64);
  });

  it('the examples are rejected when no trusted key signed them (key unpublished)', () => {
    const stranger = verifierFor(v.checkpointNote.expected.signatureName, newSigner('x').publicKey);
    expectCode(() => openNote(v.checkpointNote.note, [stranger]), ReasonCode.CHECKPOINT_INVALID);
    const stranger2 = verifierFor(v.signedNote.expected.signatureName, newSigner('x').publicKey);
    expectCode(() => openNote(v.signedNote.note, [stranger2]), ReasonCode.CHECKPOINT_INVALID);
  });

  it('signed-note example: the text ends at the last blank line', () => {
    const { text, lines } = splitNote(v.signedNote.note);
    assert.equal(text, v.signedNote.expected.text);
    assert.equal(lines.length, 1);
    // The same text, signed by us, opens to exactly that text.
    const signer = newSigner(v.signedNote.expected.signatureName);
    const opened = openNote(signNote(text, [signer]), [verifierFor(signer.name, signer.publicKey)]);
    assert.equal(opened.text, v.signedNote.expected.text);
  });
});

// ---------------------------------------------------------------- notes: behaviour

describe('note: sign and open', () => {
  const log = newSigner('example.com/log42');
  const witness = newSigner('example.com/witness');
  const logV = verifierFor(log.name, log.publicKey);
  const witnessV = verifierFor(witness.name, witness.publicKey);
  const third = newSigner('third.example/k');
  const text = 'example.com/log42\n7\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n';

  it('round trip, one and several signers', () => {
    const note = signNote(text, [log, witness]);
    assert.ok(note.startsWith(`${text}\n${EM} example.com/log42 `));
    assert.deepEqual(openNote(note, [logV, witnessV]), { text, verifiedBy: [log.name, witness.name], unverified: 0 });
    assert.deepEqual(openNote(note, [witnessV]), { text, verifiedBy: [witness.name], unverified: 1 });
    assert.deepEqual(openNote(note, [logV, logV]), { text, verifiedBy: [log.name], unverified: 1 });
  });

  it('round trip property: any valid text, any signer subset', () => {
    const char = fc.oneof(
      fc.constantFrom('\n', ' ', '+', EM, 'é', '😀', '\u2028'),
      fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }).filter((c) => !/[\u0000-\u001f]/.test(c)),
    );
    const noteText = fc.array(char, { maxLength: 60 }).map((cs) => `${cs.join('')}\n`);
    fc.assert(
      fc.property(noteText, fc.integer({ min: 1, max: 3 }), fc.nat(), (t, count, mask) => {
        const signers = [log, witness, third].slice(0, count);
        const verifiers = signers.map((s) => verifierFor(s.name, s.publicKey));
        const note = signNote(t, signers);
        const all = openNote(note, verifiers);
        assert.equal(all.text, t);
        assert.deepEqual(all.verifiedBy, signers.map((s) => s.name));
        const subset = verifiers.filter((_, i) => ((mask | 1) >> i) % 2 === 1);
        const some = openNote(note, subset);
        assert.equal(some.text, t);
        assert.equal(some.unverified, signers.length - subset.length);
      }),
      { numRuns: 150 },
    );
  });

  it('a tampered body is rejected', () => {
    const note = signNote(text, [log]);
    expectCode(() => openNote(note.replace('\n7\n', '\n8\n'), [logV]), ReasonCode.CHECKPOINT_INVALID);
    expectCode(() => openNote(`x${note}`, [logV]), ReasonCode.CHECKPOINT_INVALID);
    // Extra text before the blank line.
    expectCode(() => openNote(note.replace(`\n\n${EM}`, `\nextra\n\n${EM}`), [logV]), ReasonCode.CHECKPOINT_INVALID);
  });

  it('a wrong key is rejected', () => {
    const note = signNote(text, [log]);
    // Same name, different key: different key ID, so the signature is ignored and nothing trusted signed.
    expectCode(() => openNote(note, [verifierFor(log.name, newSigner('y').publicKey)]), ReasonCode.CHECKPOINT_INVALID);
    // Different name, same key: ignored as well.
    expectCode(() => openNote(note, [verifierFor('example.com/other', log.publicKey)]), ReasonCode.CHECKPOINT_INVALID);
    // No verifiers at all.
    expectCode(() => openNote(note, []), ReasonCode.CHECKPOINT_INVALID);
    // A known key whose signature does not verify rejects the whole note, even next to a good one.
    const forged = note.replace(/ (\S+)\n$/, (_, s: string) => {
      const raw = fromB64(s);
      raw[10] = (raw[10] ?? 0) ^ 1;
      return ` ${b64(raw)}\n`;
    });
    expectCode(() => openNote(forged, [logV]), ReasonCode.CHECKPOINT_INVALID);
    const twoSigs = signNote(text, [witness]) + forged.slice(forged.lastIndexOf(EM));
    assert.deepEqual(openNote(twoSigs, [witnessV]).verifiedBy, [witness.name]);
    expectCode(() => openNote(twoSigs, [witnessV, logV]), ReasonCode.CHECKPOINT_INVALID);
  });

  it('a verifier that lies or throws cannot make a note pass', () => {
    const note = signNote(text, [log]);
    const never: NoteVerifier = { name: log.name, publicKey: log.publicKey, verify: () => false };
    const truthy: NoteVerifier = { name: log.name, publicKey: log.publicKey, verify: () => 1 as unknown as boolean };
    const throwing: NoteVerifier = {
      name: log.name,
      publicKey: log.publicKey,
      verify: () => {
        throw new Error('backend down');
      },
    };
    for (const v of [never, truthy, throwing]) expectCode(() => openNote(note, [v]), ReasonCode.CHECKPOINT_INVALID);
  });

  it('malformed signature lines are rejected', () => {
    const note = signNote(text, [log]);
    const sigLine = note.slice(note.lastIndexOf(EM), -1);
    const sig = sigLine.slice(sigLine.lastIndexOf(' ') + 1);
    const raw = fromB64(sig);
    const bad = [
      `- ${log.name} ${sig}`, // hyphen, not em dash
      `${EM}${log.name} ${sig}`, // no space after the dash
      `${EM}  ${log.name} ${sig}`, // empty name
      `${EM} ${log.name}  ${sig}`, // double space
      `${EM} ${log.name} ${sig} `, // trailing space
      `${EM} ${log.name}\t${sig}`, // tab
      `${EM} ${log.name}`, // no signature
      `${EM} ${log.name} `, // empty signature
      `${EM} a+b ${sig}`, // plus in the name
      `${EM} a\u00a0b ${sig}`, // Unicode space in the name
      `${EM} ${log.name} ${sig.slice(0, -1)}`, // unpadded
      `${EM} ${log.name} ${sig.replace(/\+/g, '-').replace(/\//g, '_')}x`, // base64url / wrong length
      `${EM} ${log.name} ${b64(raw.subarray(0, 4))}`, // key ID only
      `${EM} ${log.name} ${b64(raw.subarray(0, 4))}A`, // junk
      `${EM} ${log.name} AAAB`, // 3 bytes
      `${EM} ${log.name} ${sig}\r`, // CR
      `${EM} ${log.name} !!!!`,
    ];
    bad.forEach((line, i) => {
      expectCode(() => openNote(`${text}\n${line}\n`, [logV]), ReasonCode.CHECKPOINT_INVALID, `bad line #${i}`);
    });
    // Non-canonical base64: a 68-byte blob ends in one '=', and the character
    // before it carries two padding bits that must be zero. Set one of them:
    // lenient decoders (Node's Buffer) still decode the same bytes.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    assert.ok(sig.endsWith('=') && !sig.endsWith('=='));
    const last = alphabet.indexOf(sig.charAt(sig.length - 2));
    assert.equal(last % 4, 0);
    const tweaked = `${sig.slice(0, -2)}${alphabet.charAt(last + 1)}=`;
    assert.ok(Buffer.from(tweaked, 'base64').equals(Buffer.from(sig, 'base64')));
    expectCode(() => openNote(`${text}\n${EM} ${log.name} ${tweaked}\n`, [logV]), ReasonCode.CHECKPOINT_INVALID, 'padding bits');
  });

  it('structurally malformed notes are rejected', () => {
    const note = signNote(text, [log]);
    const sigLine = note.slice(note.lastIndexOf(EM));
    const cases: [string, string][] = [
      ['no trailing newline', note.slice(0, -1)],
      ['no blank line', `${text}${sigLine}`],
      ['text only', text],
      ['empty signature block', `${text}\n`],
      ['blank line after signatures', `${note}\n`],
      ['CRLF', note.replace(/\n/g, '\r\n')],
      ['control character in text', note.replace('example', 'exam\u0007ple')],
      ['lone surrogate', note.replace('example', 'exam\ud800ple')],
      ['101 signatures', `${text}\n${sigLine.repeat(101)}`],
      ['over 1 MiB', `${'a'.repeat(1024 * 1024)}\n${note}`],
      ['over 1 MiB in UTF-8 only', `${'é'.repeat(600 * 1024)}\n${note}`],
      ['empty', ''],
      ['newlines', '\n\n\n'],
    ];
    for (const [label, bad] of cases) expectCode(() => openNote(bad, [logV]), ReasonCode.CHECKPOINT_INVALID, label);
    // 100 signatures is the cap, not over it.
    assert.deepEqual(openNote(`${text}\n${sigLine.repeat(100)}`, [logV]).verifiedBy, [log.name]);
    expectCode(() => openNote(42 as unknown as string, [logV]), ReasonCode.CHECKPOINT_INVALID, 'not a string');
  });

  it('garbage never crashes: only CHECKPOINT_INVALID', () => {
    const note = signNote(text, [log]);
    const garbage = fc.oneof(
      fc.string({ unit: anyCodeUnit, maxLength: 300 }),
      fc.string({ unit: fc.constantFrom('\n', ' ', EM, '+', '=', 'A', '/', 'é'), maxLength: 200 }),
      // Mutations of a valid note: one character replaced, inserted or deleted.
      fc.tuple(fc.nat(), fc.string({ unit: anyCodeUnit, maxLength: 2 }), fc.nat({ max: 1 })).map(([pos, ins, del]) => {
        const p = pos % note.length;
        return note.slice(0, p) + ins + note.slice(p + del);
      }),
    );
    fc.assert(
      fc.property(garbage, (g) => {
        try {
          const opened = openNote(g, [logV]);
          // Accepted only if it really is a note our key signed (e.g. a mutation that
          // duplicated a signature line or hit nothing that matters).
          assert.deepEqual(opened.verifiedBy, [log.name]);
          assert.equal(opened.text, text);
        } catch (err) {
          assert.ok(err instanceof LedgerError, `threw ${String(err)}`);
          assert.equal(err.code, ReasonCode.CHECKPOINT_INVALID);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('bad arguments are SCHEMA_INVALID', () => {
    expectCode(() => signNote('no newline', [log]), ReasonCode.SCHEMA_INVALID);
    expectCode(() => signNote(text, []), ReasonCode.SCHEMA_INVALID);
    expectCode(() => signNote('bell\u0007\n', [log]), ReasonCode.SCHEMA_INVALID);
    expectCode(() => signNote(text, [{ ...log, name: 'a b' }]), ReasonCode.SCHEMA_INVALID);
    expectCode(() => signNote(text, [{ ...log, name: 'a+b' }]), ReasonCode.SCHEMA_INVALID);
    expectCode(() => signNote(text, [{ ...log, sign: () => new Uint8Array(63) }]), ReasonCode.SCHEMA_INVALID);
    expectCode(() => noteKeyId('', log.publicKey), ReasonCode.SCHEMA_INVALID);
    expectCode(() => noteKeyId('name', new Uint8Array(31)), ReasonCode.SCHEMA_INVALID);
    expectCode(() => verifierKeyString('name\n', log.publicKey), ReasonCode.SCHEMA_INVALID);
    expectCode(() => openNote(signNote(text, [log]), [{ ...logV, publicKey: new Uint8Array(33) }]), ReasonCode.SCHEMA_INVALID);
    // The same key listed twice is fine.
    assert.deepEqual(openNote(signNote(text, [log]), [logV, { ...logV }]).verifiedBy, [log.name]);
  });

  it('noteKeyId is SHA-256(name || 0x0A || 0x01 || key)[:4]', () => {
    const name = 'example.com/log42';
    const digest = createHash('sha256')
      .update(Buffer.concat([Buffer.from(name), Buffer.from([0x0a, 0x01]), Buffer.from(log.publicKey)]))
      .digest();
    assert.equal(hex(noteKeyId(name, log.publicKey)), hex(digest.subarray(0, 4)));
    const vkey = verifierKeyString(name, log.publicKey);
    assert.equal(vkey, `${name}+${hex(digest.subarray(0, 4))}+${b64(Buffer.concat([Buffer.from([0x01]), Buffer.from(log.publicKey)]))}`);
  });
});

// ---------------------------------------------------------------- checkpoints: behaviour

describe('checkpoint: format and parse', () => {
  const root = leafHash(new TextEncoder().encode('root'));

  it('round trip property', () => {
    const line = fc
      .string({ unit: 'grapheme', minLength: 1, maxLength: 30 })
      .filter((s) => !/[\u0000-\u001f]/.test(s));
    fc.assert(
      fc.property(
        line,
        fc.maxSafeNat(),
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.array(line, { maxLength: 4 }),
        (origin, size, rootHash, extensions) => {
          const cp: Checkpoint = { origin, size, rootHash, extensions };
          const text = formatCheckpoint(cp);
          assert.equal(text, `${origin}\n${size}\n${b64(rootHash)}\n${extensions.map((e) => `${e}\n`).join('')}`);
          const back = parseCheckpoint(text);
          assert.equal(back.origin, origin);
          assert.equal(back.size, size);
          assert.equal(hex(back.rootHash), hex(rootHash));
          assert.deepEqual(back.extensions, extensions);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('strict parsing', () => {
    const r = b64(root);
    const cases: [string, string][] = [
      ['leading zero', `o\n01\n${r}\n`],
      ['negative', `o\n-1\n${r}\n`],
      ['plus sign', `o\n+1\n${r}\n`],
      ['space', `o\n 1\n${r}\n`],
      ['hex', `o\n0x10\n${r}\n`],
      ['exponent', `o\n1e3\n${r}\n`],
      ['fraction', `o\n1.0\n${r}\n`],
      ['unsafe integer', `o\n9007199254740992\n${r}\n`],
      ['empty size', `o\n\n${r}\n`],
      ['empty origin', `\n1\n${r}\n`],
      ['31-byte root', `o\n1\n${b64(root.subarray(0, 31))}\n`],
      ['33-byte root', `o\n1\n${b64(new Uint8Array(33))}\n`],
      ['unpadded root', `o\n1\n${r.replace(/=+$/, '')}\n`],
      ['base64url root', `o\n1\n${b64(new Uint8Array(32).fill(0xfb))}\n`.replace(/\+/g, '-').replace(/\//g, '_')],
      ['hex root', `o\n1\n${hex(root)}\n`],
      ['missing final newline', `o\n1\n${r}`],
      ['two lines', `o\n1\n`],
      ['empty extension line', `o\n1\n${r}\n\n`],
      ['empty line between extensions', `o\n1\n${r}\next\n\next\n`],
      ['CRLF', `o\r\n1\r\n${r}\r\n`],
      ['stray CR in origin', `o\r\n1\n${r}\n`],
      ['control character', `o\u0000\n1\n${r}\n`],
      ['lone surrogate', `o\ud800\n1\n${r}\n`],
      ['whole signed note', `o\n1\n${r}\n\n${EM} o AAAAAAAA\n`],
      ['empty', ''],
      ['oversize', `o\n1\n${r}\n${'x\n'.repeat(600 * 1024)}`],
    ];
    for (const [label, text] of cases) expectCode(() => parseCheckpoint(text), ReasonCode.CHECKPOINT_INVALID, label);
    expectCode(() => parseCheckpoint(undefined as unknown as string), ReasonCode.CHECKPOINT_INVALID, 'undefined');
    // Size 0 and the largest safe size are fine.
    assert.equal(parseCheckpoint(`o\n0\n${r}\n`).size, 0);
    assert.equal(parseCheckpoint(`o\n9007199254740991\n${r}\n`).size, Number.MAX_SAFE_INTEGER);
    // Spaces are allowed in an origin (the Go sumdb's is "go.sum database tree").
    assert.equal(parseCheckpoint(`a b\n1\n${r}\n`).origin, 'a b');
  });

  it('parse never throws anything but CHECKPOINT_INVALID', () => {
    fc.assert(
      fc.property(fc.string({ unit: anyCodeUnit, maxLength: 200 }), (s) => {
        try {
          parseCheckpoint(s);
        } catch (err) {
          assert.ok(err instanceof LedgerError);
          assert.equal(err.code, ReasonCode.CHECKPOINT_INVALID);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('formatCheckpoint refuses what parseCheckpoint would refuse', () => {
    const ok: Checkpoint = { origin: 'o', size: 1, rootHash: root, extensions: [] };
    const bad: [string, Checkpoint][] = [
      ['empty origin', { ...ok, origin: '' }],
      ['newline in origin', { ...ok, origin: 'a\nb' }],
      ['CR in origin', { ...ok, origin: 'a\r' }],
      ['negative size', { ...ok, size: -1 }],
      ['fractional size', { ...ok, size: 1.5 }],
      ['unsafe size', { ...ok, size: 2 ** 53 }],
      ['short root', { ...ok, rootHash: root.subarray(0, 31) }],
      ['empty extension', { ...ok, extensions: [''] }],
      ['multi-line extension', { ...ok, extensions: ['a\nb'] }],
    ];
    for (const [label, cp] of bad) expectCode(() => formatCheckpoint(cp), ReasonCode.CHECKPOINT_INVALID, label);
  });
});

describe('checkpoint: end to end', () => {
  it('tree -> checkpoint -> signed note -> open -> parse -> verify inclusion', () => {
    const tree = new MerkleTree();
    const leaves = Array.from({ length: 37 }, (_, i) => leafHash(new TextEncoder().encode(`entry ${i}`)));
    for (const l of leaves) tree.append(l);
    const log = newSigner('ledger.example/partition-7');
    const text = formatCheckpoint({ origin: log.name, size: tree.size, rootHash: tree.root(), extensions: [] });
    const note = signNote(text, [log]);
    const cp = parseCheckpoint(openNote(note, [verifierFor(log.name, log.publicKey)]).text);
    assert.equal(cp.size, 37);
    for (let i = 0; i < cp.size; i++) {
      assert.ok(verifyInclusion(leaves[i] as Uint8Array, i, cp.size, tree.inclusionProof(i, cp.size), cp.rootHash));
    }
  });
});
