/**
 * A memo of a pure function of a string, bounded in entries: when full it is
 * emptied and starts again. Values depend only on their key, so a cache hit
 * and a miss give the same answer; the bound keeps hostile input (a new
 * string every call) from growing memory.
 */
export class BoundedCache<V> {
  readonly #map = new Map<string, V>();
  readonly #maxEntries: number;
  /** Keys longer than this are not remembered (the work on them is bounded anyway). */
  readonly #maxKeyLength: number;

  constructor(maxEntries: number, maxKeyLength: number) {
    this.#maxEntries = maxEntries;
    this.#maxKeyLength = maxKeyLength;
  }

  /** The value remembered for `key`, if any (with {@link remember}: a look-up that needs no closure for the computation). */
  peek(key: string): V | undefined {
    return this.#map.get(key);
  }

  /** Remembers `value` for `key` (within the bounds). */
  remember(key: string, value: V): void {
    if (key.length <= this.#maxKeyLength) {
      if (this.#map.size >= this.#maxEntries) this.#map.clear();
      this.#map.set(key, value);
    }
  }

  /** The value for `key`, computing and remembering it on a miss. */
  get(key: string, compute: (key: string) => V): V {
    const hit = this.#map.get(key);
    if (hit !== undefined) return hit;
    const value = compute(key);
    if (key.length <= this.#maxKeyLength) {
      if (this.#map.size >= this.#maxEntries) this.#map.clear();
      this.#map.set(key, value);
    }
    return value;
  }
}
