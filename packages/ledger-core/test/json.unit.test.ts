import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import {
  DEFAULT_JSON_LIMITS,
  parseStrictJson,
  parseStrictJsonBytes,
  parseStrictJsonReference,
} from '../src/json.js';
import type { JsonLimits, JsonValue } from '../src/json.js';
import { canonicalJson } from '../src/jcs.js';

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

interface RejectCase {
  id: string;
  reason: string;
  input?: string;
  inputHex?: string;
  textOnly?: boolean;
  limits?: JsonLimits;
}
interface AcceptCase {
  id: string;
  input: string;
  canonical: string;
}
function loadCases<T>(file: string): T[] {
  const doc = JSON.parse(readFileSync(join(vectorDir('jcs'), file), 'utf8')) as { source: string; cases: T[] };
  assert.ok(doc.source.length > 0 && doc.cases.length > 0, file);
  return doc.cases;
}

const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);
/** String.prototype.isWellFormed (ES2024) is not in this project's ES2023 lib typings. */
const isWellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();
const fromHex = (h: string): Uint8Array => Uint8Array.from(Buffer.from(h.replace(/\s+/g, ''), 'hex'));

/** Asserts that `fn` throws LedgerError(SCHEMA_INVALID); never looks at the message. */
function assertRefused(fn: () => unknown, what: string): void {
  assert.throws(
    fn,
    (err: unknown) => err instanceof LedgerError && err.code === ReasonCode.SCHEMA_INVALID,
    `expected SCHEMA_INVALID for ${what}`,
  );
}

type Outcome = { ok: true; value: JsonValue } | { ok: false; code: unknown };
/** Runs a parser; any error other than LedgerError(SCHEMA_INVALID) fails the property. */
function outcome(fn: () => JsonValue): Outcome {
  try {
    return { ok: true, value: fn() };
  } catch (err) {
    if (!(err instanceof LedgerError)) throw new Error(`non-LedgerError thrown: ${String(err)}`, { cause: err });
    assert.equal(err.code, ReasonCode.SCHEMA_INVALID);
    return { ok: false, code: err.code };
  }
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

/** Strict-safe JSON values; depth 10 keeps them well inside the default limit of 32. */
const jsonValues = fc.oneof(
  fc.jsonValue({ maxDepth: 10 }),
  fc.jsonValue({ maxDepth: 10, stringUnit: 'binary' }),
  fc.jsonValue({ maxDepth: 10, stringUnit: 'grapheme' }),
).map(sanitize);

const RUNS = { numRuns: 500 };

/** Characters that matter to a JSON scanner, to make random text hit interesting paths. */
const jsonishChar = fc.constantFrom(
  '{', '}', '[', ']', ',', ':', '"', '"', '"', '\\', '\\', 'u', 'd', '8', '0', '0', 'c', 'a', 'f', 'e', 'E',
  '1', '9', '-', '+', '.', ' ', '\n', '\t', 't', 'r', 'n', 'l', 's', '/', '*', "'", '\u0000', '\u001f',
  '\u007f', '\u00e9', '\u2028', '\ufeff', '\ud800', '\udc00', '\ud83d', '\ude00', '_', 'p', 'o',
);

/** Random edits of a valid JSON text. */
const mutatedJson = fc
  .tuple(
    jsonValues,
    fc.array(fc.tuple(fc.nat(), fc.nat(2), fc.string({ unit: jsonishChar, minLength: 1, maxLength: 3 })), {
      minLength: 1,
      maxLength: 4,
    }),
  )
  .map(([v, edits]) => {
    let t = JSON.stringify(v);
    for (const [pos, kind, s] of edits) {
      const i = t.length === 0 ? 0 : pos % (t.length + 1);
      if (kind === 0) t = t.slice(0, i) + s + t.slice(i); // insert
      else if (kind === 1) t = t.slice(0, i) + t.slice(i + s.length); // delete
      else t = t.slice(0, i) + s + t.slice(i + s.length); // replace
    }
    return t;
  });

const randomTexts = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: jsonishChar, maxLength: 60 }),
  mutatedJson,
);

// ---------------------------------------------------------------- vectors

