import type { Kafka } from 'kafkajs';

/**
 * How long a coordinator lookup is reused. kafkajs 2.2.4 sends FindCoordinator
 * before every transactional request (AddPartitionsToTxn, AddOffsetsToTxn,
 * TxnOffsetCommit, EndTxn) and before every admin OffsetFetch, never keeping
 * the answer: about five extra serial round trips per transaction, a third of
 * all the requests a ledger process sends. The bound keeps a moved coordinator
 * (broker failover) from being used for longer than this; kafkajs's own
 * retries back off for longer (300 ms and up) before asking again.
 */
const COORDINATOR_TTL_MS = 1_000;

interface CoordinatorQuery {
  readonly groupId: string;
  readonly coordinatorType?: number;
}

interface ClusterInternals {
  findGroupCoordinatorMetadata(query: CoordinatorQuery): Promise<unknown>;
}

function cacheOn(cluster: ClusterInternals): void {
  const lookup = cluster.findGroupCoordinatorMetadata;
  if (typeof lookup !== 'function') return;
  const known = new Map<string, { readonly metadata: unknown; readonly until: number }>();
  cluster.findGroupCoordinatorMetadata = async function cachedLookup(this: ClusterInternals, query: CoordinatorQuery): Promise<unknown> {
    const key = `${query.coordinatorType ?? 0}:${query.groupId}`;
    const hit = known.get(key);
    if (hit !== undefined && hit.until > Date.now()) return hit.metadata;
    known.delete(key);
    // Only answers are kept: a failed lookup is asked again next time.
    const metadata = await lookup.call(this, query);
    known.set(key, { metadata, until: Date.now() + COORDINATOR_TTL_MS });
    return metadata;
  };
}

/**
 * Makes every cluster `kafka` creates from now on (one per producer, consumer
 * and admin client) reuse coordinator lookups for `COORDINATOR_TTL_MS`. Reaches
 * into kafkajs 2.2.4's private cluster factory; if that is not there (another
 * kafkajs version), `kafka` is left as it is and only slower.
 */
export function reuseCoordinatorLookups(kafka: Kafka): Kafka {
  const holder = kafka as unknown as Record<symbol, unknown>;
  const factory = Object.getOwnPropertySymbols(holder).find((s) => s.description === 'private:Kafka:createCluster');
  const create = factory === undefined ? undefined : holder[factory];
  if (factory === undefined || typeof create !== 'function') return kafka;
  holder[factory] = (...args: unknown[]): unknown => {
    const cluster = (create as (...a: unknown[]) => unknown)(...args);
    if (typeof cluster === 'object' && cluster !== null) cacheOn(cluster as ClusterInternals);
    return cluster;
  };
  return kafka;
}
