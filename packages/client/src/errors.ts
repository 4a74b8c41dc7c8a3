import { LedgerError, OperationalCode, OperationalError, isOperationalCode, isReasonCode } from '@agent-ledger/refusals';

/**
 * What an answer of the ledger's API means, typed. A refusal (a 4xx whose
 * body names a ReasonCode) stays a LedgerError with that code: the ledger
 * judged the request and said no. Everything else is operational and never
 * wears a refusal code: an unreachable API or a 502/503/504 is UNAVAILABLE,
 * any other 5xx (whatever code its body claims) INTERNAL, a 4xx without a
 * code BAD_ARGUMENT (404 NOT_FOUND), and a body naming an operational code
 * keeps it.
 */
export function apiError(status: number, body: unknown, what: string): LedgerError | OperationalError {
  // Untrusted: any JSON (or none) may come back.
  const error = typeof body === 'object' && body !== null ? (body as { error?: unknown }).error : undefined;
  const fields = typeof error === 'object' && error !== null ? (error as { code?: unknown; message?: unknown; retryable?: unknown }) : {};
  const message = `${what}: HTTP ${status}${typeof fields.message === 'string' ? `: ${fields.message.slice(0, 500)}` : ''}`;
  if (status >= 500) {
    const code = isOperationalCode(fields.code)
      ? fields.code
      : status === 502 || status === 503 || status === 504
        ? OperationalCode.UNAVAILABLE
        : OperationalCode.INTERNAL;
    return new OperationalError(code, message, { retryable: true });
  }
  if (isOperationalCode(fields.code)) return new OperationalError(fields.code, message, { retryable: fields.retryable === true });
  if (status >= 400 && isReasonCode(fields.code)) return new LedgerError(fields.code, message, { retryable: fields.retryable === true });
  return new OperationalError(status === 404 ? OperationalCode.NOT_FOUND : OperationalCode.BAD_ARGUMENT, message, { retryable: false });
}

/**
 * A request that never got an answer: UNAVAILABLE, or CLIENT_TIMEOUT when the
 * caller's own wait ran out. An error that is already typed (a signing fetch
 * that could not learn the installation's id, say) keeps its code.
 */
export function transportError(err: unknown, what: string): OperationalError | LedgerError {
  if (err instanceof OperationalError || err instanceof LedgerError) return err;
  const name = (err as { name?: unknown } | null)?.name;
  if (name === 'TimeoutError' || name === 'AbortError') {
    return new OperationalError(OperationalCode.CLIENT_TIMEOUT, `${what}: no answer before the client's own wait ran out`, { cause: err });
  }
  const cause = (err as { cause?: { code?: unknown } } | null)?.cause;
  const detail = typeof cause?.code === 'string' ? cause.code : (err as Error | null)?.message ?? String(err);
  return new OperationalError(OperationalCode.UNAVAILABLE, `${what}: cannot reach the API (${detail})`, { cause: err });
}

/** The body of an answer as JSON; an answer that is not JSON is INTERNAL (the server is broken, not the request). */
export async function readJson(response: Response, what: string): Promise<unknown> {
  let text: string;
  try {
    text = await response.text();
  } catch (err) {
    throw transportError(err, what);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    if (response.status >= 400) return null;
    throw new OperationalError(OperationalCode.INTERNAL, `${what}: HTTP ${response.status}, the answer is not JSON`, { cause: err, retryable: true });
  }
}

/**
 * An unsigned GET of a public route (`/v1/trust`, `/v1/installation`): its
 * body as JSON when the API answered 200; an API error (its code) for any
 * other answer, a transport error when there was none.
 */
export async function getPublic(baseUrl: string, path: string, options: { readonly fetch?: typeof fetch; readonly requestTimeoutMs?: number } = {}): Promise<unknown> {
  const what = `GET ${path}`;
  let response: Response;
  try {
    response = await (options.fetch ?? fetch)(`${baseUrl}${path}`, { signal: AbortSignal.timeout(options.requestTimeoutMs ?? 30_000) });
  } catch (err) {
    throw transportError(err, what);
  }
  const body = await readJson(response, what);
  if (response.status !== 200) throw apiError(response.status, body, what);
  return body;
}
