// A child process for the crash tests: commits transactions to an embedded log
// as fast as it can and prints `ack W I` after commit I of writer W resolved.
// The test kills it with SIGKILL at a random moment. It resumes from the
// offset its group committed, as a restarted role would.
import { randomBytes } from 'node:crypto';
import { createEmbeddedBus } from '../../src/index.js';

import { CRASH_IN, CRASH_OUT, CRASH_WRITERS, RECORDS_PER_TX } from './crash-shape.js';

const dir = process.argv[2];
if (dir === undefined) throw new Error('usage: crash-writer DIR');
const bus = createEmbeddedBus({ dir });
await bus.ensureTopics([
  { name: CRASH_IN, partitions: CRASH_WRITERS },
  { name: CRASH_OUT, partitions: 2 },
]);

async function run(w: number): Promise<void> {
  const groupId = `crash-w${w}`;
  const writer = await bus.writer(`crash-writer-${w}`);
  const committed = (await bus.committedOffsets(groupId, CRASH_IN)).get(w);
  for (let i = Number(committed ?? '0'); ; i++) {
    // Values of 1 to 200 KiB: frames large enough that a kill often lands while one is being written.
    const records = Array.from({ length: RECORDS_PER_TX }, (_, j) => ({
      topic: CRASH_OUT,
      partition: j % 2,
      key: `w${w}`,
      value: `w${w}:tx${i}:r${j}:${randomBytes(512 + Math.floor(Math.random() * 100_000)).toString('hex')}`,
    }));
    await writer.commit(records, { groupId, topic: CRASH_IN, partition: w, nextOffset: String(i + 1) });
    process.stdout.write(`ack ${w} ${i}\n`);
  }
}

await Promise.all(Array.from({ length: CRASH_WRITERS }, (_, w) => run(w)));
