import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { kafkaBusFor } from '../kafka-client.js';
import { createEmbeddedBus, readEmbeddedLayout, type InRecord, type LogBus, type OutRecord } from '@agent-ledger/kafka';
import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import { Exit, UsageError } from '../cli-error.js';
import { retrying } from '../dependency-watch.js';
import { embeddedPaths, isEmbedded } from '../dev-storage.js';
import { LedgerHome } from '../home.js';
import { reportSuccess } from './json-output.js';

/** Records published to Kafka per call. */
const CHUNK = 200;

async function readAll(bus: LogBus, topic: string, partition: number): Promise<InRecord[]> {
  // A topic created a moment ago answers "no leader" until the controller elects one: retried while retryable.
  for (let attempt = 1; ; attempt++) {
    try {
      const out: InRecord[] = [];
      for await (const record of bus.readRange(topic, partition, '0')) out.push(record);
      return out;
    } catch (err) {
      if (attempt >= 60 || (err as { retryable?: unknown }).retryable !== true) throw err;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

const sameRecord = (a: InRecord, b: InRecord): boolean =>
  a.value.equals(b.value) && a.key === b.key && JSON.stringify(Object.entries(a.headers).sort()) === JSON.stringify(Object.entries(b.headers).sort());

/**
 * `ledger move-to-kafka`: moves an embedded installation (`ledger dev`) to
 * Kafka and PostgreSQL. With `ledger dev` stopped (the log's lock is held for
 * the whole move), every topic of the embedded log is created on the brokers
 * and its records are published in order, partition by partition, keys,
 * headers and values byte for byte (entries, chains, checkpoints, intake,
 * refusal topics); every partition is read back and compared; each consumer
 * group's committed offsets are translated to the Kafka offsets of the same
 * records and committed, so no role redoes or skips work. Then the
 * configuration says Kafka: `ledger serve` runs it (the projection is rebuilt
 * into the new database from offset 0) and `verify-chain` passes across the
 * move. An interrupted move runs again: records already on Kafka are checked
 * to be the same, and the rest follow.
 */
export async function moveToKafkaCommand(options: { home?: string; brokers?: string; pgUrl?: string; json?: boolean }): Promise<number> {
  const home = LedgerHome.open(options.home);
  if (!isEmbedded(home)) throw new UsageError(`${home.dir} already keeps its log on Kafka and Postgres (ledger serve)`);
  const brokers = options.brokers === undefined ? home.config.kafkaBrokers : options.brokers.split(',').map((b) => b.trim()).filter((b) => b !== '');
  const pgUrl = options.pgUrl ?? home.config.pgUrl;
  const paths = embeddedPaths(home);
  // Writable: takes the log's lock, so ledger dev cannot run (or start) during the move.
  const source = createEmbeddedBus({ dir: paths.log });
  const target = kafkaBusFor(home, `ledger-move-${process.pid}`, { logLevel: 'nothing', brokers });
  // With --json, stdout is the one report object: progress and retries go to stderr.
  const say = (line: string): void => void (options.json === true ? process.stderr : process.stdout).write(`${line}\n`);
  try {
    await source.ensureTopics([]);
    const layout = await readEmbeddedLayout(paths.log);
    await target.ensureTopics(layout.topics.map((t) => ({ name: t.name, partitions: t.partitions, config: t.config })));
    /** Per topic and partition: the embedded offsets of the records, in order, and their Kafka offsets. */
    const moved = new Map<string, { from: bigint[]; to: bigint[]; end: bigint }>();
    let total = 0;
    for (const topic of layout.topics) {
      for (let partition = 0; partition < topic.partitions; partition++) {
        const records = await readAll(source, topic.name, partition);
        // A broker blip mid-copy is retried from what the brokers then hold: the
        // prefix already there is checked record by record, never sent twice.
        await retrying(`copying ${topic.name}/${partition}`, say, async () => {
          const already = await readAll(target, topic.name, partition);
          if (already.length > records.length || already.some((r, i) => !sameRecord(r, records[i] as InRecord))) {
            throw new LedgerError(ReasonCode.INTEGRITY_FAILURE, `${topic.name}/${partition} on the brokers holds records that are not this log's: move into an empty topic (another topic prefix, or delete it)`);
          }
          const rest = records.slice(already.length);
          for (let i = 0; i < rest.length; i += CHUNK) {
            const chunk: OutRecord[] = rest.slice(i, i + CHUNK).map((r) => ({ topic: topic.name, partition, key: r.key, value: r.value, headers: r.headers }));
            await target.publish(chunk);
          }
        });
        const copied = await readAll(target, topic.name, partition);
        if (copied.length !== records.length || copied.some((r, i) => !sameRecord(r, records[i] as InRecord))) {
          throw new LedgerError(ReasonCode.INTEGRITY_FAILURE, `${topic.name}/${partition}: what the brokers hold after the move differs from the embedded log (${copied.length} records for ${records.length})`);
        }
        const end = BigInt((await target.endOffsets(topic.name)).get(partition) ?? '0');
        moved.set(`${topic.name}\0${partition}`, { from: records.map((r) => BigInt(r.offset)), to: copied.map((r) => BigInt(r.offset)), end });
        total += records.length;
      }
    }
    // Group offsets: the next record a group reads is the same record on both sides.
    const writer = await target.writer(`${home.config.topicPrefix}-move`);
    let groups = 0;
    try {
      for (const o of layout.groupOffsets) {
        const partition = moved.get(`${o.topic}\0${o.partition}`);
        if (partition === undefined) continue;
        const next = BigInt(o.nextOffset);
        const index = partition.from.findIndex((offset) => offset >= next);
        const nextOffset = index < 0 ? partition.end : (partition.to[index] as bigint);
        // Committing an offset again is harmless: a transaction the coordinator
        // is still settling (CONCURRENT_TRANSACTIONS, UNAVAILABLE) is retried.
        await retrying(`offsets of ${o.groupId}`, say, () => writer.commit([], { groupId: o.groupId, topic: o.topic, partition: o.partition, nextOffset: nextOffset.toString() }));
        groups += 1;
      }
    } finally {
      await writer.close();
    }
    // From now on the installation is on Kafka and Postgres.
    const configPath = join(home.dir, 'config.json');
    const config = JSON.parse(readFileSync(configPath, 'utf8')) as Record<string, unknown>;
    delete config['storage'];
    config['kafkaBrokers'] = brokers;
    config['pgUrl'] = pgUrl;
    writeFileSync(configPath, `${JSON.stringify(config, null, 2)}\n`);
    reportSuccess(
      options.json,
      [
        `moved ${total} records of ${layout.topics.length} topics to ${brokers.join(',')} (read back and compared byte for byte) and ${groups} consumer-group offsets`,
        `${home.dir}/config.json now names Kafka (${brokers.join(',')}) and Postgres (${pgUrl}); the embedded log and database stay in ${paths.log} and ${paths.database}`,
        `next: npx ledger serve --target all --home ${home.dir}   (the projection is rebuilt from the log)`,
      ],
      { home: home.dir, records: total, topics: layout.topics.length, consumerGroupOffsets: groups, brokers, pgUrl, embeddedLog: paths.log, embeddedDatabase: paths.database },
    );
    return Exit.ok;
  } finally {
    await target.close();
    await source.close();
  }
}
