import { z } from 'zod';
import { KeyId } from './statements.js';

/**
 * The trust root an auditor pins: the root public keys and how many of them
 * must sign the genesis statement. Everything else is derived from the log.
 */
export const TrustRootSchema = z.strictObject({
  v: z.literal(1),
  origin: z.string().min(1).max(200),
  rootKeys: z.array(KeyId).min(1).max(32),
  threshold: z.number().int().min(1).max(32),
});

/** A parsed trust root. */
export type TrustRoot = z.infer<typeof TrustRootSchema>;