describe('strict JSON vectors (test/vectors/jcs)', () => {
  const rejects = loadCases<RejectCase>('strict-rejects.json');

  it('refuses every strict-rejects.json input, as text, as UTF-8 bytes and in the reference parser', () => {
    const reasons = new Set<string>();
    for (const c of rejects) {
      reasons.add(c.reason);
      if (c.input !== undefined) {
        const text = c.input;
        assertRefused(() => parseStrictJson(text, c.limits), `${c.id} (${c.reason}) text`);
        assertRefused(() => parseStrictJsonReference(text, c.limits), `${c.id} (${c.reason}) reference`);
        assert.ok(c.textOnly === true || isWellFormed(text), `${c.id}: lone surrogates must be marked textOnly`);
        if (c.textOnly !== true) assertRefused(() => parseStrictJsonBytes(utf8(text), c.limits), `${c.id} (${c.reason}) bytes`);
      } else {
        assert.ok(c.inputHex !== undefined, c.id);
        assertRefused(() => parseStrictJsonBytes(fromHex(c.inputHex!), c.limits), `${c.id} (${c.reason}) hex`);
      }
    }
    for (const must of [
      'duplicate-key', 'lone-surrogate', 'big-integer', 'negative-zero', 'number-overflow', 'depth', 'trailing-comma',
      'leading-zero', 'bom', 'control-char', 'invalid-utf8', 'single-quote', 'comment', 'nan', 'trailing-garbage', 'too-large',
    ]) {
      assert.ok(reasons.has(must), `strict-rejects.json covers ${must}`);
    }
  });

  it('accepts every strict-accepts.json input with the same value as JSON.parse and the listed canonical form', () => {
    for (const c of loadCases<AcceptCase>('strict-accepts.json')) {
      const v = parseStrictJson(c.input);
      assert.deepEqual(v, JSON.parse(c.input), c.id);
      assert.deepEqual(parseStrictJsonReference(c.input), v, c.id);
      assert.deepEqual(parseStrictJsonBytes(utf8(c.input)), v, c.id);
      assert.equal(canonicalJson(v), c.canonical, c.id);
    }
  });

  it('parses the JCS vectors (RFC 8785, cyberphone) like JSON.parse, or refuses them when marked strictRefusal', () => {
    for (const file of ['rfc8785.json', 'cyberphone.json']) {
      for (const c of loadCases<AcceptCase & { strictRefusal?: string }>(file)) {
        if (c.strictRefusal !== undefined) {
          assertRefused(() => parseStrictJson(c.input), c.id);
          assertRefused(() => parseStrictJsonBytes(utf8(c.input)), c.id);
        } else {
          assert.deepEqual(parseStrictJson(c.input), JSON.parse(c.input), c.id);
          assert.deepEqual(parseStrictJsonBytes(utf8(c.input)), JSON.parse(c.input), c.id);
        }
      }
    }
  });
});

// ---------------------------------------------------------------- unit

