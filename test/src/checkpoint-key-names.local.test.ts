import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pinTrust, trustFromGenesis } from '@agent-ledger/client';
import { fromBase64, noteKeyId, nodeEd25519, openNote, parseCheckpoint, toHex, type Envelope, type NoteVerifier } from '@agent-ledger/core';
import { verifyBundle } from '@agent-ledger/verifier';
import { makeDemoBundle, repoRoot } from './fixtures.js';
import { ledgerV2 } from './grant-rules-support.js';

// SPEC.md section 6: under authority rules 3 checkpoints are signed under
// their origin line (`<origin>/<partition>`, the name C2SP tools look a log's
// key up by) and under the ledger origin (the only name before), both
// required. A tool that knows only the verifier-key string of the origin line
// opens them; ledgers under rules 1 and 2 keep their single signature.

/** A verifier from a `name+hex8+base64(0x01||key)` string, checked the way sumdb/note parses it. */
function fromVerifierKey(vkey: string): NoteVerifier {
  const [name, id] = vkey.split('+', 2) as [string, string];
  const raw = fromBase64(vkey.slice(name.length + id.length + 2));
  assert.equal(raw.length, 33);
  assert.equal(raw[0], 0x01);
  const publicKey = raw.slice(1);
  assert.equal(toHex(noteKeyId(name, publicKey)), id);
  return { name, publicKey, verify: (pk, message, sig) => nodeEd25519.verify(pk, message, sig) };
}

interface CheckpointLine {
  kind: 'checkpoint';
  partition: number;
  note: string;
}

/** The bundle with `edit` applied to the note of every checkpoint line. */
function editNotes(lines: readonly string[], edit: (note: string, partition: number) => string): string[] {
  return lines.map((line) => {
    const value = JSON.parse(line) as { kind: string };
    if (value.kind !== 'checkpoint') return line;
    const checkpoint = value as CheckpointLine;
    return JSON.stringify({ ...checkpoint, note: edit(checkpoint.note, checkpoint.partition) });
  });
}

/** The note's signature lines. */
function signatureLines(note: string): string[] {
  return note.slice(note.lastIndexOf('\n\n') + 2, -1).split('\n');
}

const bundleText = (lines: readonly string[]): string => `${lines.join('\n')}\n`;

/** A hand-built ledger under authority rules 3 with entries in every partition and checkpoints over them. */
function ledgerV3Lines(): { lines: string[]; ledger: ReturnType<typeof ledgerV2>['ledger'] } {
  const { ledger } = ledgerV2({ authorityRulesVersion: 3 });
  for (let i = 0; i < 12; i++) ledger.propose({ query: `pay invoice ${i}`, targetResource: `payments/vendors/v${i}` });
  ledger.sealAll();
  return { lines: ledger.lines(), ledger };
}

/** The note with its signature lines replaced by `edit` of them. */
function withSignatures(note: string, edit: (lines: string[]) => string[]): string {
  return `${note.slice(0, note.lastIndexOf('\n\n') + 2)}${edit(signatureLines(note)).join('\n')}\n`;
}

/** A signature line with the last bit of its signature flipped. */
function flipped(line: string): string {
  const at = line.lastIndexOf(' ') + 1;
  const raw = fromBase64(line.slice(at));
  raw[raw.length - 1] = (raw[raw.length - 1] as number) ^ 1;
  return `${line.slice(0, at)}${Buffer.from(raw).toString('base64')}`;
}

test('under authority rules 3 a checkpoint is signed under its origin line and the ledger origin, and verify-chain requires both', async () => {
  const { lines, ledger } = ledgerV3Lines();
  const origin = ledger.origin;
  const checkpoints = lines.map((l) => JSON.parse(l) as { kind: string }).filter((v): v is CheckpointLine => v.kind === 'checkpoint');
  assert.ok(checkpoints.length >= 2, 'checkpoints of the authority stream and an events partition');
  for (const c of checkpoints) {
    assert.deepEqual(signatureLines(c.note).map((line) => line.split(' ')[1]), [`${origin}/${c.partition}`, origin], `partition ${c.partition}`);
  }
  assert.equal((await verifyBundle([bundleText(lines)], ledger.trustRoot)).ok, true);

  const refused = async (edited: string[], what: string): Promise<void> => {
    const report = await verifyBundle([bundleText(edited)], ledger.trustRoot);
    assert.equal(report.ok, false, what);
    assert.equal(report.failure?.code, 'CHECKPOINT_INVALID', `${what}: ${report.failure?.message ?? ''}`);
  };
  // Either signature missing, or renamed (a name or key ID no sequencer key has), or bad, fails the note.
  await refused(editNotes(lines, (note) => withSignatures(note, (sigs) => sigs.slice(1))), 'ledger-origin signature alone');
  await refused(editNotes(lines, (note) => withSignatures(note, (sigs) => sigs.slice(0, 1))), 'origin-line signature alone');
  await refused(editNotes(lines, (note) => withSignatures(note, ([a, b]) => [(a as string).replace(`${origin}/`, `${origin}x/`), b as string])), 'origin-line signature renamed');
  await refused(editNotes(lines, (note) => withSignatures(note, ([a, b]) => [flipped(a as string), b as string])), 'origin-line signature flipped');
  await refused(editNotes(lines, (note) => withSignatures(note, ([a, b]) => [a as string, flipped(b as string)])), 'ledger-origin signature flipped');
  // A witness's cosignature (an unknown key) beside them is ignored, as C2SP signed-note says.
  const witness = `— witness.example/w1 ${Buffer.alloc(68, 7).toString('base64')}`;
  assert.equal((await verifyBundle([bundleText(editNotes(lines, (note) => withSignatures(note, (sigs) => [...sigs, witness])))], ledger.trustRoot)).ok, true);
});

