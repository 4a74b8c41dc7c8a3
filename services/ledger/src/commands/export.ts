import { MerkleAccumulator, fromHex, nodeEd25519, sequencerNoteSigner, toBase64, type Entry } from '@agent-ledger/core';
import { BundleFileWriter } from '../bundle-writer.js';
import { readingBus } from '../dev-storage.js';
import { Exit } from '../cli-error.js';
import { parseEntry } from '../gate/gate-worker.js';
import { LedgerHome } from '../home.js';
import { entryLocation, topicNames } from '../topics.js';
import { reportSuccess } from './json-output.js';

/**
 * `ledger export --out BUNDLE`: writes the committed log, every partition
 * through its newest checkpoint (an events partition through the newest one
 * whose entries cite only exported authority entries), as a bundle (SPEC.md section 8) that
 * `ledger verify-chain BUNDLE --trust-root .ledger/trust-root.json` checks
 * offline. Reads with read_committed: nothing aborted or in flight is exported.
 */
export async function exportCommand(options: { out: string; home?: string; json?: boolean }): Promise<number> {
  const home = LedgerHome.open(options.home);
  const bus = readingBus(home, `ledger-export-${process.pid}`);
  const partitions = home.config.eventPartitions + 1;
  const topics = topicNames(home.config.topicPrefix);
  const writer = new BundleFileWriter(options.out, home.trustRoot.origin, partitions);
  try {
    const summaries = [];
    let total = 0;
    let authoritySize = 0;
    for (let p = 0; p < partitions; p++) {
      const checkpoints: { size: number; note: string }[] = [];
      for await (const record of bus.readRange(topics.checkpoints, p, '0')) {
        const cp = JSON.parse(record.value.toString('utf8')) as { size: number; note: string };
        if (cp.size > (checkpoints.at(-1)?.size ?? 0)) checkpoints.push(cp);
      }
      const size = checkpoints.at(-1)?.size ?? 0;
      const tree = new MerkleAccumulator();
      let next = 0;
      if (size > 0) {
        const { topic, partition } = entryLocation(topics, p);
        // Events entries cite the authority index they were admitted at. The
        // authority stream was cut at its newest checkpoint first; an events
        // partition is cut at its newest checkpoint whose entries all cite
        // an authority index inside that cut, so every citation resolves.
        let segment: Entry[] = [];
        let citesBeyond = false;
        for await (const record of bus.readRange(topic, partition, '0')) {
          const entry = parseEntry(record.value);
          if (entry.index !== tree.size + segment.length) continue;
          segment.push(entry);
          if (p !== 0 && entry.authorityIndex > authoritySize) citesBeyond = true;
          const sealed = tree.size + segment.length;
          if (checkpoints[next]?.size !== sealed) continue;
          if (citesBeyond) break;
          for (const e of segment) {
            writer.entry(e);
            tree.append(fromHex(e.hash, 32));
          }
          segment = [];
          while (checkpoints[next] !== undefined && checkpoints[next]?.size === tree.size) writer.checkpoint(p, (checkpoints[next++] as { note: string }).note);
          if (tree.size === size) break;
        }
      }
      if (p === 0) authoritySize = tree.size;
      total += tree.size;
      summaries.push({ partition: p, size: tree.size, checkpoints: next, root: toBase64(tree.root()) });
    }
    await writer.finish(summaries, sequencerNoteSigner(home.trustRoot.origin, home.key('sequencer'), nodeEd25519));
    reportSuccess(options.json, [`exported ${total} entries over ${partitions} partitions to ${options.out}`, `verify it: npx ledger verify-chain ${options.out} --trust-root ${home.dir}/trust-root.json`], {
      entries: total,
      out: options.out,
      trustRoot: `${home.dir}/trust-root.json`,
      partitions: summaries.map(({ partition, size, checkpoints }) => ({ partition, size, checkpoints })),
    });
    return Exit.ok;
  } catch (err) {
    writer.abort();
    throw err;
  } finally {
    await bus.close();
  }
}
