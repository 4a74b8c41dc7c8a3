import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  canonicalJson,
  entryHash,
  envelopeHash,
  fromBase64,
  headerOf,
  nodeEd25519,
  signingMessage,
  toBase64,
  utf8,
  type Entry,
  type TrustRoot,
} from '@agent-ledger/core';
import { newSigner } from '@agent-ledger/ledger';
import { checkLine, foldLineResults, verifyBundle, type LineResult, type VerificationReport } from '@agent-ledger/verifier';
import { makeDemoBundle } from './fixtures.js';

// Takes a valid demo bundle and applies thousands of random mutations of every
// class an attacker has: changed values, flipped signature bits, deleted,
// duplicated, swapped and reordered lines, truncation, lines spliced in from
// another valid bundle, and entries re-signed with an unregistered key. Every
// one must fail verification; where the mutation touches one entry, at that
// entry's partition and index.

const SEED = Number(process.env.MUTATION_SEED ?? 20261122);

function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Position {
  partition: number;
  index: number;
}

/** Verifies lines with step 1 cached per distinct line text: the same checks, run once per text. */
function makeVerifier(trustRoot: TrustRoot) {
  const cache = new Map<string, LineResult>();
  return (lines: readonly string[]): VerificationReport => {
    const results = lines.map((text, k): LineResult => {
      let result = cache.get(text);
      if (result === undefined) {
        result = checkLine(utf8(text), 0, nodeEd25519);
        cache.set(text, result);
      }
      return { ...result, line: k + 1 };
    });
    return foldLineResults(results, trustRoot);
  };
}

/** The position each line stands for: entries their own, checkpoints the last entry they seal. */
function positions(lines: readonly string[]): (Position | null)[] {
  const sizes = new Map<number, number>();
  return lines.map((text) => {
    const value = JSON.parse(text) as { kind: string; partition?: number; index?: number };
    if (value.kind === 'entry') {
      sizes.set(value.partition as number, (value.index as number) + 1);
      return { partition: value.partition as number, index: value.index as number };
    }
    if (value.kind === 'checkpoint') return { partition: value.partition as number, index: (sizes.get(value.partition as number) as number) - 1 };
    return null;
  });
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function leafPaths(value: Json, path: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  if (Array.isArray(value)) value.forEach((v, i) => leafPaths(v, [...path, i], out));
  else if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) leafPaths(v, [...path, k], out);
  else out.push(path);
  return out;
}

function mutateLeaf(value: Json, random: () => number): Json {
  if (typeof value === 'number') return random() < 0.5 ? value + 1 + Math.floor(random() * 3) : -value - 1;
  if (typeof value === 'boolean') return !value;
  if (value === null) return random() < 0.5 ? 0 : 'null';
  const s = value as string;
  if (s.length === 0) return 'x';
  const at = Math.floor(random() * s.length);
  const old = s.charCodeAt(at);
  let replacement = String.fromCharCode(48 + Math.floor(random() * 75));
  if (replacement.charCodeAt(0) === old) replacement = old === 65 ? 'B' : 'A';
  return s.slice(0, at) + replacement + s.slice(at + 1);
}

function setPath(root: Json, path: (string | number)[], value: Json): void {
  let node = root as Record<string | number, Json>;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, Json>;
  node[path.at(-1) as string | number] = value;
}

function getPath(root: Json, path: (string | number)[]): Json {
  let node = root;
  for (const key of path) node = (node as Record<string | number, Json>)[key] as Json;
  return node;
}

