import { z } from 'zod';
import { parseStrictJson, parseStrictJsonBytes, type JsonValue } from '@agent-ledger/core';
import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import { screeningMessages, type ChatMessage } from './prompt.js';
import { ScreenFailure, Verdict, promptHashOf, screenInputProblem, type ScreenInput, type ScreenResult, type Screener } from './screener.js';
import { clip } from './text.js';

/** Configuration of {@link OpenAICompatibleScreener}. */
export interface OpenAICompatibleOptions {
  /** Base URL of the API, e.g. `http://127.0.0.1:8080/v1`; requests go to `${baseUrl}/chat/completions`. */
  readonly baseUrl: string;
  /** Model name sent in each request and named in each verdict. */
  readonly model: string;
  /** Sent as `Authorization: Bearer <apiKey>` when set. */
  readonly apiKey?: string;
  /** Whole-exchange deadline (connect, headers and body), milliseconds. */
  readonly timeoutMs: number;
  /** A fetch implementation (default: the global fetch). */
  readonly fetch?: typeof globalThis.fetch;
  /** Largest response body read, bytes (default 256 KiB). */
  readonly maxResponseBytes?: number;
  /** Largest completion content accepted, UTF-16 code units (default 8 KiB). */
  readonly maxContentChars?: number;
  /** Largest user message sent, UTF-16 code units (default 64 KiB); a larger proposal is not sent and stays `uncertain`. */
  readonly maxPromptChars?: number;
}

const DEFAULT_MAX_RESPONSE_BYTES = 256 * 1024;
const DEFAULT_MAX_CONTENT_CHARS = 8 * 1024;
const DEFAULT_MAX_PROMPT_CHARS = 64 * 1024;
const MAX_RATIONALE = 1000;

/**
 * The part of a chat completion read here (OpenAI `chat.completion` object);
 * other members are allowed and ignored. The response is untrusted.
 */
const CompletionSchema = z.object({
  choices: z
    .array(z.object({ message: z.object({ content: z.string({ error: 'message has no text content' }) }) }))
    .min(1, 'no choices'),
});

/** The model's answer, in the completion's content: exactly these two members. */
const AnswerSchema = z.strictObject({
  verdict: z.string(),
  rationale: z.string().min(1).max(MAX_RATIONALE),
});
const VERDICTS: ReadonlySet<string> = new Set(Object.values(Verdict));

type Outcome = { readonly verdict: Verdict; readonly rationale: string } | { readonly failure: ScreenFailure; readonly detail: string };

function configError(message: string): LedgerError {
  return new LedgerError(ReasonCode.SCHEMA_INVALID, `OpenAI-compatible screener: ${message}`);
}

function positiveInt(value: number | undefined, fallback: number, name: string, max: number): number {
  const v = value ?? fallback;
  if (!Number.isSafeInteger(v) || v < 1 || v > max) throw configError(`${name} must be an integer 1-${max}`);
  return v;
}

/**
 * A screener backed by any OpenAI-compatible chat-completions endpoint
 * (OpenAI, vLLM, llama.cpp server, Ollama, LM Studio, ...). One POST per
 * proposal, temperature 0, `response_format: {type: "json_object"}`. The
 * proposal is untrusted: it travels only in the user message, as escaped JSON
 * between marks (see `prompt.ts`).
 *
 * It never throws and never answers `safe` on a failure: an HTTP error, a
 * timeout, a body that is not strict JSON or not a completion, content that
 * is not exactly `{verdict, rationale}` with a known verdict, or anything
 * oversize yields `uncertain`, with `failure` set and the rationale naming
 * what went wrong.
 */
export class OpenAICompatibleScreener implements Screener {
  readonly model: string;
  /** A model answers over the network: never screened inside the sequencer's transaction. */
  readonly deterministic = false;
  readonly endpoint: string;
  readonly #apiKey: string | undefined;
  readonly #timeoutMs: number;
  readonly #fetch: typeof globalThis.fetch;
  readonly #maxResponseBytes: number;
  readonly #maxContentChars: number;
  readonly #maxPromptChars: number;

