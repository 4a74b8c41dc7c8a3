import { randomBytes } from 'node:crypto';
import { linkSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { OperationalCode, OperationalError } from '@agent-ledger/refusals';

/** What the lock file holds. */
interface LockContent {
  readonly pid: number;
  /** Incremented by every process that opens the log for writing: the process epoch. */
  readonly epoch: number;
  /** Random per opening, so a lock rewritten by a successor never reads as ours. */
  readonly nonce: string;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as { code?: string }).code === 'EPERM';
  }
}

function readLock(path: string): LockContent | null {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return null;
    throw err;
  }
  try {
    const parsed = JSON.parse(text) as Partial<LockContent>;
    if (typeof parsed.pid === 'number' && typeof parsed.epoch === 'number' && typeof parsed.nonce === 'string') return parsed as LockContent;
  } catch {
    // A lock file torn by a crash while it was written: treated as stale.
  }
  return { pid: 0, epoch: 0, nonce: '' };
}

/**
 * The one-process-writes rule of a log directory: `LOCK` names the process
 * that writes it and that process's epoch. A second process that opens the
 * directory for writing while the first is alive is refused; a lock left by a
 * dead process (kill -9) is taken over with the next epoch. The lock is
 * created with link(2), which fails when the name exists, and a stale one is
 * moved aside with rename(2) first, so two processes racing for a stale lock
 * cannot both win. Before every append the writer re-reads the lock
 * ({@link DirectoryLock.check}): a process whose lock was taken over is fenced.
 */
export class DirectoryLock {
  readonly path: string;
  readonly epoch: number;
  readonly #nonce: string;
  #released = false;

  private constructor(path: string, content: LockContent) {
    this.path = path;
    this.epoch = content.epoch;
    this.#nonce = content.nonce;
  }

  /** Takes the lock of `dir`, or throws UNAVAILABLE naming the live process that holds it. */
  static acquire(dir: string): DirectoryLock {
    const path = join(dir, 'LOCK');
    for (let attempt = 0; attempt < 5; attempt++) {
      const held = readLock(path);
      if (held !== null && held.pid !== 0 && held.pid !== process.pid && alive(held.pid)) {
        throw new OperationalError(OperationalCode.UNAVAILABLE, `the log in ${dir} is open for writing by process ${held.pid} (stop it, or read with a read-only bus)`, { retryable: false });
      }
      const nonce = randomBytes(8).toString('hex');
      const content: LockContent = { pid: process.pid, epoch: (held?.epoch ?? 0) + 1, nonce };
      const temp = join(dir, `LOCK.${nonce}`);
      writeFileSync(temp, JSON.stringify(content));
      try {
        if (held !== null) {
          // Move the stale lock aside; whoever loses this race finds ENOENT and starts over.
          const aside = join(dir, `LOCK.stale.${nonce}`);
          try {
            renameSync(path, aside);
          } catch (err) {
            if ((err as { code?: string }).code === 'ENOENT') continue;
            throw err;
          }
          rmSync(aside, { force: true });
        }
        try {
          linkSync(temp, path);
        } catch (err) {
          if ((err as { code?: string }).code === 'EEXIST') continue;
          throw err;
        }
        return new DirectoryLock(path, content);
      } finally {
        rmSync(temp, { force: true });
      }
    }
    throw new OperationalError(OperationalCode.UNAVAILABLE, `could not take the lock of ${dir}: other processes keep taking it`, { retryable: true });
  }

  /** True while the lock file still names this opening. */
  check(): boolean {
    if (this.#released) return false;
    const held = readLock(this.path);
    return held !== null && held.nonce === this.#nonce;
  }

  /** Removes the lock if it is still this opening's. Idempotent. */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    if (readLock(this.path)?.nonce === this.#nonce) {
      try {
        unlinkSync(this.path);
      } catch {
        // Already gone.
      }
    }
  }
}
