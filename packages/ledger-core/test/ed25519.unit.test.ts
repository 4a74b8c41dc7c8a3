import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import * as ed from '@noble/ed25519';
import { sha512 } from '@noble/hashes/sha2.js';
import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import {
  checkPublicKey,
  generateSeed,
  nobleEd25519,
  nodeEd25519,
  type Ed25519Backend,
  type PublicKeyCheck,
} from '../src/ed25519.js';

// ---------------------------------------------------------------- helpers

const BACKENDS: readonly Ed25519Backend[] = [nodeEd25519, nobleEd25519];
const L = (1n << 252n) + 27742317777372353535851937790883648493n;
const P = (1n << 255n) - 19n;

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex');
}

function unhex(text: string): Uint8Array {
  return new Uint8Array(Buffer.from(text, 'hex'));
}

function toLittleEndian(value: bigint): Uint8Array {
  const out = new Uint8Array(32);
  let v = value;
  for (let i = 0; i < 32; i++) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return out;
}

function fromLittleEndian(bytes: Uint8Array): bigint {
  return BigInt('0x' + (hex(Uint8Array.from(bytes).reverse()) || '0'));
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function flipBit(bytes: Uint8Array, bit: number): Uint8Array {
  const copy = Uint8Array.from(bytes);
  const index = bit % (copy.length * 8);
  copy[index >> 3] = (copy[index >> 3] as number) ^ (1 << (index & 7));
  return copy;
}

/** Both backends' verdicts; fails the test if either throws. */
function verdicts(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): [boolean, boolean] {
  return [nodeEd25519.verify(publicKey, message, signature), nobleEd25519.verify(publicKey, message, signature)];
}

/** The repo root is the nearest ancestor holding test/vectors/ed25519 (works from src and from dist). */
function vectorDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'test', 'vectors', 'ed25519');
    if (existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('test/vectors/ed25519 not found above the test file');
    dir = parent;
  }
}

interface SignatureCase {
  readonly id: string;
  readonly publicKey: string;
  readonly message: string;
  readonly signature: string;
  readonly valid: boolean;
  readonly seed?: string;
}

interface KeyCase {
  readonly id: string;
  readonly publicKey: string;
  readonly order: number;
  readonly canonical: boolean;
  readonly reason: 'non_canonical' | 'small_order';
}

interface VectorFile<C> {
  readonly source: string;
  readonly rule: string;
  readonly cases: readonly C[];
}

const VECTOR_DIR = vectorDir();
const VECTOR_FILES = readdirSync(VECTOR_DIR)
  .filter((name) => name.endsWith('.json'))
  .sort();

function load<C>(name: string): VectorFile<C> {
  return JSON.parse(readFileSync(join(VECTOR_DIR, name), 'utf8')) as VectorFile<C>;
}

function isSignatureFile(file: VectorFile<unknown>): file is VectorFile<SignatureCase> {
  return file.cases.every((c) => typeof c === 'object' && c !== null && 'signature' in c && 'valid' in c);
}

const SMALL_ORDER = load<KeyCase>('small-order-keys.json');

/** The 8 torsion points, from the canonical small-order encodings of the vector file. */
const TORSION: readonly ed.Point[] = SMALL_ORDER.cases
  .filter((c) => c.canonical)
  .map((c) => ed.Point.fromBytes(unhex(c.publicKey)));

function torsionPoint(index: number): ed.Point {
  return TORSION[index % TORSION.length] as ed.Point;
}

function refused(reason: Exclude<PublicKeyCheck, { ok: true }>['reason']): PublicKeyCheck {
  return { ok: false, reason };
}

const bytes32 = fc.uint8Array({ minLength: 32, maxLength: 32 });

// ---------------------------------------------------------------- vectors

