export { LedgerError } from '@agent-ledger/refusals';
export { parseStrictJson, parseStrictJsonBytes, DEFAULT_JSON_LIMITS } from './json.js';
export type { JsonLimits, JsonValue } from './json.js';
export { canonicalJson, canonicalBytes } from './jcs.js';
export { toHex, fromHex, toBase64, fromBase64, utf8, bytesEqual, concatBytes } from './encoding.js';
export { sha256, sha256Hex } from './hash.js';
export { nodeEd25519, nobleEd25519, checkPublicKey, generateSeed } from './ed25519.js';
export type { Ed25519Backend, PublicKeyCheck } from './ed25519.js';
export {
  leafHash,
  interiorHash,
  EMPTY_ROOT,
  rootFromLeafHashes,
  MerkleAccumulator,
  MerkleTree,
  verifyInclusion,
  verifyConsistency,
} from './merkle.js';
export { noteKeyId, verifierKeyString, signNote, openNote } from './note.js';
export type { NoteSigner, NoteVerifier, OpenedNote } from './note.js';
export { formatCheckpoint, parseCheckpoint } from './checkpoint.js';
export type { Checkpoint } from './checkpoint.js';
export { Role, ROLES } from './roles.js';
export { AUTHORITY_RULES_VERSIONS, LATEST_AUTHORITY_RULES_VERSION, AUTHOR_ROLES_V2, DEFAULT_RISK_THRESHOLD } from './authority-rules.js';
export type { AuthorityRulesVersion } from './authority-rules.js';
export {
  BODY_SCHEMAS,
  STATEMENT_TYPES,
  AUTHORITY_TYPES,
  REQUIRED_ROLE,
  StatementSchema,
  EnvelopeSchema,
  SignatureSchema,
  Hash,
  KeyId,
  Timestamp,
  Principal,
  StatementId,
  MAX_PLATFORM_ASSURANCE_TIER,
} from './statements.js';
export type { Statement, StatementType, Envelope, BodyOf } from './statements.js';
export { uuidv7, uuidv7Millis } from './uuid.js';
export {
  STATEMENT_SIGNING_CONTEXT,
  signingMessage,
  statementHash,
  createStatement,
  signStatement,
  signCanonicalStatement,
  verifyEnvelopeSignatures,
  keyIdOf,
} from './statement.js';
export type { Signer } from './statement.js';
export { ZERO_HASH, EntrySchema, envelopeCanonical, envelopeHash, entryHash, headerOf, entryHashBytes } from './entry.js';
export type { Entry, EntryHeader } from './entry.js';
export { AUTHORITY_PARTITION, eventPartitionOf, partitionOf, checkRouting } from './routing.js';
export { ReplayWindow } from './replay-window.js';
export { PartitionChain, checkCheckpointSigners, checkpointKeyNames, checkpointVerifiers, partitionOrigin, sequencerNoteSigner, signCheckpoint } from './chain.js';
export type { ChainHead } from './chain.js';
export { TrustRootSchema } from './trust-root.js';
export type { TrustRoot } from './trust-root.js';
export { AuthorityState } from './authority.js';
export type { LedgerConfig, KeyRecord } from './authority.js';
export {
  BUNDLE_FORMAT,
  BUNDLE_VERSION,
  MAX_BUNDLE_LINE_BYTES,
  BundleHeaderSchema,
  BundleEntrySchema,
  BundleCheckpointSchema,
  BundleTrailerSchema,
  BundleLineSchema,
  formatTrailer,
  parseTrailer,
  readLineBatches,
} from './bundle.js';
export type { BundleHeader, BundleLine, PartitionSummary, LineBatch } from './bundle.js';
export { GrantRegistry, DEFAULT_GRANT_POLICY, covers, isPattern, coveringPatterns, grantInForce } from './grants.js';
export type { GrantPolicy, GrantEntry, GrantEffect, PendingWrite } from './grants.js';
export { ArgumentConstraintSchema, satisfiesAll, narrows, matchesPattern } from './grant-constraints.js';
export type { ArgumentConstraint } from './grant-constraints.js';
