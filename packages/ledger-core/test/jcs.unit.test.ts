import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import canonicalize from 'canonicalize';
import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import { canonicalBytes, canonicalJson } from '../src/jcs.js';
import { parseStrictJson } from '../src/json.js';
import type { JsonValue } from '../src/json.js';

// ---------------------------------------------------------------- helpers

/** Walks up from this file to the repository's test/vectors/<name> directory (works from src and dist). */
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

interface JcsCase {
  id: string;
  input: string;
  canonical: string;
  canonicalUtf8Hex?: string;
  strictRefusal?: string;
}
interface NumberCase {
  id: string;
  ieee754: string;
  input: string | null;
  canonical: string | null;
  strictRefusal?: string;
}
function loadCases<T>(file: string): T[] {
  const doc = JSON.parse(readFileSync(join(vectorDir('jcs'), file), 'utf8')) as { source: string; cases: T[] };
  assert.ok(doc.source.length > 0 && doc.cases.length > 0, file);
  return doc.cases;
}

const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

function fromIeee754(bits: string): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, BigInt(`0x${bits}`));
  return view.getFloat64(0);
}

/** Asserts that `fn` throws LedgerError(SCHEMA_INVALID); never looks at the message. */
function assertRefused(fn: () => unknown, what: string): void {
  assert.throws(
    fn,
    (err: unknown) => err instanceof LedgerError && err.code === ReasonCode.SCHEMA_INVALID,
    `expected SCHEMA_INVALID for ${what}`,
  );
}

/** Makes a fast-check JSON value acceptable to the strict rules: no -0, no integral values beyond 2^53-1. */
function sanitize(v: unknown): JsonValue {
  if (typeof v === 'number') {
    let x = v;
    if (Number.isInteger(x) && !Number.isSafeInteger(x)) x = Math.sign(x) * (Math.abs(x) % Number.MAX_SAFE_INTEGER);
    return Object.is(x, -0) ? 0 : x;
  }
  if (Array.isArray(v)) return v.map(sanitize);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, JsonValue> = {};
    for (const [k, e] of Object.entries(v)) {
      Object.defineProperty(out, k, { value: sanitize(e), writable: true, enumerable: true, configurable: true });
    }
    return out;
  }
  return v as JsonValue;
}

const jsonValues = fc.oneof(
  fc.jsonValue({ maxDepth: 10 }),
  fc.jsonValue({ maxDepth: 10, stringUnit: 'binary' }),
  fc.jsonValue({ maxDepth: 10, stringUnit: 'grapheme' }),
).map(sanitize);

/** Rebuilds every object of `v` with its keys in a shuffled insertion order. */
function reorder(v: JsonValue, seed: number): JsonValue {
  if (Array.isArray(v)) return v.map((e, i) => reorder(e, seed + i));
  if (v === null || typeof v !== 'object') return v;
  const keys = Object.keys(v);
  let s = seed >>> 0;
  for (let i = keys.length - 1; i > 0; i--) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    const j = s % (i + 1);
    [keys[i], keys[j]] = [keys[j]!, keys[i]!];
  }
  const out: Record<string, JsonValue> = {};
  for (const k of keys) {
    Object.defineProperty(out, k, { value: reorder(v[k]!, s + 1), writable: true, enumerable: true, configurable: true });
  }
  return out;
}

const RUNS = { numRuns: 500 };

// ---------------------------------------------------------------- vectors

describe('JCS vectors (test/vectors/jcs)', () => {
  for (const file of ['rfc8785.json', 'cyberphone.json']) {
    it(`reproduces every ${file} output`, () => {
      for (const c of loadCases<JcsCase>(file)) {
        // The generic JCS oracle agrees with the expected text for every case.
        assert.equal(canonicalize(JSON.parse(c.input)), c.canonical, `${c.id} (canonicalize package)`);
        if (c.strictRefusal === undefined) {
          const v = parseStrictJson(c.input);
          assert.equal(canonicalJson(v), c.canonical, c.id);
          assert.deepEqual(canonicalBytes(v), utf8(c.canonical), c.id);
          if (c.canonicalUtf8Hex !== undefined) assert.equal(hex(canonicalBytes(v)), c.canonicalUtf8Hex.replace(/\s+/g, ''), c.id);
        } else {
          // Values this project refuses (1E30 is an integral value above 2^53-1).
          assertRefused(() => canonicalJson(JSON.parse(c.input)), c.id);
          if (c.canonicalUtf8Hex !== undefined) assert.equal(hex(utf8(c.canonical)), c.canonicalUtf8Hex.replace(/\s+/g, ''), c.id);
        }
      }
    });
  }

  it('serialises the RFC 8785 Appendix B numbers (or refuses those JCS cannot carry faithfully here)', () => {
    const cases = loadCases<NumberCase>('rfc8785-numbers.json');
    assert.equal(cases.length, 26);
    for (const c of cases) {
      const x = fromIeee754(c.ieee754);
      if (c.canonical === null) {
        assert.ok(Number.isNaN(x) || !Number.isFinite(x), c.id);
        assertRefused(() => canonicalJson(x), c.id);
        assertRefused(() => canonicalJson([x]), c.id);
        continue;
      }
      assert.equal(canonicalize(x), c.canonical, `${c.id} (canonicalize package)`);
      assert.ok(c.input !== null && Object.is(JSON.parse(c.input), x), `${c.id}: input denotes the double`);
      if (c.strictRefusal === undefined) {
        assert.equal(canonicalJson(x), c.canonical, c.id);
        assert.equal(canonicalJson({ n: x }), `{"n":${c.canonical}}`, c.id);
        assert.ok(Object.is(parseStrictJson(c.input), x), c.id);
      } else {
        assertRefused(() => canonicalJson(x), c.id);
        assertRefused(() => parseStrictJson(c.input!), c.id);
      }
    }
  });
});