describe('ed25519 published vectors (test/vectors/ed25519)', () => {
  it('has the four vector files', () => {
    for (const name of ['rfc8032.json', 'speccheck.json', 'wycheproof.json', 'small-order-keys.json']) {
      assert.ok(VECTOR_FILES.includes(name), `${name} is missing`);
    }
  });

  for (const name of VECTOR_FILES) {
    const file = load<unknown>(name);
    if (!isSignatureFile(file)) continue;
    it(`${name}: both backends return the pinned verdict on all ${file.cases.length} cases`, () => {
      assert.equal(file.rule, 'system verdict: cofactorless, OpenSSL-equivalent');
      assert.ok(file.cases.length > 0);
      for (const c of file.cases) {
        const [node, noble] = verdicts(unhex(c.publicKey), unhex(c.message), unhex(c.signature));
        assert.equal(node, c.valid, `${name} ${c.id}: node`);
        assert.equal(noble, c.valid, `${name} ${c.id}: noble`);
      }
    });
  }

  it('pins the expected number of cases per source', () => {
    assert.equal(load<SignatureCase>('rfc8032.json').cases.length, 5);
    assert.equal(load<SignatureCase>('speccheck.json').cases.length, 12);
    assert.equal(load<SignatureCase>('wycheproof.json').cases.length, 151);
    assert.equal(SMALL_ORDER.cases.length, 14);
  });

  it('speccheck: the system rule gives the OpenSSL 3.0 row V V V V X X X X X X X V', () => {
    const row = load<SignatureCase>('speccheck.json').cases.map((c) => (c.valid ? 'V' : 'X'));
    assert.deepEqual(row, ['V', 'V', 'V', 'V', 'X', 'X', 'X', 'X', 'X', 'X', 'X', 'V']);
  });

  it('rfc8032: both backends derive the public key and reproduce the signature exactly', () => {
    const rfc = load<SignatureCase>('rfc8032.json');
    for (const c of rfc.cases) {
      assert.ok(c.seed !== undefined, `${c.id} has a seed`);
      const seed = unhex(c.seed);
      for (const backend of BACKENDS) {
        assert.equal(hex(backend.publicKeyFromSeed(seed)), c.publicKey, `${c.id} ${backend.name} public key`);
        assert.equal(hex(backend.sign(seed, unhex(c.message))), c.signature, `${c.id} ${backend.name} signature`);
      }
    }
  });

  it('small-order-keys: checkPublicKey refuses all 14 encodings with the pinned reason', () => {
    for (const c of SMALL_ORDER.cases) {
      assert.deepEqual(checkPublicKey(unhex(c.publicKey)), refused(c.reason), c.id);
      // The pinned reason follows from the pinned canonicality.
      assert.equal(c.reason, c.canonical ? 'small_order' : 'non_canonical', c.id);
    }
    assert.equal(SMALL_ORDER.cases.filter((c) => c.canonical).length, 8);
    assert.equal(new Set(SMALL_ORDER.cases.map((c) => c.publicKey)).size, 14);
  });

  it('small-order-keys: every encoding decodes (leniently) to a point of the pinned order', () => {
    for (const c of SMALL_ORDER.cases) {
      const point = ed.Point.fromBytes(unhex(c.publicKey), true);
      assert.ok(point.multiply(BigInt(c.order), false).is0(), `${c.id}: [order]A is the identity`);
      if (c.order > 1) assert.ok(!point.multiply(BigInt(c.order / 2), false).is0(), `${c.id}: order is exact`);
    }
  });

  it('small-order-keys: the verdict rule accepts [r]B || r for any message under every identity encoding', () => {
    const r = 0x1234567890abcdefn;
    const signature = concat(ed.Point.BASE.multiply(r).toBytes(), toLittleEndian(r));
    const identities = SMALL_ORDER.cases.filter((c) => c.order === 1);
    assert.equal(identities.length, 4);
    for (const c of identities) {
      for (const message of ['a', 'b', 'pay 100 to mallory']) {
        assert.deepEqual(verdicts(unhex(c.publicKey), new TextEncoder().encode(message), signature), [true, true], c.id);
      }
    }
  });
});

// ---------------------------------------------------------------- properties

