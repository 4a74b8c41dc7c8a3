import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { LedgerError, type ReasonCode } from '@agent-ledger/refusals';
import { EnvelopeSchema, canonicalJson, nodeEd25519, parseStrictJsonBytes, verifyEnvelopeSignatures, type Envelope } from '@agent-ledger/core';
import { INTAKE_LIMITS } from './admission.js';

/**
 * What checking one intake record's signatures found: the keys whose
 * signatures verified, the LedgerError that `verifyEnvelopeSignatures`
 * threw, or `null` when the record did not parse as an envelope (admission
 * refuses it on its own parse, with its own message). A verdict with
 * `canonical` is a signature made in this process over exactly that canonical
 * statement, by seeds whose key ids were derived from them: it stands only
 * for a record whose statement canonicalizes to the same string (otherwise
 * the signatures are checked as usual).
 */
export type SignatureVerdict = { readonly signers: readonly string[]; readonly canonical?: string } | { readonly code: ReasonCode; readonly message: string } | null;

/**
 * The verdict for one raw intake record, computed exactly as `admit` would:
 * strict parse, envelope schema, canonical statement, every signature under
 * the system's Ed25519 rule. Runs on a worker thread.
 */
export function signatureVerdict(raw: Uint8Array): SignatureVerdict {
  let envelope: Envelope;
  try {
    const parsed = EnvelopeSchema.safeParse(parseStrictJsonBytes(raw, INTAKE_LIMITS));
    if (!parsed.success) return null;
    envelope = parsed.data as unknown as Envelope;
  } catch {
    return null;
  }
  try {
    return { signers: verifyEnvelopeSignatures(envelope, canonicalJson(envelope.statement), nodeEd25519) };
  } catch (err) {
    if (err instanceof LedgerError) return { code: err.code, message: err.message };
    return null;
  }
}

const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
import(${JSON.stringify(new URL('./signature-worker.js', import.meta.url).href)}).then(({ verdicts }) => {
  parentPort.on('message', ({ id, raws }) => parentPort.postMessage({ id, verdicts: verdicts(raws) }));
  parentPort.postMessage({ ready: true });
});
`;

/** Below this many records a batch is checked inline: a worker round trip costs more than it saves. */
export const INLINE_BELOW = 8;

/**
 * Signature checks of intake batches on worker threads, so that the
 * sequencer's event loop (shared with the gate, the projector and the API in
 * `serve --target all`) spends its time admitting and chaining rather than
 * in Ed25519. The verdicts are advisory inputs to `admit`, bound to the exact
 * raw bytes they were computed from; admission itself (routing, keys, roles,
 * freshness, grant rules) stays on the sequencer's thread, in order.
 */
export class SignaturePool {
  readonly #workers: Worker[] = [];
  readonly #pending = new Map<number, { resolve: (v: SignatureVerdict[]) => void; reject: (e: Error) => void }>();
  #ready: Promise<void>;
  #next = 0;
  #id = 0;
  #closed = false;

  constructor(size = Math.max(1, Math.min(4, availableParallelism() - 1))) {
    const ready: Promise<void>[] = [];
    for (let i = 0; i < size; i++) {
      const worker = new Worker(WORKER_SOURCE, { eval: true });
      worker.unref();
      ready.push(
        new Promise((resolve, reject) => {
          worker.once('error', reject);
          worker.on('message', (message: { ready?: boolean; id?: number; verdicts?: SignatureVerdict[] }) => {
            if (message.ready === true) return resolve();
            const job = this.#pending.get(message.id as number);
            if (job === undefined) return;
            this.#pending.delete(message.id as number);
            job.resolve(message.verdicts as SignatureVerdict[]);
          });
        }),
      );
      worker.on('error', (err) => this.#failAll(err));
      this.#workers.push(worker);
    }
    this.#ready = Promise.all(ready).then(() => undefined);
  }

  #failAll(err: Error): void {
    for (const job of this.#pending.values()) job.reject(err);
    this.#pending.clear();
  }

  /** Verdicts for `raws`, in order: inline for small batches, else split across the workers. */
  async verdicts(raws: readonly Uint8Array[]): Promise<SignatureVerdict[]> {
    if (raws.length < INLINE_BELOW || this.#closed) return raws.map(signatureVerdict);
    await this.#ready;
    const chunk = Math.ceil(raws.length / this.#workers.length);
    const parts: Promise<SignatureVerdict[]>[] = [];
    for (let start = 0; start < raws.length; start += chunk) {
      const worker = this.#workers[this.#next++ % this.#workers.length] as Worker;
      const id = this.#id++;
      parts.push(
        new Promise((resolve, reject) => {
          this.#pending.set(id, { resolve, reject });
          worker.postMessage({ id, raws: raws.slice(start, start + chunk) });
        }),
      );
    }
    return (await Promise.all(parts)).flat();
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#failAll(new Error('signature pool closed'));
    await Promise.all(this.#workers.map((w) => w.terminate()));
  }
}