// ---------------------------------------------------------------- unit

describe('canonicalJson: refusals', () => {
  class Point {
    constructor(
      readonly x: number,
      readonly y: number,
    ) {}
  }
  const cyclic: Record<string, unknown> = { a: 1 };
  cyclic['self'] = cyclic;
  const indirect: Record<string, unknown>[] = [{}];
  indirect[0]!['back'] = indirect;
  // eslint-disable-next-line no-sparse-arrays
  const sparse = [1, , 3];
  const deep = (d: number): unknown => (d === 0 ? 0 : [deep(d - 1)]);
  class MyArray extends Array<number> {}

  const cases: [string, unknown][] = [
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['-Infinity', [Number.NEGATIVE_INFINITY]],
    ['-0', -0],
    ['-0 nested', { a: [-0] }],
    ['2^53', 2 ** 53],
    ['-(2^53)', -(2 ** 53)],
    ['1e300', { n: 1e300 }],
    ['lone high surrogate', '\ud800'],
    ['lone low surrogate', 'a\udc00b'],
    ['reversed pair', '\ude00\ud83d'],
    ['lone surrogate in a key', { '\ud800': 1 }],
    ['undefined', undefined],
    ['undefined member', { a: undefined }],
    ['undefined element', [undefined]],
    ['function', () => 1],
    ['function member', { f: () => 1 }],
    ['symbol', Symbol('s')],
    ['symbol member', { s: Symbol('s') }],
    ['bigint', 1n],
    ['bigint member', { n: 10n }],
    ['Date', new Date(0)],
    ['Map', new Map([['a', 1]])],
    ['Set', new Set([1])],
    ['RegExp', /x/],
    ['class instance', new Point(1, 2)],
    ['boxed string', Object('x')],
    ['boxed number', Object(1)],
    ['Uint8Array', new Uint8Array([1])],
    ['Buffer', Buffer.from('x')],
    ['Error', new Error('x')],
    ['Promise', Promise.resolve(1)],
    ['array subclass', MyArray.from([1])],
    ['object with toJSON', { toJSON: () => 'x' }],
    ['null-prototype object with toJSON', Object.assign(Object.create(null) as object, { toJSON: () => 1 })],
    ['sparse array', sparse],
    ['new Array(3)', new Array(3)],
    ['direct cycle', cyclic],
    ['indirect cycle', indirect],
    ['depth 65 (default limit 64)', deep(65)],
  ];
  for (const [name, value] of cases) {
    it(`refuses ${name}`, () => {
      assertRefused(() => canonicalJson(value), name);
      assertRefused(() => canonicalBytes(value), name);
    });
  }

  it('honours an explicit maxDepth and fails closed when the stack runs out', () => {
    assert.equal(canonicalJson(deep(64)), '['.repeat(64) + '0' + ']'.repeat(64));
    assert.equal(canonicalJson(deep(3), 3), '[[[0]]]');
    assertRefused(() => canonicalJson(deep(4), 3), 'depth 4 > 3');
    assert.equal(canonicalJson(7, 0), '7');
    assertRefused(() => canonicalJson({}, 0), 'depth 1 > 0');
    let v: unknown = 0;
    for (let i = 0; i < 200_000; i++) v = [v];
    assertRefused(() => canonicalJson(v, 1_000_000), 'stack exhaustion');
    assert.throws(() => canonicalJson(1, -1), RangeError);
    assert.throws(() => canonicalJson(1, Number.NaN), RangeError);
  });
});

