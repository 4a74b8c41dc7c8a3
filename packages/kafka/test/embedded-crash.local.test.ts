import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createEmbeddedBus, type LogBus } from '../src/index.js';
import { CRASH_IN, CRASH_OUT, CRASH_WRITERS, RECORDS_PER_TX } from './support/crash-shape.js';
import { drain, hasCode } from './support/waiting.js';
import { encodeFrame, type FrameHeader } from '../src/embedded/frame.js';

const CHILD = fileURLToPath(new URL('./support/crash-writer.js', import.meta.url));
const ROUNDS = 12;

interface Acked {
  /** Highest acknowledged transaction per writer (-1: none). */
  readonly highest: number[];
  count: number;
}

/** Starts the writer child; resolves once it acknowledged `wanted` new commits (or exited). */
function startChild(dir: string, wanted: number, acked: Acked): Promise<ReturnType<typeof spawn>> {
  const child = spawn(process.execPath, [CHILD, dir], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  return new Promise((resolve, reject) => {
    let buffered = '';
    let fresh = 0;
    child.stdout?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        const m = /^ack (\d+) (\d+)$/.exec(line);
        if (m === null) continue;
        const w = Number(m[1]);
        acked.highest[w] = Math.max(acked.highest[w] ?? -1, Number(m[2]));
        acked.count += 1;
        if (++fresh === wanted) resolve(child);
      }
    });
    child.once('exit', (code, signal) => {
      if (fresh < wanted) reject(new Error(`the writer exited (${code ?? signal}) after ${fresh} acks: ${stderr}`));
    });
  });
}

async function killed(child: ReturnType<typeof spawn>): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

/** Every transaction in the log, per writer: tx number -> the record numbers present. */
async function transactionsIn(bus: LogBus): Promise<Map<number, Map<number, number[]>>> {
  const byWriter = new Map<number, Map<number, number[]>>();
  for (const partition of [0, 1]) {
    for (const record of await drain(bus.readRange(CRASH_OUT, partition, '0'), 60_000, `read ${CRASH_OUT}/${partition}`)) {
      const m = /^w(\d+):tx(\d+):r(\d+):/.exec(record.value.subarray(0, 64).toString('latin1'));
      assert.ok(m !== null, `a record of unknown shape at offset ${record.offset}`);
      const [w, tx, r] = [Number(m[1]), Number(m[2]), Number(m[3])];
      let txs = byWriter.get(w);
      if (txs === undefined) byWriter.set(w, (txs = new Map()));
      txs.set(tx, [...(txs.get(tx) ?? []), r]);
    }
  }
  return byWriter;
}

const segmentBytes = (dir: string): number => readdirSync(dir).filter((n) => n.endsWith('.seg')).reduce((n, f) => n + statSync(join(dir, f)).size, 0);

test('kill -9 of a writing process: no acknowledged transaction is lost and none is ever partly visible', { timeout: 600_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'embedded-crash-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const acked: Acked = { highest: Array.from({ length: CRASH_WRITERS }, () => -1), count: 0 };
  let tornBytes = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const child = await startChild(dir, 5 + Math.floor(Math.random() * 40), acked);
    if (round === 0) {
      // While the child lives, a second process cannot open the log for writing.
      await assert.rejects(createEmbeddedBus({ dir }).endOffsets(CRASH_OUT), hasCode('UNAVAILABLE', false));
    }
    // Kill at a random moment: mid-write, mid-sync, or between commits.
    await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 30)));
    await killed(child);

    const before = segmentBytes(dir);
    const bus = createEmbeddedBus({ dir });
    try {
      const byWriter = await transactionsIn(bus);
      tornBytes += before - segmentBytes(dir);
      for (let w = 0; w < CRASH_WRITERS; w++) {
        const committed = Number((await bus.committedOffsets(`crash-w${w}`, CRASH_IN)).get(w) ?? '0');
        const txs = byWriter.get(w) ?? new Map<number, number[]>();
        // Every acknowledged transaction survived.
        assert.ok(committed > (acked.highest[w] ?? -1), `writer ${w}: acknowledged tx ${acked.highest[w]} but the log's committed offset is ${committed}`);
        // Exactly the transactions below the committed offset are present, each whole, once: the offset and the records moved together.
        assert.deepEqual([...txs.keys()].sort((a, b) => a - b), Array.from({ length: committed }, (_, i) => i), `writer ${w}: transactions present`);
        for (const [tx, records] of txs) assert.deepEqual(records.sort((a, b) => a - b), Array.from({ length: RECORDS_PER_TX }, (_, j) => j), `writer ${w} tx ${tx}`);
      }
    } finally {
      await bus.close();
    }
  }
  t.diagnostic(`${ROUNDS} kills, ${acked.count} acknowledged commits, ${tornBytes} bytes of torn tail cut at reopen`);
});

