import { closeSync, createReadStream, createWriteStream, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { once } from 'node:events';
import {
  BUNDLE_FORMAT,
  BUNDLE_VERSION,
  formatTrailer,
  signNote,
  type Entry,
  type NoteSigner,
  type PartitionSummary,
} from '@agent-ledger/core';

const FLUSH_BYTES = 1 << 20;

/**
 * Writes a bundle whose entries arrive interleaved across partitions but must
 * be stored partition by partition: each partition streams to its own
 * temporary file, and `finish` joins header, partitions and trailer. Memory
 * stays at one buffer per partition whatever the bundle's size.
 */
export class BundleFileWriter {
  readonly #out: string;
  readonly #origin: string;
  readonly #parts: { path: string; fd: number; buffer: string[]; bytes: number; checkpoints: number }[] = [];

  constructor(out: string, origin: string, partitions: number) {
    this.#out = out;
    this.#origin = origin;
    for (let p = 0; p < partitions; p++) {
      const path = `${out}.part${p}.tmp`;
      this.#parts.push({ path, fd: openSync(path, 'w'), buffer: [], bytes: 0, checkpoints: 0 });
    }
  }

  #write(partition: number, line: string): void {
    const part = this.#parts[partition];
    if (part === undefined) throw new RangeError(`no partition ${partition}`);
    part.buffer.push(line, '\n');
    part.bytes += line.length + 1;
    if (part.bytes >= FLUSH_BYTES) this.#flush(part);
  }

  #flush(part: { fd: number; buffer: string[]; bytes: number }): void {
    if (part.buffer.length === 0) return;
    writeSync(part.fd, part.buffer.join(''));
    part.buffer = [];
    part.bytes = 0;
  }

  /** Appends an entry line to its partition. */
  entry(entry: Entry): void {
    this.#write(entry.partition, JSON.stringify({ kind: 'entry', ...entry }));
  }

  /** Appends a checkpoint line (a signed note) to its partition. */
  checkpoint(partition: number, note: string): void {
    this.#write(partition, JSON.stringify({ kind: 'checkpoint', partition, note }));
    const part = this.#parts[partition];
    if (part !== undefined) part.checkpoints += 1;
  }

  /** Checkpoint lines written so far for a partition. */
  checkpoints(partition: number): number {
    return this.#parts[partition]?.checkpoints ?? 0;
  }

  /**
   * Joins everything into the bundle, with a trailer signed by `signer` over
   * every partition's final size and root, and removes the temporary files.
   */
  async finish(summaries: readonly PartitionSummary[], signer: NoteSigner, exportedAt: Date = new Date()): Promise<void> {
    const header = JSON.stringify({ kind: 'header', format: BUNDLE_FORMAT, version: BUNDLE_VERSION, origin: this.#origin, exportedAt: exportedAt.toISOString(), partitions: summaries.map((p) => p.size) });
    const trailer = JSON.stringify({ kind: 'trailer', note: signNote(formatTrailer(this.#origin, summaries), [signer]) });
    for (const part of this.#parts) {
      this.#flush(part);
      closeSync(part.fd);
    }
    const tmp = `${this.#out}.tmp`;
    const out = createWriteStream(tmp);
    out.write(`${header}\n`);
    for (const part of this.#parts) {
      for await (const chunk of createReadStream(part.path, { highWaterMark: 1 << 20 })) {
        if (!out.write(chunk)) await once(out, 'drain');
      }
      rmSync(part.path);
    }
    await new Promise<void>((resolve, reject) => out.end(`${trailer}\n`, (err?: Error | null) => (err ? reject(err) : resolve())));
    renameSync(tmp, this.#out);
  }

  /** Removes temporary files after a failure. */
  abort(): void {
    for (const part of this.#parts) {
      try {
        closeSync(part.fd);
      } catch {
        // already closed
      }
      rmSync(part.path, { force: true });
    }
  }
}
