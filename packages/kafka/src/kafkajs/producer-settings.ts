import { Partitioners } from 'kafkajs';
import type { ProducerConfig } from 'kafkajs';

/**
 * Settings every producer of the adapter shares.
 *
 * - `createPartitioner` is given only to silence kafkajs's partitioner
 *   warning: every record carries an explicit partition, so it is never used.
 * - `maxInFlightRequests: 1` keeps order within a partition and is what
 *   kafkajs requires for idempotence and transactions.
 * - `retry` is bounded. An idempotent kafkajs producer otherwise retries
 *   forever, which turns a dead broker into a caller that never returns. The
 *   bound is safe because the adapter discards a producer after any failure,
 *   so no sequence numbers are reused.
 * - `allowAutoTopicCreation: false`: a typo must not create a topic on a
 *   cluster that allows it; topics come from `ensureTopics` only.
 */
export function producerSettings(transactionalId?: string): ProducerConfig {
  return {
    allowAutoTopicCreation: false,
    createPartitioner: Partitioners.DefaultPartitioner,
    idempotent: true,
    maxInFlightRequests: 1,
    retry: { retries: 5, initialRetryTime: 300, maxRetryTime: 10_000 },
    ...(transactionalId === undefined ? {} : { transactionalId }),
  };
}
