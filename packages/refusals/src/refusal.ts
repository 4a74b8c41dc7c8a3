import { type ReasonCode, isReasonCode } from './codes.js';

/** A refusal as data: a registered code and a one-line detail. */
export interface Refusal {
  readonly code: ReasonCode;
  readonly detail: string;
  /** Set when the text was a legacy phrasing rather than a `REFUSED:` line. */
  readonly legacy?: true;
}

const PREFIX = 'REFUSED: ';

/**
 * Builds the one textual form of a refusal: `REFUSED: CODE: detail`.
 * Line breaks in the detail are folded to spaces so the result stays one line
 * (SIEM pipelines and log scrapers split on newlines).
 */
export function formatRefusal(code: ReasonCode, detail: string): string {
  if (!isReasonCode(code)) {
    throw new TypeError(`formatRefusal: unknown reason code ${String(code)}`);
  }
  const oneLine = detail.replace(/[\r\n\u2028\u2029]+/g, ' ').trim();
  return `${PREFIX}${code}: ${oneLine}`;
}

/**
 * Legacy phrasings seen in agent transcripts and older tools, mapped to the
 * documented code they mean. Matched case-insensitively at the trimmed text's
 * start, after an optional "Sorry," and "I ", so a long explanation after
 * the phrase still parses.
 */
const LEGACY_ALIASES: ReadonlyArray<readonly [string, ReasonCode]> = [
  ['cannot comply', 'POLICY_VIOLATION'],
  ["can't comply", 'POLICY_VIOLATION'],
  ['blocked by policy', 'POLICY_VIOLATION'],
  ['cannot help with that', 'POLICY_VIOLATION'],
  ["can't help with that", 'POLICY_VIOLATION'],
  ['unsupported tool', 'UNVERIFIED_TOOL'],
  ['rate limited', 'RATE_LIMIT'],
  ['rate limit exceeded', 'RATE_LIMIT'],
];

const MAX_SCAN = 4096;
const LEGACY_LEAD = /^(?:sorry[,.!]?\s+(?:but\s+)?)?(?:i\s+)?/i;

/**
 * Parses a refusal line back into `{code, detail}`, or returns `null` when the
 * text is not a refusal. Never throws, whatever the input (untrusted text from
 * agents and transcripts). Cost is bounded: at most the first 4 KiB are read.
 */
export function parseRefusal(text: unknown): Refusal | null {
  if (typeof text !== 'string') return null;
  const head = (text.length > MAX_SCAN ? text.slice(0, MAX_SCAN) : text).trim();
  if (head.startsWith(PREFIX)) {
    const rest = head.slice(PREFIX.length);
    const colon = rest.indexOf(':');
    const code = colon === -1 ? rest.trim() : rest.slice(0, colon);
    if (!isReasonCode(code)) return null;
    const detail = colon === -1 ? '' : rest.slice(colon + 1).trim();
    const newline = detail.search(/[\r\n]/);
    return { code, detail: newline === -1 ? detail : detail.slice(0, newline) };
  }
  const lead = LEGACY_LEAD.exec(head)?.[0].length ?? 0;
  const lower = head.slice(lead).toLowerCase();
  for (const [phrase, code] of LEGACY_ALIASES) {
    if (lower.startsWith(phrase)) {
      const detail = head.slice(lead + phrase.length).replace(/^[\s.:,;!-]+/, '');
      return { code, detail, legacy: true };
    }
  }
  return null;
}
