/** The messages between the main thread and the PGlite worker (pglite-worker.ts). */

/**
 * Values typed as node-postgres types them, so that both adapters hand the
 * store the same rows: int8 and numeric as exact decimal strings (never a
 * float), bytea as a Buffer. Arrays follow their element type.
 */
export const PG_COMPATIBLE_PARSERS = {
  20: (text: string): string => text, // int8
  1700: (text: string): string => text, // numeric
  17: (text: string): Buffer => Buffer.from(text.startsWith('\\x') ? text.slice(2) : text, 'hex'), // bytea
};

/** A call to the worker; `id` matches its reply. */
export type PgliteCall = { readonly id: number } & (
  | { readonly op: 'open'; readonly dir: string }
  | { readonly op: 'exec'; readonly text: string }
  | { readonly op: 'query'; readonly text: string; readonly params: unknown[] }
  | { readonly op: 'listen'; readonly channel: string; readonly listenId: number }
  | { readonly op: 'unlisten'; readonly listenId: number }
  | { readonly op: 'close' }
);

/** A reply to call `id` (its result, or the error it threw), or a notification for listener `notify`. */
export type PgliteReply =
  | { readonly id: number; readonly result: unknown }
  | { readonly id: number; readonly error: { readonly message: string; readonly name: string; readonly props: Record<string, unknown> } }
  | { readonly notify: number; readonly payload: string };
