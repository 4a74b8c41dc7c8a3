import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ChunkedCommitter } from '../src/chunked-commit.js';
import type { ConsumedOffset, OutRecord, TransactionalWriter } from '../src/log-bus.js';

class RecordingWriter implements TransactionalWriter {
  readonly transactionalId = 'test';
  readonly commits: { records: readonly OutRecord[]; consumed: ConsumedOffset | undefined }[] = [];
  failNext = false;
  async commit(records: readonly OutRecord[], consumed?: ConsumedOffset): Promise<void> {
    if (this.failNext) {
      this.failNext = false;
      throw Object.assign(new Error('broker blip'), { retryable: true });
    }
    this.commits.push({ records, consumed });
  }
  async close(): Promise<void> {}
}

const base = { groupId: 'g', topic: 't', partition: 3 };
const record = (bytes: number): OutRecord => ({ topic: 'out', partition: 0, key: null, value: 'x'.repeat(bytes) });

test('a large backlog commits in several transactions, each under the bound, each with the offset after its last input', async () => {
  const writer = new RecordingWriter();
  const committer = new ChunkedCommitter(writer, base, 1000);
  const done: number[] = [];
  for (let offset = 10; offset < 30; offset++) await committer.add(String(offset), [record(300)], () => done.push(offset));
  await committer.flush();
  assert.ok(writer.commits.length >= 5);
  let expectedFirst = 10;
  for (const commit of writer.commits) {
    const bytes = commit.records.reduce((n, r) => n + String(r.value).length, 0);
    assert.ok(bytes < 1000 + 300, `transaction of ${bytes} bytes`);
    expectedFirst += commit.records.length;
    assert.equal(commit.consumed?.nextOffset, String(expectedFirst));
    assert.equal(commit.consumed?.partition, 3);
  }
  assert.deepEqual(done, Array.from({ length: 20 }, (_, i) => 10 + i));
});

test('input with no output still moves the offset; nothing added commits nothing', async () => {
  const writer = new RecordingWriter();
  const committer = new ChunkedCommitter(writer, base);
  await committer.flush();
  assert.equal(writer.commits.length, 0);
  await committer.add('41', []);
  await committer.add('42', []);
  await committer.flush();
  assert.deepEqual(writer.commits.map((c) => [c.records.length, c.consumed?.nextOffset]), [[0, '43']]);
});

test('callbacks of a failed transaction never run, and later ones run only after their own commit', async () => {
  const writer = new RecordingWriter();
  const committer = new ChunkedCommitter(writer, base, 500);
  const done: string[] = [];
  await committer.add('1', [record(100)], () => done.push('1'));
  writer.failNext = true;
  await assert.rejects(committer.add('2', [record(450)], () => done.push('2')), /broker blip/);
  assert.equal(done.length, 0);
  assert.equal(committer.pendingBytes, 0);
  await committer.add('1', [record(100)], () => done.push('1 again'));
  assert.equal(done.length, 0);
  await committer.flush();
  assert.deepEqual(done, ['1 again']);
  assert.equal(writer.commits.length, 1);
});

test('a batch redelivered after a later chunk failed skips what earlier chunks committed', async () => {
  const writer = new RecordingWriter();
  const committer = new ChunkedCommitter(writer, base, 250);
  const batch = [5, 6, 7, 8].map((n) => ({ offset: String(n) }));
  assert.equal(committer.uncommitted(batch).length, 4);
  await committer.add('5', [record(300)]);
  writer.failNext = true;
  await assert.rejects(committer.add('6', [record(300)]));
  assert.deepEqual(committer.uncommitted(batch).map((r) => r.offset), ['6', '7', '8']);
});

test('a delivery whose handler failed before flushing leaves nothing behind: its redelivery commits its output once, and the stale callbacks never run', async () => {
  const writer = new RecordingWriter();
  const committer = new ChunkedCommitter(writer, base, 1000);
  const batch = [5, 6].map((n) => ({ offset: String(n) }));
  const done: string[] = [];
  // First delivery: offset 5 handled, then the handler fails on 6 (a wait that ran out) without flushing.
  committer.uncommitted(batch);
  await committer.add('5', [{ ...record(10), value: 'first try of 5' }], () => done.push('first try of 5'));
  // The redelivery handles both records again.
  assert.deepEqual(committer.uncommitted(batch).map((r) => r.offset), ['5', '6']);
  assert.equal(committer.pendingBytes, 0, 'the failed delivery left nothing pending');
  await committer.add('5', [{ ...record(10), value: 'again 5' }], () => done.push('again 5'));
  await committer.add('6', [{ ...record(10), value: 'again 6' }], () => done.push('again 6'));
  await committer.flush();
  assert.deepEqual(
    writer.commits.map((c) => [c.records.map((r) => r.value), c.consumed?.nextOffset]),
    [[['again 5', 'again 6'], '7']],
  );
  assert.deepEqual(done, ['again 5', 'again 6']);
});

test('resume sets the committed offset a redelivered batch is filtered by, and drops what was pending', async () => {
  const writer = new RecordingWriter();
  const committer = new ChunkedCommitter(writer, base, 1000);
  await committer.add('5', [record(10)]);
  committer.resume('8');
  assert.equal(committer.committedNext, '8');
  assert.equal(committer.pendingBytes, 0);
  await committer.flush();
  assert.equal(writer.commits.length, 0, 'the dropped output is never committed');
  const batch = [6, 7, 8, 9].map((n) => ({ offset: String(n) }));
  assert.deepEqual(committer.uncommitted(batch).map((r) => r.offset), ['8', '9']);
  committer.resume(null);
  assert.equal(committer.committedNext, null);
  assert.equal(committer.uncommitted(batch).length, 4);
});

test('commitAlone commits pending output first, then its own records without an offset; probe re-commits the offset', async () => {
  const writer = new RecordingWriter();
  const committer = new ChunkedCommitter(writer, base, 1000);
  await committer.probe();
  assert.equal(writer.commits.length, 0, 'nothing to probe with before any commit');
  await committer.add('4', [record(10)]);
  await committer.commitAlone([record(20)]);
  assert.equal(writer.commits.length, 2);
  assert.equal(writer.commits[0]?.consumed?.nextOffset, '5');
  assert.equal(writer.commits[1]?.consumed, undefined);
  assert.equal(writer.commits[1]?.records.length, 1);
  await committer.probe();
  assert.equal(writer.commits.length, 3);
  assert.deepEqual(writer.commits[2]?.records, []);
  assert.equal(writer.commits[2]?.consumed?.nextOffset, '5');
  assert.equal(committer.transactions, 3);
});
