import { AssignerProtocol } from 'kafkajs';
import type { PartitionAssigner } from 'kafkajs';

/** The protocol name the members of a range reader's throwaway group agree on. */
const NAME = 'LedgerOnePartition';

/**
 * A group assignor that gives `partition` of `topic`, and nothing else, to the
 * first member. kafkajs 2.2.4 has no manual assignment; a range reader uses it
 * in a group of its own (one member), so that it fetches just the partition it
 * reads instead of every partition of the topic.
 */
export function onePartitionAssigner(topic: string, partition: number): PartitionAssigner {
  return partitionsAssigner(topic, [partition]);
}

/** The same for a set of partitions (a member that takes its partitions without a rebalance). */
export function partitionsAssigner(topic: string, partitions: readonly number[]): PartitionAssigner {
  return () => ({
    name: NAME,
    version: 0,
    assign: ({ members }) =>
      Promise.resolve(
        members.map((member, i) => ({
          memberId: member.memberId,
          memberAssignment: AssignerProtocol.MemberAssignment.encode({
            version: 0,
            assignment: i === 0 ? { [topic]: [...partitions] } : {},
            userData: Buffer.alloc(0),
          }),
        })),
      ),
    protocol: ({ topics }) => ({
      name: NAME,
      metadata: AssignerProtocol.MemberMetadata.encode({ version: 0, topics, userData: Buffer.alloc(0) }),
    }),
  });
}
