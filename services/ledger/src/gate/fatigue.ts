import { MAX_MIN_READ_MS, type FatigueSettings } from '@agent-ledger/rulebook';

/**
 * Fatigue settings from the environment: LEDGER_SUGGEST_AFTER (approvals,
 * 0 disables suggestions), LEDGER_SUGGEST_WINDOW_MS and LEDGER_MIN_READ_MS
 * (0 disables the rubber-stamp signal). Unset values keep the rulebook's
 * defaults; the rules themselves are the rulebook's.
 */
export function fatigueSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): Partial<FatigueSettings> {
  const settings: { suggestAfter?: number; suggestWindowMs?: number; minReadMs?: number } = {};
  const read = (name: string, max: number): number | undefined => {
    const text = env[name];
    if (text === undefined || text === '') return undefined;
    if (!/^\d{1,10}$/.test(text) || Number(text) > max) throw new Error(`${name}: expected a whole number up to ${max}, not ${text}`);
    return Number(text);
  };
  const suggestAfter = read('LEDGER_SUGGEST_AFTER', 64);
  const suggestWindowMs = read('LEDGER_SUGGEST_WINDOW_MS', 30 * 86_400_000);
  const minReadMs = read('LEDGER_MIN_READ_MS', MAX_MIN_READ_MS);
  if (suggestAfter !== undefined) settings.suggestAfter = suggestAfter;
  if (suggestWindowMs !== undefined) settings.suggestWindowMs = suggestWindowMs;
  if (minReadMs !== undefined) settings.minReadMs = minReadMs;
  return settings;
}
