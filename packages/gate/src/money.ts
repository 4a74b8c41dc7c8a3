import { nameFactsOf } from './string-facts.js';
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

/**
 * Scratch of one scan (moneyFindings is synchronous and never re-entered):
 * the largest explicit amount, the currency named beside the amounts, and
 * the amounts under money names whose currency is settled at the end.
 */
class MoneyScan {
  maxUsd = 0;
  currency: string | null = null;
  nodes = 0;
  pendingCount = 0;
  readonly pendingKey: string[] = [];
  readonly pendingValue: number[] = [];
  readonly pendingMinor: boolean[] = [];
  readonly pendingGeneric: boolean[] = [];

  reset(): void {
    this.maxUsd = 0;
    this.currency = null;
    this.nodes = 0;
    for (let i = 0; i < this.pendingCount; i++) this.pendingKey[i] = '';
    this.pendingCount = 0;
  }

  pend(key: string, value: number): void {
    const i = this.pendingCount++;
    this.pendingKey[i] = key;
    this.pendingValue[i] = value;
    this.pendingMinor[i] = MINOR_UNITS_KEY.test(key);
    this.pendingGeneric[i] = GENERIC_KEY.test(key);
  }
}
const scratch = new MoneyScan();

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

/** What the scan needs of an argument name: its normal form and what it names, read once per distinct name. */
export interface KeyInfo {
  /** Lowercase, separators removed. */
  readonly normal: string;
  /** The name says which currency (CURRENCY_KEY). */
  readonly currency: boolean;
  /** Its numbers are amounts of money (MONEY_KEY and not NOT_MONEY_KEY). */
  readonly money: boolean;
  /** A short string under it may name a currency without a digit (the raw name mentions cur, ccy, denom, asset or token). */
  readonly mayNameCurrency: boolean;
}
const readKey = (key: string): KeyInfo => {
  const normal = key.toLowerCase().replace(/[^a-z0-9]/g, '');
  return {
    normal,
    currency: CURRENCY_KEY.test(normal),
    money: normal !== '' && MONEY_KEY.test(normal) && !NOT_MONEY_KEY.test(normal),
    mayNameCurrency: key !== '' && /cur|ccy|denom|asset|token/i.test(key),
  };
};
/** {@link readKey}, remembered in the name's entry of string-facts.ts (argument names repeat: each is read once). */
function keyInfo(name: string): KeyInfo {
  const facts = nameFactsOf(name);
  return (facts.money ??= readKey(name));
}
const TOP = readKey('');

/** Digits: a string without one holds no amount. */
const DIGIT = /[0-9]/;

function scan(value: unknown, key: string, info: KeyInfo, out: MoneyScan, depth: number): void {
  if (depth > 8 || ++out.nodes > 1024) return;
  if (typeof value === 'string' && !DIGIT.test(value) && !(value.length <= 8 && info.mayNameCurrency)) return;
  if (typeof value === 'object' && value !== null) {
    scanObject(value, key, info, out, depth);
    return;
  }
  const normalKey = info.normal;
  if (typeof value === 'number' || typeof value === 'bigint') {
    if (info.money) out.pend(normalKey, Math.abs(Number(value)));
    return;
  }
  if (typeof value === 'string') {
    if (info.currency) {
      const c = value.trim().toLowerCase();
      if (USD_PER_UNIT[c] !== undefined) out.currency = c;
      return;
    }
    const parsed = parseAmountText(value);
    if (parsed === null) return;
    if (parsed.explicit) {
      const minor = MINOR_UNITS_KEY.test(normalKey);
      out.maxUsd = Math.max(out.maxUsd, usd(minor ? parsed.value / 100 : parsed.value, parsed.currency));
    } else if (info.money) out.pend(normalKey, parsed.value);
    return;
  }
}

function scanObject(value: object, key: string, info: KeyInfo, out: MoneyScan, depth: number): void {
  if (Array.isArray(value)) {
    for (const item of value) scan(item, key, info, out, depth + 1);
    return;
  }
  const object = value as Record<string, unknown>;
  // A currency named beside the amount applies to it.
  const outer = out.currency;
  for (const name in object) {
    if (!Object.hasOwn(object, name)) continue;
    const member = keyInfo(name);
    if (member.currency && typeof object[name] === 'string') scan(object[name], name, member, out, depth + 1);
  }
  for (const name in object) {
    if (!Object.hasOwn(object, name)) continue;
    scan(object[name], name, keyInfo(name), out, depth + 1);
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
  const out = scratch;
  out.reset();
  scan(args, '', TOP, out, 0);
  for (let i = 0; i < out.pendingCount; i++) {
    if (out.pendingGeneric[i] === true && !financial && out.currency === null) continue;
    const key = out.pendingKey[i] as string;
    const raw = out.pendingValue[i] as number;
    const value = out.pendingMinor[i] === true ? raw / 100 : raw;
    const currency = key.endsWith('usd') ? 'usd' : key.endsWith('eur') ? 'eur' : key.endsWith('gbp') ? 'gbp' : out.currency;
    out.maxUsd = Math.max(out.maxUsd, usd(value, currency));
  }
  if (out.maxUsd >= 10_000) findings.add(R.moneyHigh);
  else if (out.maxUsd >= 1_000) findings.add(R.moneyMedium);
  else if (out.maxUsd >= 100) findings.add(R.moneyLow);
}
