import { CLEANUP_LIMIT_MS, withDeadline } from './deadline.js';

/**
 * Awaits a clean-up step whose failure must not replace the error being
 * reported (disconnecting a producer that already failed, leaving a group on
 * shutdown), for at most `limitMs`: a disconnect that waits on a broker that
 * never answers must not hold its caller (kafkajs's `disconnect` waits for a
 * fetch in flight), so after the limit the step is left to finish on its own.
 */
export async function quietly(step: Promise<unknown>, limitMs: number = CLEANUP_LIMIT_MS): Promise<void> {
  try {
    await withDeadline(step, limitMs, 'a clean-up step');
  } catch {
    // The caller is already reporting the failure that matters.
  }
}