  /** Throws `LedgerError(SCHEMA_INVALID)` on a bad configuration (URL, model name, limits). */
  constructor(options: OpenAICompatibleOptions) {
    let base: URL;
    try {
      base = new URL(options.baseUrl);
    } catch (err) {
      throw new LedgerError(ReasonCode.SCHEMA_INVALID, 'OpenAI-compatible screener: baseUrl is not a URL', { cause: err });
    }
    if (base.protocol !== 'http:' && base.protocol !== 'https:') throw configError('baseUrl must be http or https');
    if (base.search !== '' || base.hash !== '' || base.username !== '' || base.password !== '') throw configError('baseUrl must not carry a query, fragment or credentials');
    if (typeof options.model !== 'string' || options.model.length < 1 || options.model.length > 256) throw configError('model must be 1-256 characters');
    if (options.apiKey !== undefined && (typeof options.apiKey !== 'string' || options.apiKey === '' || /[\r\n]/.test(options.apiKey))) {
      throw configError('apiKey must be a non-empty single-line string');
    }
    this.endpoint = `${base.href.replace(/\/+$/, '')}/chat/completions`;
    this.model = options.model;
    this.#apiKey = options.apiKey;
    this.#timeoutMs = positiveInt(options.timeoutMs, 0, 'timeoutMs', 600_000);
    this.#fetch = options.fetch ?? globalThis.fetch;
    this.#maxResponseBytes = positiveInt(options.maxResponseBytes, DEFAULT_MAX_RESPONSE_BYTES, 'maxResponseBytes', 64 * 1024 * 1024);
    this.#maxContentChars = positiveInt(options.maxContentChars, DEFAULT_MAX_CONTENT_CHARS, 'maxContentChars', 1024 * 1024);
    this.#maxPromptChars = positiveInt(options.maxPromptChars, DEFAULT_MAX_PROMPT_CHARS, 'maxPromptChars', 16 * 1024 * 1024);
  }

  async screen(input: ScreenInput): Promise<ScreenResult> {
    const problem = screenInputProblem(input);
    if (problem !== null) return this.#result([], { failure: ScreenFailure.invalid_input, detail: problem });
    let messages: ChatMessage[];
    try {
      messages = screeningMessages(input);
    } catch (err) {
      return this.#result([], { failure: ScreenFailure.invalid_input, detail: `proposal is not canonical JSON (${errorText(err)})` });
    }
    const prompt = messages.map((m) => ({ role: m.role, content: m.content }));
    const user = messages[1]?.content ?? '';
    if (user.length > this.#maxPromptChars) {
      return this.#result(prompt, { failure: ScreenFailure.oversize, detail: `proposal prompt is ${user.length} characters, over ${this.#maxPromptChars}; not sent` });
    }
    let outcome: Outcome;
    try {
      outcome = await this.#ask(messages);
    } catch (err) {
      // #ask returns every failure it expects; this is the never-throw backstop.
      outcome = { failure: ScreenFailure.network, detail: errorText(err) };
    }
    return this.#result(prompt, outcome);
  }

