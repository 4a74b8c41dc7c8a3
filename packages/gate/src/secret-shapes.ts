import { STRING_FACTS_MAX_LENGTH, factsOf } from './string-facts.js';

/**
 * Rules version 5: the shapes of secrets in free text, for what a messaging,
 * posting or sending tool sends. A secret is something whose form says it is
 * one: a URL carrying its password, a private key block, a token with a
 * provider's well-known prefix, or `password=...` with a real value. Words
 * alone ("the password is in the vault") are not a secret.
 */

/** `scheme://user:password@host`, with a password that is not a placeholder. */
const URL_PASSWORD = /\b[a-z][a-z0-9+.-]{1,15}:\/\/[^\s/:@'"]{1,128}:([^\s/@'"]{1,256})@[^\s/'"]/gi;
const PRIVATE_KEY = /-----BEGIN (?:RSA |OPENSSH |EC |DSA |PGP |ENCRYPTED )?PRIVATE KEY(?: BLOCK)?-----/;
/** Provider tokens by prefix and length (AWS, GitHub, GitLab, Slack, Stripe, OpenAI, Anthropic, Google, npm, PyPI, Hugging Face, SendGrid). */
const PROVIDER_TOKEN = /(?:^|[^A-Za-z0-9])(?:AKIA[0-9A-Z]{16}|ASIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}|glpat-[A-Za-z0-9_-]{20,}|xox[abposr]-[A-Za-z0-9-]{10,}|[sr]k_live_[A-Za-z0-9]{16,}|sk-(?:proj-|ant-)?[A-Za-z0-9_-]{32,}|AIza[0-9A-Za-z_-]{35}|ya29\.[0-9A-Za-z_-]{20,}|npm_[A-Za-z0-9]{36}|pypi-[A-Za-z0-9_-]{40,}|hf_[A-Za-z0-9]{30,}|SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,})(?![A-Za-z0-9])/;
/** `password=value`, `api_key: value`, with a value of six characters or more. */
const ASSIGNED_SECRET = /\b(?:password|passwd|pwd|secret|client[_-]?secret|api[_-]?key|access[_-]?key|secret[_-]?key|(?:aws[_-]?)?secret[_-]?access[_-]?key|auth[_-]?token|access[_-]?token|refresh[_-]?token|private[_-]?key)["']?\s*[=:]\s*["']?([^\s"',;]{6,})/gi;
/** Values that stand for a secret without being one. */
const PLACEHOLDER = /^(?:\*+|x+|\.+|<[^>]*>|\$\{?[A-Za-z_][\w]*\}?|\{\{[^}]*\}\}|%[A-Za-z_]+%|(?:your|my|the|some|example|changeme|placeholder|redacted|hidden|secret|password|passwd|token|none|null|undefined|required|optional|env|string)[\w-]*)$/i;

/** True when `text` holds a secret by its shape (remembered in the text's entry of string-facts.ts: messages and bodies repeat). */
export function holdsSecret(text: string): boolean {
  // Every shape needs 20 characters (a token), or a `:` or `=` (a URL's password, an assignment); a key block has both.
  if (text.length < 8 || (text.length < 20 && text.indexOf(':') === -1 && text.indexOf('=') === -1)) return false;
  if (text.length > STRING_FACTS_MAX_LENGTH) return readSecret(text);
  const facts = factsOf(text);
  if (facts.secret === -1) facts.secret = readSecret(text) ? 1 : 0;
  return facts.secret === 1;
}

function readSecret(text: string): boolean {
  const bounded = text.length > 65_536 ? text.slice(0, 65_536) : text;
  if (PRIVATE_KEY.test(bounded) || PROVIDER_TOKEN.test(bounded)) return true;
  if (bounded.indexOf('://') !== -1) {
    URL_PASSWORD.lastIndex = 0;
    for (let m = URL_PASSWORD.exec(bounded); m !== null; m = URL_PASSWORD.exec(bounded)) if (!PLACEHOLDER.test(m[1] ?? '')) return true;
  }
  ASSIGNED_SECRET.lastIndex = 0;
  for (let m = ASSIGNED_SECRET.exec(bounded); m !== null; m = ASSIGNED_SECRET.exec(bounded)) if (!PLACEHOLDER.test(m[1] ?? '')) return true;
  return false;
}

/** Nodes {@link argumentsHoldSecret} may still visit (argumentsHoldSecret is synchronous and never re-entered). */
let secretBudget = 0;

function visitForSecret(value: unknown, depth: number): boolean {
  if (depth > 8 || --secretBudget < 0) return false;
  if (typeof value === 'string') return holdsSecret(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (visitForSecret(value[i], depth + 1)) return true;
    return false;
  }
  if (typeof value === 'object' && value !== null) for (const key in value) if (Object.hasOwn(value, key) && visitForSecret((value as Record<string, unknown>)[key], depth + 1)) return true;
  return false;
}

/** True when any string of `args` (a bounded walk) holds a secret by its shape. */
export function argumentsHoldSecret(args: unknown): boolean {
  secretBudget = 512;
  return visitForSecret(args, 0);
}