test('a torn or corrupt tail is cut at open; damage before the tail is INTEGRITY_FAILURE', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'embedded-torn-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const topic = 'torn';
  const write = async (values: string[]): Promise<void> => {
    const bus = createEmbeddedBus({ dir });
    await bus.ensureTopics([{ name: topic, partitions: 1 }]);
    const writer = await bus.writer('torn-writer');
    for (const value of values) await writer.commit([{ topic, partition: 0, value }]);
    await bus.close();
  };
  const read = async (): Promise<string[]> => {
    const bus = createEmbeddedBus({ dir });
    try {
      return (await drain(bus.readRange(topic, 0, '0'), 10_000, 'read')).map((r) => r.value.toString('utf8'));
    } finally {
      await bus.close();
    }
  };
  await write(['a', 'b', 'c']);
  const segment = join(dir, readdirSync(dir).find((n) => n.endsWith('.seg')) ?? '');
  const intact = readFileSync(segment);
  // 'd' alone, outside a transaction: exactly one frame more.
  const publisher = createEmbeddedBus({ dir });
  await publisher.publish([{ topic, partition: 0, value: 'd' }]);
  await publisher.close();
  const withD = readFileSync(segment);
  const frameOfD = withD.length - intact.length;
  // The frame of 'd' cut at every length short of whole: each reads as if 'd' was never committed.
  for (let keep = 0; keep < frameOfD; keep++) {
    writeFileSync(segment, withD.subarray(0, intact.length + keep));
    assert.deepEqual(await read(), ['a', 'b', 'c'], `torn after ${keep} of ${frameOfD} bytes`);
    assert.equal(statSync(segment).size, intact.length, 'the torn tail was cut');
  }
  // A flipped bit in the last frame: its CRC fails, and it is cut the same way.
  const flipped = Buffer.from(withD);
  flipped[flipped.length - 1] = (flipped[flipped.length - 1] ?? 0) ^ 0x01;
  writeFileSync(segment, flipped);
  assert.deepEqual(await read(), ['a', 'b', 'c']);
  // After the cut, writing goes on at the right offsets.
  await write(['e']);
  assert.deepEqual(await read(), ['a', 'b', 'c', 'e']);
  // Damage in a segment that is not the newest is not a torn tail: the log refuses to open.
  const damaged = readFileSync(segment);
  damaged[20] = (damaged[20] ?? 0) ^ 0xff;
  writeFileSync(segment, damaged);
  appendFileSync(join(dir, '999999999999.seg'), Buffer.alloc(0));
  await assert.rejects(read(), hasCode('INTEGRITY_FAILURE'));
  truncateSync(join(dir, '999999999999.seg'), 0);
});

test('a frame with a valid checksum that breaks the log (an offset going back, a header of another shape) is INTEGRITY_FAILURE, not a torn tail', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'embedded-forged-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const bus = createEmbeddedBus({ dir });
  await bus.ensureTopics([{ name: 'forged', partitions: 1 }]);
  await bus.publish([{ topic: 'forged', partition: 0, value: 'a' }, { topic: 'forged', partition: 0, value: 'b' }]);
  await bus.close();
  const segment = join(dir, readdirSync(dir).find((n) => n.endsWith('.seg')) ?? '');
  const intact = readFileSync(segment);
  const forgeries = [
    encodeFrame({ kind: 'commit', transactionalId: null, epoch: 0, records: [{ topic: 'forged', partition: 0, offset: 0, timestamp: 1, key: null, headers: {}, size: 1 }], offsets: [] }, [Buffer.from('x')]),
    encodeFrame({ kind: 'commit', transactionalId: null, epoch: 0, records: [{ topic: 'nowhere', partition: 0, offset: 2, timestamp: 1, key: null, headers: {}, size: 1 }], offsets: [] }, [Buffer.from('x')]),
    encodeFrame({ kind: 'abort' } as unknown as FrameHeader),
  ];
  for (const forged of forgeries) {
    writeFileSync(segment, Buffer.concat([intact, forged]));
    await assert.rejects(createEmbeddedBus({ dir }).endOffsets('forged'), hasCode('INTEGRITY_FAILURE'));
    assert.equal(statSync(segment).size, intact.length + forged.length, 'nothing is cut: it is not a torn tail');
  }
});