test('under authority rules 1 and 2 checkpoints keep their single ledger-origin signature, byte for byte as before', async () => {
  const demo = await makeDemoBundle(120, { checkpointEvery: 20 });
  const origin = demo.trustRoot.origin;
  const checkpoints = demo.lines.map((l) => JSON.parse(l) as { kind: string }).filter((v): v is CheckpointLine => v.kind === 'checkpoint');
  assert.ok(checkpoints.length >= 4);
  for (const c of checkpoints) assert.deepEqual(signatureLines(c.note).map((line) => line.split(' ')[1]), [origin]);
  assert.equal((await verifyBundle([bundleText(demo.lines)], demo.trustRoot)).ok, true);
  // Their rules name the ledger origin: a note signed under the origin line alone is not theirs.
  const v2 = ledgerV2();
  v2.ledger.propose();
  v2.ledger.sealAll();
  const v2Lines = v2.ledger.lines();
  assert.equal((await verifyBundle([bundleText(v2Lines)], v2.ledger.trustRoot)).ok, true);
  const renamed = editNotes(v2Lines, (note) => withSignatures(note, ([a]) => [(a as string).replace(`${v2.ledger.origin} `, `${v2.ledger.origin}/0 `)]));
  const report = await verifyBundle([bundleText(renamed)], v2.ledger.trustRoot);
  assert.equal(report.ok, false);
  assert.equal(report.failure?.code, 'CHECKPOINT_INVALID');
});

test('ledger trust-root --verifier-key prints the strings a C2SP tool opens each partition\'s checkpoints with, by the origin line alone', async () => {
  const { lines, ledger } = ledgerV3Lines();
  const dir = mkdtempSync(join(tmpdir(), 'ledger-vkey-'));
  const genesisLine = lines.find((l) => (JSON.parse(l) as { envelope?: Envelope }).envelope?.statement.type === 'genesis');
  assert.ok(genesisLine !== undefined);
  const genesis = (JSON.parse(genesisLine) as { envelope: Envelope }).envelope;
  const trustFile = join(dir, 'trust.json');
  pinTrust(trustFile, trustFromGenesis(genesis));

  const cli = join(repoRoot, 'services/ledger/dist/src/main.js');
  const run = spawnSync(process.execPath, [cli, 'trust-root', '--trust', trustFile, '--verifier-key'], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const vkeys = run.stdout.trim().split('\n');
  const origin = ledger.origin;
  const partitions = ledger.eventPartitions + 1; // the authority stream and the events partitions
  assert.equal(vkeys.length, partitions, run.stdout);
  const byName = new Map(vkeys.map((v) => [v.split('+')[0] as string, fromVerifierKey(v)]));
  for (let p = 0; p < partitions; p++) assert.ok(byName.has(`${origin}/${p}`), `a verifier key named ${origin}/${p}`);

  // Every checkpoint opens with the verifier key of its own origin line alone, the way C2SP tools open notes.
  let opened = 0;
  for (const line of lines) {
    const value = JSON.parse(line) as { kind: string };
    if (value.kind !== 'checkpoint') continue;
    const c = value as CheckpointLine;
    const verifier = byName.get(`${origin}/${c.partition}`) as NoteVerifier;
    const note = openNote(c.note, [verifier]);
    assert.deepEqual(note.verifiedBy, [`${origin}/${c.partition}`]);
    assert.equal(parseCheckpoint(note.text).origin, `${origin}/${c.partition}`);
    // Another partition's key name does not open it.
    const other = byName.get(`${origin}/${(c.partition + 1) % partitions}`) as NoteVerifier;
    assert.throws(() => openNote(c.note, [other]), (err: { code?: string }) => err.code === 'CHECKPOINT_INVALID');
    opened += 1;
  }
  assert.ok(opened >= 2);

  const json = spawnSync(process.execPath, [cli, 'trust-root', '--trust', trustFile, '--json'], { encoding: 'utf8' });
  assert.equal(json.status, 0, json.stderr);
  const report = JSON.parse(json.stdout) as { trustRoot: { origin: string }; sequencerKeys: { keyId: string }[]; verifierKeys: { verifierKey: string }[] };
  assert.equal(report.trustRoot.origin, origin);
  assert.equal(report.sequencerKeys.length, 1);
  assert.deepEqual(report.verifierKeys.map((v) => v.verifierKey), vkeys);
});
