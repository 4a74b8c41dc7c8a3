import { z } from 'zod';

/** A token bucket's settings in the installation config (`api.rateLimit`, `api.refusalRecordLimit`). */
export const RateSettingsSchema = z.strictObject({
  burst: z.number().int().min(1).max(10_000_000),
  perSecond: z.number().positive().max(10_000_000),
});

/** A token bucket's settings: `burst` tokens at most, refilled at `perSecond`. */
export interface RateSettings {
  readonly burst: number;
  readonly perSecond: number;
}

/** Principals whose buckets are remembered at once; the least recently used is forgotten first (it was full or nearly). */
const MAX_BUCKETS = 10_000;

/**
 * Per-key token buckets (keys are principals, checked by signature before
 * they are charged, so nobody can spend another principal's budget). Memory
 * is bounded: at most {@link MAX_BUCKETS} keys are kept.
 */
export class RateLimiter {
  readonly #settings: RateSettings;
  readonly #buckets = new Map<string, { tokens: number; at: number }>();

  constructor(settings: RateSettings) {
    this.#settings = settings;
  }

  /** Takes one token for `key` at `nowMs`; false when the bucket is empty. */
  take(key: string, nowMs: number): boolean {
    const { burst, perSecond } = this.#settings;
    let bucket = this.#buckets.get(key);
    if (bucket === undefined) {
      bucket = { tokens: burst, at: nowMs };
      if (this.#buckets.size >= MAX_BUCKETS) {
        const oldest = this.#buckets.keys().next();
        if (oldest.done !== true) this.#buckets.delete(oldest.value);
      }
    } else {
      this.#buckets.delete(key);
      bucket.tokens = Math.min(burst, bucket.tokens + (Math.max(0, nowMs - bucket.at) * perSecond) / 1000);
      bucket.at = nowMs;
    }
    this.#buckets.set(key, bucket);
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }
}

/**
 * Settings from text `BURST/PER_SECOND` (e.g. `200/100`), as in
 * LEDGER_API_RATE_LIMIT; `fallback` when absent or empty. Throws on bad text.
 */
/**
 * Settings from an environment variable's text (`BURST/PER_SECOND`), which
 * wins when set; else the installation config's value; else `fallback`.
 */
export function rateSettingsFrom(text: string | undefined, fallback: RateSettings, name: string): RateSettings {
  if (text === undefined || text === '') return fallback;
  const m = /^(\d{1,7})\/(\d{1,7}(?:\.\d{1,3})?)$/.exec(text.trim());
  if (m === null || Number(m[1]) < 1 || Number(m[2]) <= 0) throw new Error(`${name}: expected BURST/PER_SECOND (e.g. 200/100), got ${text}`);
  return { burst: Number(m[1]), perSecond: Number(m[2]) };
}
