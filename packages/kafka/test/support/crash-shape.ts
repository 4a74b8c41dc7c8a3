/** The shape of the crash tests' log: what support/crash-writer.ts writes and the test checks. */
export const CRASH_IN = 'crash.in';
export const CRASH_OUT = 'crash.out';
export const CRASH_WRITERS = 2;
export const RECORDS_PER_TX = 5;
