import { LedgerError, ReasonCode } from '@agent-ledger/refusals';

/**
 * RFC 8785 JSON Canonicalization Scheme.
 *
 * One pass validates and serialises (each property is read exactly once, so a
 * getter cannot show the validator one value and the serialiser another). The
 * output equals the `canonicalize` package's on every value accepted here
 * (checked by property tests); it is faster than `canonicalize` alone, which
 * also does not refuse -0, unsafe integers, `undefined` members, sparse
 * arrays, `toJSON` or non-plain objects (it serialises them lossily).
 *
 * - member names sorted by UTF-16 code units (`Array.prototype.sort` default);
 * - strings escaped exactly as ECMAScript `JSON.stringify` (which is JCS);
 * - numbers printed with ECMAScript Number::toString (which is JCS).
 *
 * Refused with `LedgerError(SCHEMA_INVALID)`: NaN/±Infinity, -0, integral
 * values outside ±(2^53-1), lone surrogates in strings or member names,
 * `undefined`, functions, symbols, bigints, non-plain objects (Date, Map,
 * class instances, boxed primitives, typed arrays), objects with a `toJSON`
 * method, sparse arrays, cycles and nesting deeper than `maxDepth`.
 */

/**
 * Default nesting limit for canonicalisation. Twice the parser's default
 * (`DEFAULT_JSON_LIMITS.maxDepth`, 32) so that a parsed payload can be wrapped
 * in envelopes and still be canonicalised.
 */
const DEFAULT_CANONICAL_MAX_DEPTH = 64;

interface WellFormedCheckable {
  isWellFormed(): boolean;
}

function loneSurrogateFree(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xd800 || c > 0xdfff) continue;
    if (c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        i++;
        continue;
      }
    }
    return false;
  }
  return true;
}

const isWellFormed: (s: string) => boolean =
  typeof (String.prototype as unknown as Partial<WellFormedCheckable>).isWellFormed === 'function'
    ? (s) => (s as unknown as WellFormedCheckable).isWellFormed()
    : loneSurrogateFree;

/** `at` is the member name or array index holding the offending value, if any. */
function refuse(problem: string, at: string | number | undefined): LedgerError {
  const where = at === undefined ? '' : typeof at === 'number' ? ` at index ${at}` : ` at member ${JSON.stringify(at)}`;
  return new LedgerError(ReasonCode.SCHEMA_INVALID, `not canonicalisable (RFC 8785): ${problem}${where}`);
}

const OBJECT_PROTO = Object.prototype;
const ARRAY_PROTO = Array.prototype;
const getPrototypeOf = Object.getPrototypeOf;
const keysOf = Object.keys;
const stringify = JSON.stringify as (s: string) => string;
/** Characters JSON.stringify would escape (lone surrogates are refused before quoting). */
const NEEDS_ESCAPE = /["\\\u0000-\u001f]/;

/** JCS string literal: JSON.stringify's escaping, skipping the call for the common plain case. */
function quote(s: string): string {
  return NEEDS_ESCAPE.test(s) ? stringify(s) : '"' + s + '"';
}

function serialize(v: unknown, depth: number, maxDepth: number, ancestors: unknown[], at: string | number | undefined): string {
  switch (typeof v) {
    case 'string':
      if (!isWellFormed(v)) throw refuse('lone surrogate in string', at);
      return quote(v);
    case 'number':
      if (v === 0) {
        if (1 / v < 0) throw refuse('negative zero', at);
        return '0';
      }
      if (Number.isInteger(v)) {
        if (v > Number.MAX_SAFE_INTEGER || v < -Number.MAX_SAFE_INTEGER) {
          throw refuse('integer magnitude above 2^53-1', at);
        }
      } else if (v - v !== 0) {
        throw refuse(`${v} is not a JSON number`, at);
      }
      return '' + v;
    case 'boolean':
      return v ? 'true' : 'false';
    case 'object': {
      if (v === null) return 'null';
      if (depth >= maxDepth) {
        const cyclic = ancestors.slice(0, depth).includes(v);
        throw refuse(cyclic ? 'cyclic structure' : `nesting deeper than ${maxDepth}`, at);
      }
      ancestors[depth] = v;
      const inner = depth + 1;
      if (Array.isArray(v)) {
        if (getPrototypeOf(v) !== ARRAY_PROTO) throw refuse('array subclass', at);
        const n = v.length;
        if (n === 0) return '[]';
        let out = '[';
        for (let i = 0; i < n; i++) {
          const e: unknown = v[i];
          if (e === undefined) {
            throw refuse(i in v ? 'undefined is not a JSON value' : 'sparse array', i);
          }
          if (i > 0) out += ',';
          out += serialize(e, inner, maxDepth, ancestors, i);
        }
        return out + ']';
      }
      const proto: unknown = getPrototypeOf(v);
      if (proto !== OBJECT_PROTO && proto !== null) {
        const name = (v as { constructor?: { name?: unknown } }).constructor?.name;
        throw refuse(`non-plain object${typeof name === 'string' ? ` (${name})` : ''}`, at);
      }
      const o = v as Record<string, unknown>;
      if (typeof o['toJSON'] === 'function') throw refuse('object with a toJSON method', at);
      const keys = keysOf(o);
      const n = keys.length;
      if (n === 0) return '{}';
      // Default sort = UTF-16 code unit order, as RFC 8785 requires; skipped
      // when already in order (typical for input that was canonical).
      for (let i = 1; i < n; i++) {
        if (keys[i - 1]! > keys[i]!) {
          keys.sort();
          break;
        }
      }
      let out = '{';
      for (let i = 0; i < n; i++) {
        const k = keys[i]!;
        if (!isWellFormed(k)) throw refuse('lone surrogate in member name', k);
        const e = o[k];
        if (e === undefined) throw refuse('undefined is not a JSON value', k);
        if (i > 0) out += ',';
        out += quote(k);
        out += ':';
        out += serialize(e, inner, maxDepth, ancestors, k);
      }
      return out + '}';
    }
    default:
      throw refuse(`${typeof v} is not a JSON value`, at);
  }
}

/**
 * The RFC 8785 canonical text of `value`. Throws `LedgerError(SCHEMA_INVALID)`
 * for anything JCS cannot represent faithfully (see the module comment).
 * `maxDepth` bounds container nesting (a top-level `{}` is depth 1).
 */
export function canonicalJson(value: unknown, maxDepth: number = DEFAULT_CANONICAL_MAX_DEPTH): string {
  if (!Number.isSafeInteger(maxDepth) || maxDepth < 0) throw new RangeError('canonicalJson: maxDepth must be a non-negative integer');
  try {
    return serialize(value, 0, maxDepth, [], undefined);
  } catch (err) {
    // Stack exhaustion under an absurd caller-chosen maxDepth: refuse, typed.
    if (err instanceof RangeError) throw new LedgerError(ReasonCode.SCHEMA_INVALID, 'not canonicalisable (RFC 8785): nesting too deep to process', { cause: err });
    throw err;
  }
}

const UTF8 = new TextEncoder();

/** UTF-8 bytes of {@link canonicalJson} (the bytes that are hashed and signed). */
export function canonicalBytes(value: unknown, maxDepth: number = DEFAULT_CANONICAL_MAX_DEPTH): Uint8Array {
  return UTF8.encode(canonicalJson(value, maxDepth));
}