describe('parseStrictJson: specific rules', () => {
  it('makes __proto__ an ordinary own property and never changes a prototype', () => {
    const text = '{"__proto__":{"polluted":true},"a":{"__proto__":[1]},"b":[{"\\u005f_proto__":null}]}';
    for (const parse of [
      () => parseStrictJson(text),
      () => parseStrictJsonBytes(utf8(text)),
      () => parseStrictJsonReference(text),
    ]) {
      const v = parse() as Record<string, unknown>;
      assert.equal(Object.getPrototypeOf(v), Object.prototype);
      assert.ok(Object.hasOwn(v, '__proto__'));
      assert.equal((v as { polluted?: unknown }).polluted, undefined);
      assert.deepEqual(Object.keys(v), ['__proto__', 'a', 'b']);
      assert.deepEqual(Object.getOwnPropertyDescriptor(v, '__proto__')?.value, { polluted: true });
      const a = v['a'] as object;
      assert.equal(Object.getPrototypeOf(a), Object.prototype);
      assert.ok(Object.hasOwn(a, '__proto__'));
      assert.ok(!Array.isArray(a));
      const b0 = (v['b'] as object[])[0]!;
      assert.equal(Object.getPrototypeOf(b0), Object.prototype);
      assert.ok(Object.hasOwn(b0, '__proto__'));
      assert.equal(({} as { polluted?: unknown }).polluted, undefined, 'Object.prototype untouched');
      assert.equal(canonicalJson(v), '{"__proto__":{"polluted":true},"a":{"__proto__":[1]},"b":[{"__proto__":null}]}');
    }
  });

  it('refuses duplicates only after unescaping, and at any depth', () => {
    assertRefused(() => parseStrictJson('{"a":1,"\\u0061":2}'), 'escaped duplicate');
    assertRefused(() => parseStrictJson('{"ab":1,"a\\u0062":2}'), 'partly escaped duplicate');
    assertRefused(() => parseStrictJson('[1,{"x":[{"k":1,"k":2}]}]'), 'deep duplicate');
    // A duplicate hidden in a value that JSON.parse would discard.
    assertRefused(() => parseStrictJson('{"a":{"x":1,"x":1},"a":2}'), 'duplicate inside a discarded duplicate');
    assert.deepEqual(parseStrictJson('{"a":1,"A":1,"a ":1,"\\u00e9":1,"e\\u0301":1}'), {
      a: 1, A: 1, 'a ': 1, '\u00e9': 1, 'e\u0301': 1,
    });
    // Colons and quotes inside strings do not confuse the member count.
    assert.deepEqual(parseStrictJson('{"a:\\"b":"c:\\\\","d":["e:f",{"g\\\\":":"}]}'), {
      'a:"b': 'c:\\', d: ['e:f', { 'g\\': ':' }],
    });
  });

  it('applies the number rules to the parsed value', () => {
    assert.equal(parseStrictJson('9007199254740991'), Number.MAX_SAFE_INTEGER);
    assert.equal(parseStrictJson('-9007199254740991'), -Number.MAX_SAFE_INTEGER);
    assert.equal(parseStrictJson('4503599627370495.5'), 4503599627370495.5);
    assert.equal(parseStrictJson('1e-400'), 0);
    assert.ok(Object.is(parseStrictJson('0.0'), 0));
    for (const t of ['9007199254740992', '9007199254740993', '-9007199254740992', '1e300', '1e400', '-1e400', '-0', '-0.0', '-0e0', '-1e-400']) {
      assertRefused(() => parseStrictJson(t), t);
      assertRefused(() => parseStrictJson(`{"n":[${t}]}`), `nested ${t}`);
    }
  });

  it('enforces maxDepth exactly (a top-level container is depth 1)', () => {
    const nest = (d: number): string => '['.repeat(d) + ']'.repeat(d);
    assert.deepEqual(parseStrictJson('1', { maxBytes: 100, maxDepth: 0 }), 1);
    assertRefused(() => parseStrictJson('[]', { maxBytes: 100, maxDepth: 0 }), 'depth 1 > 0');
    assert.ok(parseStrictJson(nest(DEFAULT_JSON_LIMITS.maxDepth)));
    assertRefused(() => parseStrictJson(nest(DEFAULT_JSON_LIMITS.maxDepth + 1)), 'default depth + 1');
    assert.ok(parseStrictJson('{"a":{"b":[1]}}', { maxBytes: 100, maxDepth: 3 }));
    assertRefused(() => parseStrictJson('{"a":{"b":[{}]}}', { maxBytes: 100, maxDepth: 3 }), 'object depth 4 > 3');
  });

  it('fails closed on absurd nesting even when the caller allows it', () => {
    const text = '['.repeat(400_000) + ']'.repeat(400_000);
    const limits = { maxBytes: 1_000_000, maxDepth: 1_000_000 };
    for (const parse of [() => parseStrictJson(text, limits), () => parseStrictJsonReference(text, limits)]) {
      const r = outcome(parse); // either a value or SCHEMA_INVALID, never a RangeError
      if (r.ok) assert.ok(Array.isArray(r.value));
    }
  });

  it('enforces maxBytes in UTF-8 bytes, for text and for bytes', () => {
    const limits = { maxBytes: 1024 * 1024, maxDepth: 32 };
    const fits = JSON.stringify('x'.repeat(limits.maxBytes - 2));
    assert.equal(fits.length, limits.maxBytes);
    assert.equal((parseStrictJson(fits, limits) as string).length, limits.maxBytes - 2);
    assertRefused(() => parseStrictJson(fits + ' ', limits), 'one byte over');
    assertRefused(() => parseStrictJsonBytes(utf8(fits + ' '), limits), 'one byte over (bytes)');
    const small = { maxBytes: 10, maxDepth: 32 };
    assert.equal(parseStrictJson('"\u00e9\u00e9\u00e9\u00e9"', small), '\u00e9\u00e9\u00e9\u00e9'); // 10 bytes
    assertRefused(() => parseStrictJson('"\u00e9\u00e9\u00e9\u00e9\u00e9"', small), '12 bytes in 7 characters');
    assert.equal(parseStrictJson('"\ud83d\ude00\ud83d\ude00"', small), '\ud83d\ude00\ud83d\ude00'); // 10 bytes
  });

  it('refuses a BOM, invalid UTF-8 and non-string / non-bytes input', () => {
    assertRefused(() => parseStrictJsonBytes(fromHex('efbbbf7b7d')), 'BOM bytes');
    assertRefused(() => parseStrictJson('\ufeff{}'), 'BOM text');
    assertRefused(() => parseStrictJsonBytes(fromHex('22ed a080 22')), 'encoded surrogate');
    assertRefused(() => parseStrictJson(42 as unknown as string), 'number input');
    assertRefused(() => parseStrictJsonBytes('{}' as unknown as Uint8Array), 'string as bytes');
    // A Buffer is a Uint8Array and is accepted; so is a view into a larger buffer.
    assert.deepEqual(parseStrictJsonBytes(Buffer.from('{"a":1}')), { a: 1 });
    const big = utf8('xx{"b":[true]}yy');
    assert.deepEqual(parseStrictJsonBytes(big.subarray(2, big.length - 2)), { b: [true] });
  });

  it('rejects invalid limits as a programming error', () => {
    for (const bad of [
      { maxBytes: -1, maxDepth: 1 },
      { maxBytes: 1, maxDepth: Number.NaN },
      { maxBytes: 1.5, maxDepth: 1 },
      { maxBytes: Number.POSITIVE_INFINITY, maxDepth: 1 },
    ]) {
      assert.throws(() => parseStrictJson('1', bad), RangeError);
    }
  });

  it('exposes frozen default limits of 1 MiB and depth 32', () => {
    assert.deepEqual({ ...DEFAULT_JSON_LIMITS }, { maxBytes: 1024 * 1024, maxDepth: 32 });
    assert.ok(Object.isFrozen(DEFAULT_JSON_LIMITS));
  });
});

