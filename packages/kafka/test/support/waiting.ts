/** Resolves `work`, or fails the test after `ms` naming `what`: no test waits without a bound. */
export async function within<T>(ms: number, what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Polls `condition` every 25 ms until it holds, failing after `ms`. */
export async function waitFor(condition: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Drains an async iterable, failing after `ms` if it has not ended. */
export async function drain<T>(iterable: AsyncIterable<T>, ms: number, what: string): Promise<T[]> {
  return within(
    ms,
    what,
    (async () => {
      const out: T[] = [];
      for await (const item of iterable) out.push(item);
      return out;
    })(),
  );
}

/** Whether a rejection is a LedgerError-shaped error with `code` (tests assert codes, never messages). */
export function hasCode(code: string, retryable?: boolean): (err: unknown) => boolean {
  return (err: unknown) => {
    const e = err as { code?: unknown; retryable?: unknown };
    return e.code === code && (retryable === undefined || e.retryable === retryable);
  };
}