test('every mutation of a valid bundle fails verification, at the mutated entry where it touches one', async () => {
  const bundle = await makeDemoBundle(360);
  const other = await makeDemoBundle(360, { seed: 12 });
  const verify = makeVerifier(bundle.trustRoot);
  const original = bundle.lines;
  assert.deepEqual(verify(original).failure, null, 'the unmutated bundle verifies');
  const pos = positions(original);
  const random = prng(SEED);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const entryLines = original.map((_, k) => k).filter((k) => pos[k] !== null && JSON.parse(original[k] as string).kind === 'entry');
  const checkpointLines = original.map((_, k) => k).filter((k) => JSON.parse(original[k] as string).kind === 'checkpoint');
  const counts: Record<string, number> = {};
  const failures: string[] = [];

  const expectFailure = (mutation: string, lines: readonly string[], at: Position | null): void => {
    counts[mutation] = (counts[mutation] ?? 0) + 1;
    const report = verify(lines);
    if (report.ok || report.failure === null) {
      failures.push(`${mutation}: accepted`);
      return;
    }
    if (at !== null && (report.failure.partition !== at.partition || report.failure.index !== at.index)) {
      failures.push(`${mutation}: failed at ${report.failure.partition}/${report.failure.index} (${report.failure.code}: ${report.failure.message}), mutated ${at.partition}/${at.index}`);
    }
  };

  // 1. A changed value in any field of an entry or checkpoint line.
  for (let n = 0; n < 1600; n++) {
    const k = pick([...entryLines, ...checkpointLines]);
    const value = JSON.parse(original[k] as string) as Json;
    const path = pick(leafPaths(value));
    setPath(value, path, mutateLeaf(getPath(value, path), random));
    const lines = [...original];
    lines[k] = JSON.stringify(value);
    if (lines[k] === original[k]) continue;
    expectFailure(`changed ${path.join('.')}`, lines, pos[k] ?? null);
  }
  // 2. A flipped bit in a statement signature or a checkpoint signature.
  for (let n = 0; n < 300; n++) {
    const k = pick([...entryLines, ...checkpointLines]);
    const value = JSON.parse(original[k] as string) as { kind: string; note?: string; envelope?: { signatures: { sig: string }[] } };
    if (value.kind === 'entry') {
      const sig = pick(value.envelope?.signatures ?? []);
      const bytes = fromBase64(sig.sig, 64);
      const bit = Math.floor(random() * 512);
      bytes[bit >> 3] = (bytes[bit >> 3] as number) ^ (1 << (bit & 7));
      sig.sig = toBase64(bytes);
    } else {
      const note = value.note as string;
      const sigLine = note.lastIndexOf('— ');
      const b64Start = note.indexOf(' ', sigLine + 2) + 1;
      const raw = Buffer.from(note.slice(b64Start, note.length - 1), 'base64');
      const bit = 32 + Math.floor(random() * 512);
      raw[bit >> 3] = (raw[bit >> 3] as number) ^ (1 << (bit & 7));
      value.note = `${note.slice(0, b64Start)}${raw.toString('base64')}\n`;
    }
    const lines = [...original];
    lines[k] = JSON.stringify(value);
    expectFailure('flipped signature bit', lines, pos[k] ?? null);
  }
  // 3. Deleted lines (entries at their index; header, checkpoints and trailer anywhere).
  for (let n = 0; n < 200; n++) {
    const k = n < 150 ? pick(entryLines) : Math.floor(random() * original.length);
    const lines = original.filter((_, j) => j !== k);
    const isEntry = entryLines.includes(k);
    expectFailure('deleted line', lines, isEntry ? (pos[k] ?? null) : null);
  }
  // 4. Duplicated lines.
  for (let n = 0; n < 200; n++) {
    const k = Math.floor(random() * original.length);
    const to = random() < 0.5 ? k + 1 : Math.floor(random() * (original.length + 1));
    const lines = [...original];
    lines.splice(to, 0, original[k] as string);
    expectFailure('duplicated line', lines, null);
  }
  // 5. Swapped lines (adjacent or anywhere) and 6. reordered windows.
  for (let n = 0; n < 400; n++) {
    const lines = [...original];
    if (n < 200) {
      const a = Math.floor(random() * (original.length - 1));
      const b = random() < 0.5 ? a + 1 : Math.floor(random() * original.length);
      if (lines[a] === lines[b]) continue;
      [lines[a], lines[b]] = [lines[b] as string, lines[a] as string];
      expectFailure('swapped lines', lines, null);
    } else {
      const start = Math.floor(random() * (original.length - 10));
      const window = lines.slice(start, start + 3 + Math.floor(random() * 8));
      const shuffled = [...window].sort(() => random() - 0.5);
      if (shuffled.every((line, j) => line === window[j])) shuffled.reverse();
      lines.splice(start, window.length, ...shuffled);
      expectFailure('reordered lines', lines, null);
    }
  }
  // 7. Truncation, at any byte or at a line boundary.
  const text = `${original.join('\n')}\n`;
  for (let n = 0; n < 200; n++) {
    const cut = n % 2 === 0 ? Math.floor(random() * (text.length - 1)) : text.lastIndexOf('\n', Math.floor(random() * (text.length - 1))) + 1;
    const lines = text.slice(0, cut).split('\n');
    if (lines.at(-1) === '') lines.pop();
    expectFailure('truncated', lines, null);
  }
  // 8. A line spliced in from another valid bundle (replacing or inserted).
  for (let n = 0; n < 200; n++) {
    const k = 1 + Math.floor(random() * (original.length - 2));
    const foreign = other.lines[Math.min(k, other.lines.length - 2)] as string;
    const lines = [...original];
    if (random() < 0.5) lines[k] = foreign;
    else lines.splice(k, 0, foreign);
    expectFailure('spliced line', lines, null);
  }
  // 9. An entry re-signed with an unregistered key (hashes recomputed, so the line is self-consistent).
  for (let n = 0; n < 200; n++) {
    const k = pick(entryLines);
    const entry = JSON.parse(original[k] as string) as Entry & { kind: string };
    const intruder = newSigner(entry.envelope.statement.author.principal);
    const statement = { ...entry.envelope.statement, author: { principal: intruder.principal, keyId: intruder.keyId } };
    const canonical = canonicalJson(statement);
    const envelope = { statement, signatures: [{ keyId: intruder.keyId, sig: toBase64(nodeEd25519.sign(intruder.seed, signingMessage(canonical))) }] };
    const hash = entryHash(headerOf({ ...entry, envelope }, envelopeHash(envelope, canonical)));
    const lines = [...original];
    lines[k] = JSON.stringify({ ...entry, envelope, hash });
    expectFailure('re-signed with an unregistered key', lines, pos[k] ?? null);
  }

  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  process.stdout.write(`# mutations applied: ${total} (seed ${SEED})\n`);
  assert.ok(total >= 3000, `only ${total} mutations`);
  assert.deepEqual(failures.slice(0, 20), [], `${failures.length} mutations not caught where expected`);
});

test('the streaming verifier with worker threads gives the same verdicts', async () => {
  const bundle = await makeDemoBundle(200);
  const verify = makeVerifier(bundle.trustRoot);
  const random = prng(SEED + 1);
  for (let n = 0; n < 12; n++) {
    const lines = [...bundle.lines];
    if (n > 0) {
      const k = 1 + Math.floor(random() * (lines.length - 2));
      lines[k] = (lines[k] as string).replace(/"index":(\d+)/, (_, d: string) => `"index":${Number(d) + 1}`).replace(/"sig":"(.)/, '"sig":"A');
      if (lines[k] === bundle.lines[k]) lines.splice(k, 1);
    }
    const streamed = await verifyBundle([`${lines.join('\n')}\n`], bundle.trustRoot, { workers: 2, batchLines: 16 });
    assert.deepEqual(streamed.failure, verify(lines).failure);
    assert.equal(streamed.ok, n === 0);
  }
});