// ---------------------------------------------------------------- properties

describe('parseStrictJson: properties', () => {
  it('round-trips every strict-safe JSON value (compact and indented; text, bytes, reference)', () => {
    fc.assert(
      fc.property(jsonValues, (v) => {
        const compact = JSON.stringify(v);
        const pretty = JSON.stringify(v, null, 2);
        assert.deepEqual(parseStrictJson(compact), v);
        assert.deepEqual(parseStrictJson(pretty), v);
        assert.deepEqual(parseStrictJsonBytes(utf8(compact)), v);
        assert.deepEqual(parseStrictJsonReference(pretty), v);
      }),
      RUNS,
    );
  });

  it('accepts a string exactly when it has no lone surrogate (escaped by JSON.stringify), as value and as key', () => {
    const halves = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));
    const unit = fc.oneof(fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }), halves);
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 8 }), (s) => {
        const ok = isWellFormed(s);
        const texts = [JSON.stringify(s), JSON.stringify({ [s]: s }), JSON.stringify([{ k: [s] }])];
        // The raw form (surrogates unescaped in the text) where it is a valid string literal.
        if (!/["\\\u0000-\u001f]/.test(s)) texts.push(`"${s}"`, `{"${s}":0}`);
        for (const text of texts) {
          const r = outcome(() => parseStrictJson(text));
          assert.equal(r.ok, ok, JSON.stringify(text));
          assert.equal(outcome(() => parseStrictJsonReference(text)).ok, ok, JSON.stringify(text));
          if (r.ok) assert.deepEqual(r.value, JSON.parse(text));
        }
      }),
      RUNS,
    );
  });

  it('refuses any object with a repeated member name, however the repeat is spelled', () => {
    const spell = (k: string, mask: number[]): string =>
      '"' +
      [...k]
        .map((ch, i) => {
          const plain = JSON.stringify(ch).slice(1, -1);
          if ((mask[i % mask.length] ?? 0) === 0) return plain;
          return [...ch].map((u) => `\\u${u.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
        })
        .join('') +
      '"';
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ unit: 'binary', maxLength: 6 }), jsonValues, { minKeys: 1, maxKeys: 6 }),
        fc.nat(),
        fc.nat(),
        jsonValues,
        fc.array(fc.nat(1), { minLength: 1, maxLength: 4 }),
        fc.nat(3),
        (dict, which, where, dupValue, mask, wrap) => {
          const entries = Object.entries(sanitize(dict) as Record<string, JsonValue>);
          const members = entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`);
          const key = entries[which % entries.length]![0];
          members.splice(where % (members.length + 1), 0, `${spell(key, mask)} : ${JSON.stringify(dupValue)}`);
          let text = `{${members.join(',')}}`;
          if (wrap === 1) text = `[0,${text}]`;
          if (wrap === 2) text = `{"outer":${text}}`;
          if (wrap === 3) text = `{"a":${text},"a":1}`; // the duplicate hides in a value JSON.parse discards
          assertRefused(() => parseStrictJson(text), text);
          assertRefused(() => parseStrictJsonReference(text), text);
        },
      ),
      RUNS,
    );
  });

  it('accepts a number text exactly when its value is finite, not -0, and not an unsafe integer', () => {
    const texts = fc.oneof(
      fc.double({ noNaN: true }).map((x) => JSON.stringify(x) === 'null' ? (x > 0 ? '1e999' : '-1e999') : String(x)),
      fc.double({ noNaN: true, noDefaultInfinity: true }).map((x) => (x === 0 && 1 / x < 0 ? '-0' : x.toExponential())),
      fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
      fc.tuple(fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }), fc.nat(30), fc.integer({ min: -30, max: 330 })).map(
        ([m, f, e]) => `${m}.${String(f).padStart(2, '0')}e${e}`,
      ),
    );
    fc.assert(
      fc.property(texts, (t) => {
        const x = Number(t);
        const ok = Number.isFinite(x) && !Object.is(x, -0) && (!Number.isInteger(x) || Number.isSafeInteger(x));
        const r = outcome(() => parseStrictJson(t));
        assert.equal(r.ok, ok, t);
        if (r.ok) assert.ok(Object.is(r.value, x), t);
      }),
      RUNS,
    );
  });

  it('accepts nesting exactly up to maxDepth', () => {
    fc.assert(
      fc.property(fc.nat(40), fc.nat(40), fc.boolean(), (depth, maxDepth, objects) => {
        const open = objects ? '{"k":' : '[';
        const close = objects ? '}' : ']';
        const text = open.repeat(depth) + '0' + close.repeat(depth);
        const limits = { maxBytes: 4096, maxDepth };
        assert.equal(outcome(() => parseStrictJson(text, limits)).ok, depth <= maxDepth);
        assert.equal(outcome(() => parseStrictJsonReference(text, limits)).ok, depth <= maxDepth);
      }),
      RUNS,
    );
  });

  it('random and mutated text only ever yields a value or SCHEMA_INVALID, and the fast path agrees with the reference parser', () => {
    fc.assert(
      fc.property(randomTexts, (t) => {
        const fast = outcome(() => parseStrictJson(t));
        const ref = outcome(() => parseStrictJsonReference(t));
        assert.equal(fast.ok, ref.ok, JSON.stringify(t));
        if (fast.ok && ref.ok) {
          assert.deepEqual(fast.value, ref.value);
          assert.deepEqual(fast.value, JSON.parse(t)); // same semantics as the native parser
          const c = canonicalJson(fast.value); // anything accepted is canonicalisable...
          assert.equal(canonicalJson(parseStrictJson(c)), c); // ...and the canonical form is stable
        }
        if (isWellFormed(t)) {
          const bytes = outcome(() => parseStrictJsonBytes(utf8(t)));
          assert.equal(bytes.ok, fast.ok, JSON.stringify(t));
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('random bytes only ever yield a value or SCHEMA_INVALID', () => {
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 40 }),
      fc.array(fc.constantFrom(0x22, 0x5c, 0x7b, 0x7d, 0x5b, 0x5d, 0x3a, 0x2c, 0x31, 0x75, 0xc3, 0xa9, 0xed, 0xa0, 0x80, 0xef, 0xbb, 0xbf, 0xf0, 0x9f), { maxLength: 30 }).map((a) => Uint8Array.from(a)),
    );
    fc.assert(
      fc.property(bytes, (b) => {
        const r = outcome(() => parseStrictJsonBytes(b));
        if (r.ok) assert.deepEqual(r.value, JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(b)));
      }),
      RUNS,
    );
  });
});
