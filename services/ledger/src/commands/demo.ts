import { synthesizeDemo } from '../demo/synthesize.js';
import { Exit, UsageError } from '../cli-error.js';
import { reportSuccess } from './json-output.js';

/** Options of `ledger demo`. */
export interface DemoCommandOptions {
  readonly events: number;
  readonly out: string;
  readonly trustRootOut: string;
  readonly partitions?: number;
  readonly checkpointEvery?: number;
  readonly seed?: number;
  readonly json?: boolean;
}

/** Writes a synthetic, valid ledger bundle and its trust root; prints what it holds. */
export async function demoCommand(options: DemoCommandOptions): Promise<number> {
  if (!Number.isSafeInteger(options.events) || options.events < 50) throw new UsageError('--events must be a whole number of at least 50');
  const started = Date.now();
  const summary = await synthesizeDemo({
    events: options.events,
    out: options.out,
    trustRootOut: options.trustRootOut,
    ...(options.partitions === undefined ? {} : { eventPartitions: options.partitions }),
    ...(options.checkpointEvery === undefined ? {} : { checkpointEvery: options.checkpointEvery }),
    ...(options.seed === undefined ? {} : { seed: options.seed }),
    onProgress: (n) => {
      if (process.stderr.isTTY) process.stderr.write(`\rsynthesized ${n} entries`);
    },
  });
  if (process.stderr.isTTY) process.stderr.write('\n');
  const seconds = (Date.now() - started) / 1000;
  const lines = [
    `wrote ${summary.entries} entries over ${summary.partitions} partitions to ${options.out} in ${seconds.toFixed(1)}s`,
    `trust root: ${options.trustRootOut}`,
    `decisions: ${Object.entries(summary.byOutcome).map(([k, v]) => `${k}=${v}`).join(' ')}`,
    `refusals by code: ${Object.entries(summary.refusalsByCode).map(([k, v]) => `${k}=${v}`).join(' ')}`,
    `verify it: npx ledger verify-chain ${options.out} --trust-root ${options.trustRootOut}`,
  ];
  reportSuccess(options.json, lines, {
    entries: summary.entries,
    partitions: summary.partitions,
    out: options.out,
    trustRoot: options.trustRootOut,
    seconds,
    byOutcome: summary.byOutcome,
    refusalsByCode: summary.refusalsByCode,
  });
  return Exit.ok;
}
