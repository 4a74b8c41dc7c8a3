/**
 * Awaits a clean-up step whose failure must not replace the error being
 * reported (disconnecting a producer that already failed, leaving a group on
 * shutdown).
 */
export async function quietly(step: Promise<unknown>): Promise<void> {
  try {
    await step;
  } catch {
    // The caller is already reporting the failure that matters.
  }
}
