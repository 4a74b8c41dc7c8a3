import { LedgerError, OperationalCode, OperationalError, ReasonCode } from '@agent-ledger/refusals';
import { readSmall } from './files.js';
import { EnvelopeSchema, Principal, fromHex, keyIdOf, nodeEd25519, parseStrictJson, type Signer } from '@agent-ledger/core';

/**
 * Loads a private key file written by `ledger keygen` or `ledger init`
 * (`{"v":1,"principal","keyId","seed"}`, untrusted input) as the signer a
 * {@link LedgerClient} takes, after checking that its key id is the public
 * key of its seed.
 * @throws LedgerError SCHEMA_INVALID (not a key file), INTEGRITY_FAILURE (key id and seed disagree); OperationalError NOT_FOUND, BAD_ARGUMENT.
 */
export function loadKey(path: string): Signer {
  const value = parseStrictJson(readSmall(path, 'key file')) as { v?: unknown; principal?: unknown; keyId?: unknown; seed?: unknown } | null;
  const fields = typeof value === 'object' && value !== null ? Object.keys(value).sort().join(',') : '';
  if (
    fields !== 'keyId,principal,seed,v' ||
    value?.v !== 1 ||
    !Principal.safeParse(value.principal).success ||
    typeof value.keyId !== 'string' || !/^[0-9a-f]{64}$/.test(value.keyId) ||
    typeof value.seed !== 'string' || !/^[0-9a-f]{64}$/.test(value.seed)
  ) {
    throw new LedgerError(ReasonCode.SCHEMA_INVALID, `${path}: not a key file`);
  }
  const seed = fromHex(value.seed, 32);
  if (keyIdOf(seed, nodeEd25519) !== value.keyId) throw new LedgerError(ReasonCode.INTEGRITY_FAILURE, `${path}: keyId does not match the seed`);
  return { principal: value.principal as string, keyId: value.keyId, seed };
}

/**
 * The key ids of a principal (by default the gate, `service:gate`) in an
 * installation's genesis file: what an agent pins as `deciderKeys`, so that
 * only the gate's signature makes a decision it acts on.
 */
export function deciderKeysFromGenesis(path: string, principal = 'service:gate'): string[] {
  const parsed = EnvelopeSchema.safeParse(parseStrictJson(readSmall(path, 'genesis file')));
  if (!parsed.success || parsed.data.statement.type !== 'genesis') throw new LedgerError(ReasonCode.SCHEMA_INVALID, `${path}: not a genesis envelope`);
  const body = parsed.data.statement.body as { keys: { keyId: string; principal: string }[] };
  const keys = body.keys.filter((k) => k.principal === principal).map((k) => k.keyId);
  if (keys.length === 0) throw new OperationalError(OperationalCode.BAD_CONFIGURATION, `${path}: the genesis registers no key for ${principal}`);
  return keys;
}
