import { BoundedCache } from './bounded-cache.js';
import { R, type Findings } from './findings.js';

/**
 * Amounts of money in a call's arguments raise its tier with their size
 * (rules version 2). An amount is a number or a string such as "$98,000",
 * "98000 USD", "EUR 1.2k", under an argument name that means money
 * (`amount`, `amountUsd`, `total`, `price`, ...; `amount_cents` is in minor
 * units), or any string with a currency symbol or code. Currencies are
 * converted to US dollars at fixed, deliberately rounded rates: the point is
 * the order of magnitude, and a rule must not depend on a live rate.
 */

/** Rough US-dollar value of one unit (fixed; an order-of-magnitude guard, not accounting). */
const USD_PER_UNIT: Readonly<Record<string, number>> = {
  usd: 1, eur: 1.1, gbp: 1.25, chf: 1.1, cad: 0.75, aud: 0.65, nzd: 0.6, jpy: 0.0067, cny: 0.14, rmb: 0.14, hkd: 0.13, sgd: 0.75, inr: 0.012,
  krw: 0.00075, brl: 0.2, mxn: 0.055, zar: 0.055, sek: 0.095, nok: 0.095, dkk: 0.15, pln: 0.25, czk: 0.044, huf: 0.0028, try: 0.03, rub: 0.011,
  ils: 0.27, aed: 0.27, sar: 0.27, thb: 0.028, idr: 0.000063, php: 0.018, vnd: 0.00004, ngn: 0.00065, kes: 0.0077, egp: 0.02, ars: 0.001,
  btc: 60_000, eth: 3000, sol: 150, usdc: 1, usdt: 1, dai: 1, xmr: 150, ltc: 80,
};
const SYMBOLS: Readonly<Record<string, string>> = { $: 'usd', 'US$': 'usd', '€': 'eur', '£': 'gbp', '¥': 'jpy', '₹': 'inr', '₩': 'krw', '₿': 'btc', 'C$': 'cad', 'A$': 'aud', 'R$': 'brl', 'CHF': 'chf', '₽': 'rub', '₺': 'try', '₪': 'ils' };
const MULTIPLIERS: Readonly<Record<string, number>> = { k: 1e3, m: 1e6, mm: 1e6, b: 1e9, bn: 1e9, thousand: 1e3, million: 1e6, billion: 1e9 };

