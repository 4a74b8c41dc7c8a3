import { createReadStream, statSync } from 'node:fs';
import { LedgerError, OperationalCode, OperationalError, ReasonCode } from '@agent-ledger/refusals';
import { availableParallelism } from 'node:os';
import { SingleBar, Presets } from 'cli-progress';
import { verifyBundle, type VerificationReport } from '@agent-ledger/verifier';
import { readSmallFile, readTrustRoot } from '../trust-root-file.js';
import { Exit } from '../cli-error.js';
import { reportFailure, reportSuccess } from './json-output.js';

/** Largest known-checkpoint file read: a signed note is a few hundred bytes. */
const MAX_CHECKPOINT_BYTES = 64 * 1024;

/** Options of `ledger verify-chain`. */
export interface VerifyChainOptions {
  readonly trustRoot: string;
  readonly json?: boolean;
  readonly knownCheckpoint?: string;
  readonly allowUncoveredTail?: boolean;
  readonly workers?: number;
}

/**
 * Verifies a bundle offline; prints a verdict; returns the exit status. With
 * `--json`: `{"ok":true,"entries","failure":null}`, or the failure object
 * with the first failure's code (exit 1) and `entries` and `failure`
 * (`{partition,index,code,message}`) beside it.
 */
export async function verifyChainCommand(bundlePath: string, options: VerifyChainOptions): Promise<number> {
  const trustRoot = readTrustRoot(options.trustRoot);
  let knownCheckpoint: string | undefined;
  if (options.knownCheckpoint !== undefined) knownCheckpoint = readSmallFile(options.knownCheckpoint, MAX_CHECKPOINT_BYTES, 'known checkpoint');
  let size: number;
  try {
    const stat = statSync(bundlePath);
    // A device, FIFO or directory may never end (/dev/zero): only a regular file is a bundle.
    if (!stat.isFile()) throw new OperationalError(OperationalCode.BAD_ARGUMENT, `${bundlePath} is not a regular file`);
    size = stat.size;
  } catch (err) {
    if (err instanceof OperationalError) throw err;
    throw new OperationalError(OperationalCode.NOT_FOUND, `cannot read ${bundlePath}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { cause: err });
  }
  const workers = options.workers ?? Math.min(availableParallelism(), 8);
  const bar = process.stderr.isTTY && options.json !== true ? new SingleBar({ format: 'verify-chain [{bar}] {percentage}% | {entries} entries | eta {eta}s', stream: process.stderr }, Presets.shades_classic) : undefined;
  bar?.start(size, 0, { entries: 0 });
  const started = process.hrtime.bigint();
  let report: VerificationReport;
  try {
    report = await verifyBundle(createReadStream(bundlePath, { highWaterMark: 1 << 20 }), trustRoot, {
      workers,
      allowUncoveredTail: options.allowUncoveredTail === true,
      ...(knownCheckpoint === undefined ? {} : { knownCheckpoint }),
      onProgress: (bytes, entries) => bar?.update(Math.min(bytes, size), { entries }),
    });
  } finally {
    bar?.stop();
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const f = report.failure;
  if (report.ok && f === null) {
    const parts = report.partitions.map((p) => `${p.partition}:${p.size}`).join(' ');
    reportSuccess(options.json, [`OK: ${report.entries} entries verified in ${seconds.toFixed(2)}s (partition:size ${parts})`], { entries: report.entries, failure: null });
    return Exit.ok;
  }
  // The verifier stops at the first failure and names it; not ok without one is not expected, and still a failure.
  if (f === null) return reportFailure(options.json, ['FAIL: INTEGRITY_FAILURE: the bundle does not verify'], new LedgerError(ReasonCode.INTEGRITY_FAILURE, 'the bundle does not verify'), { entries: report.entries, failure: null });
  const line = f.line === null ? '' : ` (line ${f.line})`;
  return reportFailure(options.json, [`FAIL: partition ${f.partition} index ${f.index}: ${f.code}: ${f.message}${line}`], new LedgerError(f.code, `partition ${f.partition} index ${f.index}: ${f.message}${line}`), {
    entries: report.entries,
    failure: { partition: f.partition, index: f.index, code: f.code, message: f.message },
  });
}
