import { parseStrictJson, type JsonValue } from '@agent-ledger/core';
import { ChannelDown } from './errors.js';

/** Largest platform response read (platform replies are small JSON objects). */
const MAX_RESPONSE_BYTES = 1024 * 1024;

/** One outgoing JSON call to a platform's HTTP API. */
export interface PlatformCall {
  readonly channel: string;
  readonly url: string;
  readonly body: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  readonly fetch: typeof fetch;
  /** Aborts the call early (closing a channel). */
  readonly signal?: AbortSignal;
  /** The reply body does not matter (a webhook receiver may answer with any text): a non-JSON reply gives body null. */
  readonly ignoreBody?: boolean;
}

/** A platform's reply: HTTP status and the strictly parsed JSON body (null when the body was empty). */
export interface PlatformReply {
  readonly status: number;
  readonly body: JsonValue;
}

/**
 * POSTs JSON to a platform and returns its status and parsed reply. The reply
 * is untrusted: it is parsed with the strict parser and the caller checks its
 * shape. Network failures, timeouts and unparseable replies throw ChannelDown;
 * the status is left to the caller, which knows the platform's error shape.
 */
export async function postJson(call: PlatformCall): Promise<PlatformReply> {
  const signals = [AbortSignal.timeout(call.timeoutMs)];
  if (call.signal !== undefined) signals.push(call.signal);
  let response: Response;
  let text: string;
  try {
    response = await call.fetch(call.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...call.headers },
      body: call.body,
      signal: AbortSignal.any(signals),
    });
    text = await response.text();
  } catch (cause) {
    throw new ChannelDown(call.channel, 'the platform could not be reached', { cause });
  }
  if (text.length > MAX_RESPONSE_BYTES) throw new ChannelDown(call.channel, `HTTP ${response.status}: reply too large`);
  if (text.length === 0 || call.ignoreBody === true) return { status: response.status, body: null };
  try {
    return { status: response.status, body: parseStrictJson(text) };
  } catch (cause) {
    throw new ChannelDown(call.channel, `HTTP ${response.status}: reply is not JSON`, { cause });
  }
}

/** A JSON object, or undefined for any other value (untrusted input narrowing). */
export function asObject(value: unknown): Readonly<Record<string, unknown>> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}
