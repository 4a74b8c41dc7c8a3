import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEmbeddedBus, type InRecord } from '../src/index.js';
import { drain, hasCode, waitFor } from './support/waiting.js';

const values = (records: readonly InRecord[]): string[] => records.map((r) => r.value.toString('utf8'));

test('a read-only bus (another process: ledger export) follows the writer, sees only whole commits, and writes nothing', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'embedded-readonly-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const topic = 'follow';
  const writer = createEmbeddedBus({ dir });
  await writer.ensureTopics([{ name: topic, partitions: 1 }]);
  const tx = await writer.writer('follow-writer');
  await tx.commit(['a', 'b', 'c'].map((value) => ({ topic, partition: 0, value })));

  // No lock needed: it opens beside the live writer.
  const reader = createEmbeddedBus({ dir, readOnly: true });
  assert.deepEqual(values(await drain(reader.readRange(topic, 0, '0'), 10_000, 'read')), ['a', 'b', 'c']);
  const seen: string[] = [];
  const subscription = await reader.subscribe({ groupId: 'reader', topics: [topic], fromBeginning: true, commitOffsets: false, onBatch: async (batch) => void seen.push(...values(batch.records)) });
  await tx.commit(['d', 'e'].map((value) => ({ topic, partition: 0, value })));
  assert.deepEqual(values(await drain(reader.readRange(topic, 0, '0'), 10_000, 'read again')), ['a', 'b', 'c', 'd', 'e']);
  await waitFor(() => seen.length === 5, 10_000, 'the subscription to follow');
  assert.deepEqual(seen, ['a', 'b', 'c', 'd', 'e']);
  await subscription.stop();
  await assert.rejects(reader.publish([{ topic, partition: 0, value: 'x' }]), hasCode('BAD_ARGUMENT', false));
  await assert.rejects(reader.writer('any'), hasCode('BAD_ARGUMENT', false));
  await tx.close();
  await writer.close();

  // Half a frame at the end (a write in progress, as the reader may see it): not visible, and left alone.
  const segment = join(dir, readdirSync(dir).find((n) => n.endsWith('.seg')) ?? '');
  appendFileSync(segment, Buffer.from('LGF1\x00\x00\x01\x00partial', 'latin1'));
  const size = statSync(segment).size;
  assert.deepEqual(values(await drain(reader.readRange(topic, 0, '0'), 10_000, 'read with a torn tail')), ['a', 'b', 'c', 'd', 'e']);
  assert.equal((await reader.endOffsets(topic)).get(0), '5');
  assert.equal(statSync(segment).size, size, 'a reader never cuts the file');
  await reader.close();
});