/** Argument names (lowercase, separators removed) whose numbers are amounts of money. */
const MONEY_KEY = /(?:amount|price|cost|fee|payment|payout|charge|balance|principal|salary|wage|bonus|refund|deposit|withdrawal|budget|spend|invoicetotal|grandtotal|subtotal|totalamount|total(?:usd|eur|gbp)?|value(?:usd|eur|gbp)|(?:usd|eur|gbp)$|^sum$|^total$|^value$|^net$|^gross$|^tip$|^bid$|^limit(?:usd)?$)/;
const NOT_MONEY_KEY = /(?:token|count|quantity|qty|percent|pct|rate$|ratio|id$|number$|version|port|timeout|retries|limit$|size|length|width|height|index|page|offset|year|month|day|hour|minute|second|ms$|score|weight|temperature|seed|replicas)/;
const GENERIC_KEY = /^(?:sum|total|value|net|gross|limit)$/;
const MINOR_UNITS_KEY = /(?:cents|minor|pence|satoshi|sats|wei)$/;
const CURRENCY_KEY = /^(?:currency|currencycode|ccy|cur|denomination|asset|token)$/;
const AMOUNT_TEXT = /^\s*(US\$|C\$|A\$|R\$|[$€£¥₹₩₿₽₺₪]|[a-z]{3}\s)?\s*(-?[0-9][0-9,' _]*(?:\.[0-9]+)?)\s*(k|mm|m|bn|b|thousand|million|billion)?\s*([a-z]{3,4}|[$€£¥₹₩₿])?\s*$/i;

interface MoneyScan {
  maxUsd: number;
  currency: string | null;
  pending: { key: string; value: number; minor: boolean; generic: boolean }[];
}

function parseAmountText(text: string): { value: number; currency: string | null; explicit: boolean } | null {
  if (text.length > 64) return null;
  const m = AMOUNT_TEXT.exec(text);
  if (m === null) return null;
  const prefix = (m[1] ?? '').trim();
  const suffix = (m[4] ?? '').trim();
  let currency: string | null = null;
  if (prefix !== '') currency = SYMBOLS[prefix] ?? (USD_PER_UNIT[prefix.toLowerCase()] !== undefined ? prefix.toLowerCase() : null);
  if (suffix !== '') currency = SYMBOLS[suffix] ?? (USD_PER_UNIT[suffix.toLowerCase()] !== undefined ? suffix.toLowerCase() : currency);
  if ((prefix !== '' || suffix !== '') && currency === null) return null;
  const number = Number((m[2] ?? '').replace(/[,' _]/g, ''));
  if (!Number.isFinite(number)) return null;
  const multiplier = MULTIPLIERS[(m[3] ?? '').toLowerCase()] ?? 1;
  return { value: Math.abs(number) * multiplier, currency, explicit: currency !== null };
}

function usd(value: number, currency: string | null): number {
  return value * (USD_PER_UNIT[currency ?? 'usd'] ?? 1);
}

const normalizeKey = (key: string): string => key.toLowerCase().replace(/[^a-z0-9]/g, '');
/** Argument names repeat: each is normalised once (bounded). */
const keyMemo = new BoundedCache<string>(16_384, 128);

/** Digits: a string without one holds no amount. */
const DIGIT = /[0-9]/;

function scan(value: unknown, key: string, out: MoneyScan, depth: number, nodes: { n: number }): void {
  if (depth > 8 || ++nodes.n > 1024) return;
  if (typeof value === 'string' && !DIGIT.test(value) && !(value.length <= 8 && key !== '' && /cur|ccy|denom|asset|token/i.test(key))) return;
  if (typeof value === 'object' && value !== null) {
    scanObject(value, key, out, depth, nodes);
    return;
  }
  const normalKey = keyMemo.get(key, normalizeKey);
  if (typeof value === 'number' || typeof value === 'bigint') {
    if (normalKey !== '' && MONEY_KEY.test(normalKey) && !NOT_MONEY_KEY.test(normalKey)) {
      out.pending.push({ key: normalKey, value: Math.abs(Number(value)), minor: MINOR_UNITS_KEY.test(normalKey), generic: GENERIC_KEY.test(normalKey) });
    }
    return;
  }
  if (typeof value === 'string') {
    if (CURRENCY_KEY.test(normalKey)) {
      const c = value.trim().toLowerCase();
      if (USD_PER_UNIT[c] !== undefined) out.currency = c;
      return;
    }
    const parsed = parseAmountText(value);
    if (parsed === null) return;
    const moneyKey = normalKey !== '' && MONEY_KEY.test(normalKey) && !NOT_MONEY_KEY.test(normalKey);
    if (parsed.explicit) {
      const minor = MINOR_UNITS_KEY.test(normalKey);
      out.maxUsd = Math.max(out.maxUsd, usd(minor ? parsed.value / 100 : parsed.value, parsed.currency));
    } else if (moneyKey) out.pending.push({ key: normalKey, value: parsed.value, minor: MINOR_UNITS_KEY.test(normalKey), generic: GENERIC_KEY.test(normalKey) });
    return;
  }
}

function scanObject(value: object, key: string, out: MoneyScan, depth: number, nodes: { n: number }): void {
  if (Array.isArray(value)) {
    for (const item of value) scan(item, key, out, depth + 1, nodes);
    return;
  }
  const object = value as Record<string, unknown>;
  // A currency named beside the amount applies to it.
  const outer = out.currency;
  for (const name in object) {
    if (!Object.hasOwn(object, name)) continue;
    if (CURRENCY_KEY.test(keyMemo.get(name, normalizeKey)) && typeof object[name] === 'string') scan(object[name], name, out, depth + 1, nodes);
  }
  for (const name in object) {
    if (!Object.hasOwn(object, name)) continue;
    scan(object[name], name, out, depth + 1, nodes);
  }
  out.currency = outer ?? out.currency;
}

/**
 * Adds the money rule its largest amount calls for. `financial`: the call is
 * about money (its tool, action or argument names say so), which lets the
 * generic names (`total`, `value`, `sum`) count as amounts.
 */
export function moneyFindings(findings: Findings, args: unknown, financial: boolean): void {
  if (typeof args !== 'object' || args === null) return;
  const out: MoneyScan = { maxUsd: 0, currency: null, pending: [] };
  scan(args, '', out, 0, { n: 0 });
  for (const p of out.pending) {
    if (p.generic && !financial && out.currency === null) continue;
    const value = p.minor ? p.value / 100 : p.value;
    const currency = p.key.endsWith('usd') ? 'usd' : p.key.endsWith('eur') ? 'eur' : p.key.endsWith('gbp') ? 'gbp' : out.currency;
    out.maxUsd = Math.max(out.maxUsd, usd(value, currency));
  }
  if (out.maxUsd >= 10_000) findings.add(R.moneyHigh);
  else if (out.maxUsd >= 1_000) findings.add(R.moneyMedium);
  else if (out.maxUsd >= 100) findings.add(R.moneyLow);
}