describe('canonicalJson: accepted values', () => {
  it('sorts member names by UTF-16 code units, not code points or locale', () => {
    // U+1F600 (D83D DE00) sorts before U+FB33 in UTF-16 order, after it by code point.
    assert.equal(canonicalJson({ '\ufb33': 1, '\ud83d\ude00': 2, '\u00e9': 3, e: 4, E: 5, '10': 6, '9': 7 }),
      '{"10":6,"9":7,"E":5,"e":4,"\u00e9":3,"\ud83d\ude00":2,"\ufb33":1}');
  });

  it('escapes strings exactly as JSON.stringify (RFC 8785 section 3.2.2.2)', () => {
    const s = '\u0000\u0001\b\t\n\u000b\f\r\u001f "\\/\u007f\u0080\u2028\u2029\ud83d\ude00';
    assert.equal(canonicalJson(s), '"\\u0000\\u0001\\b\\t\\n\\u000b\\f\\r\\u001f \\"\\\\/\u007f\u0080\u2028\u2029\ud83d\ude00"');
    assert.equal(canonicalJson({ [s]: s }), `{${JSON.stringify(s)}:${JSON.stringify(s)}}`);
  });

  it('accepts null-prototype objects, shared (acyclic) references, and toJSON as plain data', () => {
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { b: 1, a: [true, null] });
    assert.equal(canonicalJson(bare), '{"a":[true,null],"b":1}');
    assert.equal(canonicalJson(bare), canonicalize(bare));
    const shared = { x: 1 };
    assert.equal(canonicalJson({ p: shared, q: [shared, shared] }), '{"p":{"x":1},"q":[{"x":1},{"x":1}]}');
    assert.equal(canonicalJson({ toJSON: 'not a method' }), '{"toJSON":"not a method"}');
    const proto = JSON.parse('{"__proto__":{"a":1}}') as unknown;
    assert.equal(canonicalJson(proto), '{"__proto__":{"a":1}}');
    assert.equal(canonicalJson([]), '[]');
    assert.equal(canonicalJson({}), '{}');
    assert.equal(canonicalJson(Number.MAX_SAFE_INTEGER), '9007199254740991');
    assert.equal(canonicalJson(-Number.MAX_SAFE_INTEGER), '-9007199254740991');
    assert.equal(canonicalJson(0), '0');
  });

  it('canonicalBytes is the UTF-8 of canonicalJson and a plain Uint8Array', () => {
    const b = canonicalBytes({ '\u20ac': '\ud83d\ude00' });
    assert.equal(Object.getPrototypeOf(b), Uint8Array.prototype);
    assert.equal(hex(b), '7b22e282ac223a22f09f988022' + '7d');
  });
});

// ---------------------------------------------------------------- properties

describe('canonicalJson: properties', () => {
  it('equals the canonicalize package on every strict-safe JSON value, and canonicalBytes is its UTF-8', () => {
    fc.assert(
      fc.property(jsonValues, (v) => {
        const c = canonicalJson(v);
        assert.equal(c, canonicalize(v));
        assert.deepEqual(canonicalBytes(v), utf8(c));
      }),
      RUNS,
    );
  });

  it('is idempotent through the strict parser and preserves the value', () => {
    fc.assert(
      fc.property(jsonValues, (v) => {
        const c = canonicalJson(v);
        const back = parseStrictJson(c);
        assert.deepEqual(back, v);
        assert.equal(canonicalJson(back), c);
        assert.equal(canonicalJson(parseStrictJson(JSON.stringify(v, null, 1))), c);
      }),
      RUNS,
    );
  });

  it('does not depend on member insertion order', () => {
    fc.assert(
      fc.property(jsonValues, fc.nat(), (v, seed) => {
        assert.equal(canonicalJson(reorder(v, seed)), canonicalJson(v));
      }),
      RUNS,
    );
  });

  it('on arbitrary JavaScript values either refuses with SCHEMA_INVALID or agrees with canonicalize', () => {
    const anything = fc.anything({
      maxDepth: 4,
      withBoxedValues: true,
      withMap: true,
      withSet: true,
      withDate: true,
      withTypedArray: true,
      withSparseArray: true,
      withNullPrototype: true,
      withBigInt: true,
      withObjectString: true,
      stringUnit: 'binary',
    });
    const halves = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));
    const surrogatey = fc.dictionary(fc.string({ unit: fc.oneof(halves, fc.constant('a')) }), fc.string({ unit: fc.oneof(halves, fc.constant('b')) }));
    fc.assert(
      fc.property(fc.oneof(anything, surrogatey), (v) => {
        let c: string;
        try {
          c = canonicalJson(v);
        } catch (err) {
          assert.ok(err instanceof LedgerError, `non-LedgerError thrown: ${String(err)}`);
          assert.equal(err.code, ReasonCode.SCHEMA_INVALID);
          return;
        }
        assert.equal(c, canonicalize(v));
        assert.equal(canonicalJson(parseStrictJson(c)), c);
      }),
      { numRuns: 1000 },
    );
  });
});
