import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import { concatBytes, fromHex, nodeEd25519, utf8, type Ed25519Backend } from '@agent-ledger/core';

/** Discord rejects nothing older itself, so we do: interactions older (or newer) than this are refused. */
export const DISCORD_MAX_SKEW_SECONDS = 300;

/** Headers and raw body of one interaction request, exactly as received (untrusted). */
export interface SignedInteraction {
  readonly signatureHex: string | undefined;
  readonly timestamp: string | undefined;
  readonly rawBody: Uint8Array;
}

/**
 * Verifies a Discord interaction request
 * (https://discord.com/developers/docs/interactions/overview#setting-up-an-endpoint-validating-security-request-headers):
 * `X-Signature-Ed25519` is the hex Ed25519 signature, under the application's
 * public key, of `X-Signature-Timestamp` followed by the raw body bytes. The
 * system's Ed25519 verdict rule applies. The timestamp (unix seconds) must be
 * within {@link DISCORD_MAX_SKEW_SECONDS} of `nowMs`, so a captured request
 * cannot be replayed later.
 *
 * @throws LedgerError INVALID_SIGNATURE for a missing or bad signature, STALE_APPROVAL for a stale timestamp.
 */
export function verifyDiscordInteraction(
  request: SignedInteraction,
  applicationPublicKey: Uint8Array,
  nowMs: number,
  ed25519: Ed25519Backend = nodeEd25519,
  maxSkewSeconds: number = DISCORD_MAX_SKEW_SECONDS,
): void {
  const { signatureHex, timestamp } = request;
  if (signatureHex === undefined || timestamp === undefined) {
    throw new LedgerError(ReasonCode.INVALID_SIGNATURE, 'missing X-Signature-Ed25519 or X-Signature-Timestamp');
  }
  let signature: Uint8Array;
  try {
    signature = fromHex(signatureHex.toLowerCase(), 64);
  } catch (cause) {
    throw new LedgerError(ReasonCode.INVALID_SIGNATURE, 'X-Signature-Ed25519 is not 64 bytes of hex', { cause });
  }
  if (!/^[0-9]{1,12}$/.test(timestamp)) throw new LedgerError(ReasonCode.INVALID_SIGNATURE, 'X-Signature-Timestamp is not unix seconds');
  if (!ed25519.verify(applicationPublicKey, concatBytes(utf8(timestamp), request.rawBody), signature)) {
    throw new LedgerError(ReasonCode.INVALID_SIGNATURE, 'interaction signature does not verify');
  }
  // Checked after the signature: the timestamp is only meaningful once we know Discord wrote it.
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > maxSkewSeconds) {
    throw new LedgerError(ReasonCode.STALE_APPROVAL, 'interaction timestamp is outside the allowed window');
  }
}