  #result(prompt: JsonValue, outcome: Outcome): ScreenResult {
    const promptHash = promptHashOf(prompt);
    if ('failure' in outcome) {
      const rationale = clip(`screener failure (${outcome.failure}): ${outcome.detail}; a human decides`, 2000);
      return { verdict: Verdict.uncertain, rationale, model: this.model, promptHash, prompt, failure: outcome.failure };
    }
    return { verdict: outcome.verdict, rationale: outcome.rationale, model: this.model, promptHash, prompt, failure: null };
  }

  async #ask(messages: readonly ChatMessage[]): Promise<Outcome> {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.#timeoutMs);
    try {
      const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
      if (this.#apiKey !== undefined) headers['authorization'] = `Bearer ${this.#apiKey}`;
      const body = JSON.stringify({ model: this.model, messages, temperature: 0, response_format: { type: 'json_object' } });
      let response: Response;
      try {
        response = await this.#fetch(this.endpoint, { method: 'POST', headers, body, signal: controller.signal, redirect: 'error' });
      } catch (err) {
        if (timedOut) return { failure: ScreenFailure.timeout, detail: `no response within ${this.#timeoutMs} ms` };
        return { failure: ScreenFailure.network, detail: errorText(err) };
      }
      if (response.status < 200 || response.status > 299) {
        await response.body?.cancel().catch(() => undefined);
        return { failure: ScreenFailure.http_status, detail: `HTTP ${response.status}` };
      }
      const contentType = response.headers.get('content-type') ?? '';
      if (!/^application\/json\s*(;|$)/i.test(contentType)) {
        await response.body?.cancel().catch(() => undefined);
        return { failure: ScreenFailure.content_type, detail: `content-type ${JSON.stringify(clip(contentType, 80))} is not application/json` };
      }
      let bytes: Uint8Array | 'oversize';
      try {
        bytes = await readLimited(response, this.#maxResponseBytes);
      } catch (err) {
        if (timedOut) return { failure: ScreenFailure.timeout, detail: `response body not complete within ${this.#timeoutMs} ms` };
        return { failure: ScreenFailure.network, detail: `reading the response: ${errorText(err)}` };
      }
      if (bytes === 'oversize') return { failure: ScreenFailure.oversize, detail: `response body over ${this.#maxResponseBytes} bytes` };
      return this.#interpret(bytes);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Reads the completion, then the answer in its content; both are untrusted. */
  #interpret(bytes: Uint8Array): Outcome {
    let parsed: JsonValue;
    try {
      parsed = parseStrictJsonBytes(bytes, { maxBytes: this.#maxResponseBytes, maxDepth: 32 });
    } catch (err) {
      return { failure: ScreenFailure.response_invalid, detail: `response body is not strict JSON (${errorText(err)})` };
    }
    const completion = CompletionSchema.safeParse(parsed);
    if (!completion.success) return { failure: ScreenFailure.response_invalid, detail: `not a chat completion: ${issueText(completion.error)}` };
    const content = completion.data.choices[0]?.message.content ?? '';
    if (content.length > this.#maxContentChars) return { failure: ScreenFailure.oversize, detail: `completion content is ${content.length} characters, over ${this.#maxContentChars}` };
    let answer: JsonValue;
    try {
      answer = parseStrictJson(content, { maxBytes: this.#maxContentChars * 3, maxDepth: 4 });
    } catch (err) {
      return { failure: ScreenFailure.content_invalid, detail: `completion content is not strict JSON (${errorText(err)})` };
    }
    const checked = AnswerSchema.safeParse(answer);
    if (!checked.success) return { failure: ScreenFailure.content_invalid, detail: `completion content is not {verdict, rationale}: ${issueText(checked.error)}` };
    const { verdict, rationale } = checked.data;
    if (!VERDICTS.has(verdict)) return { failure: ScreenFailure.verdict_unknown, detail: `unknown verdict ${JSON.stringify(clip(verdict, 40))}` };
    return { verdict: verdict as Verdict, rationale };
  }
}

/** The body's bytes, or `'oversize'` as soon as it passes `max` (the rest is not read). */
async function readLimited(response: Response, max: number): Promise<Uint8Array | 'oversize'> {
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > max) {
    await response.body?.cancel().catch(() => undefined);
    return 'oversize';
  }
  if (response.body === null) return new Uint8Array(0);
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      await reader.cancel().catch(() => undefined);
      return 'oversize';
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}

function errorText(err: unknown): string {
  if (err instanceof Error) {
    const cause = (err as { cause?: unknown }).cause;
    const code = typeof cause === 'object' && cause !== null ? (cause as { code?: unknown }).code : undefined;
    return clip(typeof code === 'string' ? `${err.message} (${code})` : err.message, 300);
  }
  return clip(String(err), 300);
}

function issueText(error: z.ZodError): string {
  return clip(error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; '), 300);
}