describe('ed25519 backends (property tests)', () => {
  it('sign/verify round trip; public keys and signatures byte-identical across backends', () => {
    fc.assert(
      fc.property(bytes32, fc.uint8Array({ maxLength: 300 }), (seed, message) => {
        const publicKey = nodeEd25519.publicKeyFromSeed(seed);
        assert.deepEqual(nobleEd25519.publicKeyFromSeed(seed), publicKey);
        const signature = nodeEd25519.sign(seed, message);
        assert.equal(signature.length, 64);
        assert.deepEqual(nobleEd25519.sign(seed, message), signature);
        assert.deepEqual(verdicts(publicKey, message, signature), [true, true]);
        assert.deepEqual(checkPublicKey(publicKey), { ok: true });
      }),
      { numRuns: 200 },
    );
  });

  it('any single flipped bit in signature, message or key makes both backends refuse', () => {
    fc.assert(
      fc.property(
        bytes32,
        fc.uint8Array({ minLength: 1, maxLength: 200 }),
        fc.constantFrom('signature', 'message', 'publicKey'),
        fc.nat(),
        (seed, message, target, bit) => {
          const publicKey = nodeEd25519.publicKeyFromSeed(seed);
          const signature = nodeEd25519.sign(seed, message);
          const args: [Uint8Array, Uint8Array, Uint8Array] =
            target === 'signature'
              ? [publicKey, message, flipBit(signature, bit)]
              : target === 'message'
                ? [publicKey, flipBit(message, bit), signature]
                : [flipBit(publicKey, bit), message, signature];
          assert.deepEqual(verdicts(...args), [false, false], `${target} bit ${bit}`);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('wrong lengths and non-byte arguments return false without throwing', () => {
    const wrongLength = (right: number) =>
      fc.uint8Array({ maxLength: 2 * right + 2 }).filter((b) => b.length !== right);
    fc.assert(
      fc.property(
        bytes32,
        fc.uint8Array({ maxLength: 64 }),
        fc.oneof(
          fc.record({ key: wrongLength(32), sig: fc.constant(null) }),
          fc.record({ key: fc.constant(null), sig: wrongLength(64) }),
          fc.record({ key: wrongLength(32), sig: wrongLength(64) }),
        ),
        (seed, message, broken) => {
          const publicKey = broken.key ?? nodeEd25519.publicKeyFromSeed(seed);
          const signature = broken.sig ?? nodeEd25519.sign(seed, message);
          for (const backend of BACKENDS) {
            assert.equal(backend.verify(publicKey, message, signature), false, backend.name);
          }
        },
      ),
      { numRuns: 200 },
    );
    const seed = generateSeed();
    const publicKey = nodeEd25519.publicKeyFromSeed(seed);
    const message = Uint8Array.of(1, 2, 3);
    const signature = nodeEd25519.sign(seed, message);
    const garbage: unknown[] = [undefined, null, 0, 'x'.repeat(32), [...publicKey], {}, new Uint16Array(16)];
    for (const backend of BACKENDS) {
      for (const g of garbage) {
        const bad = g as Uint8Array;
        assert.equal(backend.verify(bad, message, signature), false, `${backend.name} key ${String(g)}`);
        assert.equal(backend.verify(publicKey, bad, signature), false, `${backend.name} message ${String(g)}`);
        assert.equal(backend.verify(publicKey, message, bad), false, `${backend.name} signature ${String(g)}`);
      }
      // A Buffer or a subarray view is a Uint8Array and verifies like one.
      assert.equal(backend.verify(Buffer.from(publicKey), Buffer.from(message), Buffer.from(signature)), true);
      const padded = concat(Uint8Array.of(9), signature, Uint8Array.of(9));
      assert.equal(backend.verify(publicKey, message, padded.subarray(1, 65)), true);
    }
  });

  it('backends agree on torsion-laden keys and nonces, and the verdict is the cofactorless equation', () => {
    // A = [a]B + T_A (a = 0 gives a pure small-order key, in any of its 14
    // encodings), R = [r]B + T_R, S = r + k*a mod L. Then [S]B - [k]A equals
    // [r]B - [k]T_A (B has order L), so the rule accepts exactly when
    // T_R = -[k mod L]T_A: about one case in eight for a random torsion part.
    const keyEncodings = SMALL_ORDER.cases.map((c) => unhex(c.publicKey));
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: L - 1n }),
        fc.bigInt({ min: 1n, max: L - 1n }),
        fc.nat({ max: 7 }),
        fc.nat({ max: 7 }),
        fc.nat({ max: 13 }),
        fc.boolean(),
        fc.uint8Array({ maxLength: 64 }),
        (a, r, tA, tR, encodingIndex, pureTorsionKey, message) => {
          let encodedA: Uint8Array;
          let torsionOfA: ed.Point;
          if (pureTorsionKey) {
            encodedA = keyEncodings[encodingIndex] as Uint8Array;
            torsionOfA = ed.Point.fromBytes(encodedA, true);
            a = 0n;
          } else {
            torsionOfA = torsionPoint(tA);
            encodedA = (a === 0n ? ed.Point.ZERO : ed.Point.BASE.multiply(a)).add(torsionOfA).toBytes();
          }
          const R = ed.Point.BASE.multiply(r).add(torsionPoint(tR));
          const encodedR = R.toBytes();
          const k = fromLittleEndian(sha512(concat(encodedR, encodedA, message))) % L;
          const S = (r + k * a) % L;
          const signature = concat(encodedR, toLittleEndian(S));
          const expected = ed.Point.BASE.multiply(r).subtract(torsionOfA.multiply(k, false)).equals(R);
          assert.deepEqual(verdicts(encodedA, message, signature), [expected, expected]);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('S >= L is refused even when S mod L would verify (RFC 8032 5.1.7, section 8.4)', () => {
    fc.assert(
      fc.property(bytes32, fc.uint8Array({ maxLength: 64 }), (seed, message) => {
        const publicKey = nodeEd25519.publicKeyFromSeed(seed);
        const signature = nodeEd25519.sign(seed, message);
        const S = fromLittleEndian(signature.subarray(32));
        const bumped = concat(signature.subarray(0, 32), toLittleEndian(S + L));
        assert.deepEqual(verdicts(publicKey, message, bumped), [false, false]);
      }),
      { numRuns: 100 },
    );
  });

  it('noble backend refuses what noble verify (cofactored, both modes) accepts: speccheck vectors 4 and 5', () => {
    const cases = load<SignatureCase>('speccheck.json').cases;
    for (const id of ['speccheck-4', 'speccheck-5']) {
      const c = cases.find((x) => x.id === id) as SignatureCase;
      const [publicKey, message, signature] = [unhex(c.publicKey), unhex(c.message), unhex(c.signature)];
      assert.equal(ed.verify(signature, message, publicKey), true, `${id}: noble verify, ZIP-215 mode`);
      assert.equal(ed.verify(signature, message, publicKey, { zip215: false }), true, `${id}: noble verify, strict mode`);
      assert.deepEqual(verdicts(publicKey, message, signature), [false, false], id);
    }
  });

  it('keeps correct verdicts while the KeyObject cache evicts (more keys than the 4096 bound)', () => {
    const seed = generateSeed();
    const publicKey = nodeEd25519.publicKeyFromSeed(seed);
    const message = new TextEncoder().encode('cache');
    const signature = nodeEd25519.sign(seed, message);
    assert.equal(nodeEd25519.verify(publicKey, message, signature), true);
    for (let i = 0; i < 4200; i++) {
      const other = toLittleEndian(BigInt(i) * 0x9e3779b97f4a7c15n + 12345n);
      assert.equal(nodeEd25519.verify(other, message, signature), false);
    }
    assert.equal(nodeEd25519.verify(publicKey, message, signature), true);
    assert.equal(nodeEd25519.verify(publicKey, message, flipBit(signature, 3)), false);
  });
});

// ---------------------------------------------------------------- key check

describe('checkPublicKey', () => {
  it('accepts 1000 random honest keys', () => {
    for (let i = 0; i < 1000; i++) {
      const publicKey = nodeEd25519.publicKeyFromSeed(generateSeed());
      assert.deepEqual(checkPublicKey(publicKey), { ok: true }, hex(publicKey));
    }
  });

  it('length: anything but a 32-byte Uint8Array', () => {
    for (const bad of [new Uint8Array(0), new Uint8Array(31), new Uint8Array(33), new Uint8Array(64)]) {
      assert.deepEqual(checkPublicKey(bad), refused('length'));
    }
    for (const bad of [undefined, null, 'a'.repeat(32), new Array<number>(32).fill(1), new Uint16Array(16)]) {
      assert.deepEqual(checkPublicKey(bad as unknown as Uint8Array), refused('length'));
    }
  });

  it('non_canonical: every y in [p, 2^255), with either sign bit, is refused before anything else', () => {
    for (let d = 0n; d < 19n; d++) {
      const encoded = toLittleEndian(P + d);
      assert.deepEqual(checkPublicKey(encoded), refused('non_canonical'), `y = p + ${d}`);
      encoded[31] = (encoded[31] as number) | 0x80;
      assert.deepEqual(checkPublicKey(encoded), refused('non_canonical'), `y = p + ${d}, sign bit`);
    }
  });

  it('not_on_curve: a y with no x (y = 2) is refused, and no signature verifies under it', () => {
    const encoded = toLittleEndian(2n);
    assert.throws(() => ed.Point.fromBytes(encoded, true));
    assert.deepEqual(checkPublicKey(encoded), refused('not_on_curve'));
    const seed = generateSeed();
    const message = Uint8Array.of(7);
    assert.deepEqual(verdicts(encoded, message, nodeEd25519.sign(seed, message)), [false, false]);
  });

  it('not_torsion_free: honest key plus any non-identity torsion point', () => {
    fc.assert(
      fc.property(bytes32, fc.integer({ min: 1, max: 7 }), (seed, t) => {
        const honest = ed.Point.fromBytes(nodeEd25519.publicKeyFromSeed(seed));
        const torsion = TORSION.filter((p) => !p.is0())[t - 1] as ed.Point;
        assert.deepEqual(checkPublicKey(honest.add(torsion).toBytes()), refused('not_torsion_free'));
      }),
      { numRuns: 50 },
    );
    // The mixed-order keys of ed25519-speccheck.
    for (const key of [
      'cdb267ce40c5cd45306fa5d2f29731459387dbf9eb933b7bd5aed9a765b88d4d',
      'f7badec5b8abeaf699583992219b7b223f1df3fbbea919844e3f7c554a43dd43',
    ]) {
      assert.deepEqual(checkPublicKey(unhex(key)), refused('not_torsion_free'), key);
    }
  });

  it('every speccheck key but the honest one of vectors 6-7 is refused at registration', () => {
    for (const c of load<SignatureCase>('speccheck.json').cases) {
      if (c.id === 'speccheck-6' || c.id === 'speccheck-7') {
        assert.deepEqual(checkPublicKey(unhex(c.publicKey)), { ok: true }, c.id);
      } else {
        assert.equal(checkPublicKey(unhex(c.publicKey)).ok, false, c.id);
      }
    }
  });
});

// ---------------------------------------------------------------- seeds and errors

describe('generateSeed and typed errors', () => {
  it('generateSeed returns 32 fresh bytes that work as a seed', () => {
    const seeds = new Set<string>();
    for (let i = 0; i < 100; i++) {
      const seed = generateSeed();
      assert.ok(seed instanceof Uint8Array);
      assert.equal(seed.length, 32);
      seeds.add(hex(seed));
    }
    assert.equal(seeds.size, 100);
    const seed = generateSeed();
    const message = Uint8Array.of(42);
    assert.equal(nodeEd25519.verify(nobleEd25519.publicKeyFromSeed(seed), message, nobleEd25519.sign(seed, message)), true);
  });

  it('a seed that is not 32 bytes, or a message that is not bytes, is SCHEMA_INVALID on both backends', () => {
    const isSchemaInvalid = (err: unknown) => err instanceof LedgerError && err.code === ReasonCode.SCHEMA_INVALID;
    for (const backend of BACKENDS) {
      for (const seed of [new Uint8Array(31), new Uint8Array(33), new Uint8Array(64), 'seed' as unknown as Uint8Array]) {
        assert.throws(() => backend.publicKeyFromSeed(seed), isSchemaInvalid, `${backend.name} publicKeyFromSeed`);
        assert.throws(() => backend.sign(seed, Uint8Array.of(1)), isSchemaInvalid, `${backend.name} sign`);
      }
      assert.throws(() => backend.sign(generateSeed(), 'message' as unknown as Uint8Array), isSchemaInvalid);
    }
  });

  it('backend names', () => {
    assert.equal(nodeEd25519.name, 'node');
    assert.equal(nobleEd25519.name, 'noble');
  });
});
