import assert from 'node:assert/strict';
import { isOperationalCode, isReasonCode } from '@agent-ledger/refusals';

/**
 * The shape every `ledger ... --json` run prints, checked one way for every
 * command: exactly one JSON object on one line on stdout, `{"ok":true,...}`
 * with exit 0, or `{"ok":false,"error":{code,message,retryable},...}` with
 * the exit status of its code's kind (1 for a refusal code, 2 for an
 * operational code).
 */

/** What a finished CLI run left: its exit status and its output. */
export interface CliRun {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The one JSON object a `--json` run printed, on one line. */
export function jsonObject(run: CliRun, what: string): Record<string, unknown> {
  assert.ok(run.stdout.endsWith('\n') && run.stdout.indexOf('\n') === run.stdout.length - 1, `${what}: stdout is not one line: ${JSON.stringify(run.stdout.slice(0, 500))} stderr ${run.stderr.slice(0, 500)}`);
  let value: unknown;
  try {
    value = JSON.parse(run.stdout);
  } catch (err) {
    assert.fail(`${what}: stdout is not JSON (${(err as Error).message}): ${JSON.stringify(run.stdout.slice(0, 500))}`);
  }
  assert.ok(typeof value === 'object' && value !== null && !Array.isArray(value), `${what}: not an object: ${run.stdout.slice(0, 500)}`);
  return value as Record<string, unknown>;
}

/** A success: exit 0 and `{"ok":true,...}`, without an `error`. Returns the object. */
export function assertJsonSuccess(run: CliRun, what: string): Record<string, unknown> {
  assert.equal(run.status, 0, `${what}: exit ${String(run.status)}: ${run.stdout.slice(0, 500)} ${run.stderr.slice(0, 500)}`);
  const object = jsonObject(run, what);
  assert.equal(object['ok'], true, `${what}: ${run.stdout.slice(0, 500)}`);
  assert.equal('error' in object, false, `${what}: a success carries no error`);
  return object;
}

/**
 * A failure with `code`: `{"ok":false,"error":{code,message,retryable}}` (the
 * error object has exactly these members; a command that judged may report
 * more beside it) and the exit status of the code's kind. Returns the object.
 */
export function assertJsonFailure(run: CliRun, what: string, code: string): Record<string, unknown> {
  const object = jsonObject(run, what);
  assert.equal(object['ok'], false, `${what}: ${run.stdout.slice(0, 500)}`);
  const error = object['error'] as { code?: unknown; message?: unknown; retryable?: unknown } | undefined;
  assert.ok(typeof error === 'object' && error !== null, `${what}: no error object: ${run.stdout.slice(0, 500)}`);
  assert.deepEqual(Object.keys(error).sort(), ['code', 'message', 'retryable'], what);
  assert.equal(error.code, code, `${what}: ${run.stdout.slice(0, 500)}`);
  assert.equal(typeof error.message, 'string', what);
  assert.equal(typeof error.retryable, 'boolean', what);
  assert.ok(isReasonCode(code) || isOperationalCode(code), `${what}: ${code} is neither a refusal nor an operational code`);
  assert.equal(run.status, isReasonCode(code) ? 1 : 2, `${what}: exit ${String(run.status)} for ${code}`);
  return object;
}
