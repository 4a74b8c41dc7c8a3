export { DEFAULT_PG_URL, pgUrlFromEnv, ensureDatabase, createPool, isPostgresUnavailable, postgresError } from './database.js';
export { MIGRATIONS_DIR, migrate } from './migrate.js';
export { DECISION_CHANNEL, Projection } from './projection.js';
export type { ApplyResult, PartitionHalt, PartitionHead, SourceOffset } from './projection.js';
export { PROJECTION_TABLES, projectionDigest, resetProjection } from './digest.js';
export {
  MAX_QUERY_LIMIT,
  MAX_GRANT_CHAIN,
  listPending,
  listGrants,
  refusalMetrics,
  decisionFor,
  enforcementRecords,
  grantTrail,
  decisionTrail,
} from './queries.js';
export type { DecisionTrail, GrantCitations, GrantSummary, GrantTrail } from './queries.js';
export type {
  ApprovalRow,
  ApprovalStatus,
  DecisionOutcome,
  EnforcementRow,
  EntrySeenRow,
  GrantEventKind,
  GrantEventRow,
  GrantPolicyRow,
  GrantRow,
  GrantStatus,
  KeyRow,
  ProposalRow,
  ProposalStatus,
  RefusalCountRow,
  RefusalRow,
} from './rows.js';
export { claimReadNonce, expireReadNonces } from './read-nonces.js';
export type { ReadNonceClaim } from './read-nonces.js';
export { hasNotifications } from './sql.js';
export type { SqlClient, SqlNotifications, SqlPool, SqlQueryConfig, SqlQueryable, SqlResult } from './sql.js';
export { openPglitePool } from './pglite.js';
export { enforcementRowOf } from './fold.js';
