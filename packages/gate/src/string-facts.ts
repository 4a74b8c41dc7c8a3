import { BoundedCache } from './bounded-cache.js';
import type { KeyInfo } from './money.js';

/**
 * What the per-string readings of a call's arguments found in one string,
 * kept together: the version-7 and version-8 text bits, the secret shapes,
 * the findings of its URLs and of an unknown tool's reading of it. A call's
 * strings repeat call after call, and each reading used to keep its own memo
 * of them: a string new to the caches cost one cold look-up per reading. Here
 * it costs one, and the readings after the first find the entry warm.
 *
 * Each field is filled on the reading's first need (a reading a rules
 * version does not make is never computed for it) by the module that owns
 * the reading; -1 or undefined means not read yet. A reading whose answer
 * differs by rules version keeps one field per version it differs in (as
 * its own memos did), so no version is served another's answer.
 */
export class StringFacts {
  /** call-text-rules.ts: the version-7 text bits. */
  v7 = -1;
  /** rules-v8.ts: the version-8 text bits. */
  v8 = -1;
  /** secret-shapes.ts: 1 when the string holds a secret by its shape, else 0. */
  secret = -1;
  /** structured-rules.ts: 1 when the string, read as a URL, carries a secret (percent-encoded too), else 0. */
  urlSecret = -1;
  /** rules-v9.ts: 1 when the string carries personal data, else 0. */
  personalData = -1;
  /** tool-registry.ts: the findings of the URLs in the string, as version 2 reads them. */
  urls2: readonly number[] | undefined = undefined;
  /** tool-registry.ts: the findings of the URLs in the string, as version 3 and later read them. */
  urls3: readonly number[] | undefined = undefined;
  /** tool-registry.ts: which reading of an unknown tool's string {@link inspected} is (its version slot, action and key class), -1 for none yet. */
  inspectedAs = -1;
  /** tool-registry.ts: the findings of the reading {@link inspectedAs} names. */
  inspected: readonly number[] | undefined = undefined;
  /** tool-registry.ts: the findings of other readings of the string (a string read by several versions, actions or key classes), by reading. */
  inspectedOther: Map<number, readonly number[]> | undefined = undefined;
}

/** Strings longer than this get no entry (their readings are computed each time, or by the reading's own bound). */
export const STRING_FACTS_MAX_LENGTH = 4096;

const factsMemo = new BoundedCache<StringFacts>(65_536, STRING_FACTS_MAX_LENGTH);

/** The entry of `text` (a new, empty one when it has none; not remembered when `text` is longer than {@link STRING_FACTS_MAX_LENGTH}). */
export function factsOf(text: string): StringFacts {
  let facts = factsMemo.peek(text);
  if (facts === undefined) {
    facts = new StringFacts();
    factsMemo.remember(text, facts);
  }
  return facts;
}

/**
 * What the walks of a call's arguments read in one argument name, kept
 * together as {@link StringFacts} keeps a string's readings: the key bits of
 * versions 7 and 8 and of the structured-call reading, the money reading, and
 * the tool registry's and version 9's readings of the name (those two are
 * given the name lowercased, so an all-lowercase name shares one entry with
 * its lowercase form). Each field is a function of the entry's name alone,
 * filled on first need by the module that owns it; -1 or undefined means not
 * read yet. None differs by rules version.
 */
export class NameFacts {
  /** call-text-rules.ts: the version-7 key bits. */
  v7 = -1;
  /** rules-v8.ts: the version-8 key bits. */
  v8 = -1;
  /** structured-rules.ts: the key bits of the structured-call reading. */
  structured = -1;
  /** tool-registry.ts: the classes of the name (command, URL, path, content). */
  keyClass = -1;
  /** rules-v9.ts: 1 when the name holds a path, else 0. */
  pathKey = -1;
  /** money.ts: what the name says of an amount. */
  money: KeyInfo | undefined = undefined;
}

const nameFactsMemo = new BoundedCache<NameFacts>(16_384, 128);

/** The entry of the argument name `name` (a new, empty one when it has none; not remembered when longer than 128 characters). */
export function nameFactsOf(name: string): NameFacts {
  let facts = nameFactsMemo.peek(name);
  if (facts === undefined) {
    facts = new NameFacts();
    nameFactsMemo.remember(name, facts);
  }
  return facts;
}
