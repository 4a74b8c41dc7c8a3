export { synthesizeDemo } from './demo/synthesize.js';
export type { DemoOptions, DemoSummary } from './demo/synthesize.js';
export { BundleFileWriter } from './bundle-writer.js';
export { verifyReceipt } from './commands/receipt.js';
export type { ReceiptVerdict } from './commands/receipt.js';
export { generatedSchemas } from './commands/schemas.js';
export { newSigner, readKeyFile, writeKeyFile } from './keys.js';
export { readTrustRoot, formatTrustRoot } from './trust-root-file.js';
export { LedgerHome, initHome, LOCAL_PRINCIPALS, ConfigSchema, apiTls, apiCaFile } from './home.js';
export type { HomeConfig } from './home.js';
export { serve, ROLES, apiEdgeSettings, apiBind } from './serve.js';
export { apiFetch, readFetch } from './api-fetch.js';
export type { RunningLedger, ServeRole } from './serve.js';
export { topicNames, topicSpecs, entryLocation, ledgerPartitionOf } from './topics.js';
export { KafkaConfigSchema, kafkaBusFor, kafkaSecurity, kafkaSettings, topicDurability } from './kafka-client.js';
export type { TopicNames } from './topics.js';
export { Projector } from './projector/projector.js';
export { PartitionSequencer } from './sequencer/partition-sequencer.js';
export { admit } from './sequencer/admission.js';
export { ocsfRecord, OCSF_REQUIRED } from './siem/siem-exporter.js';
export type { AttemptedOperation } from './siem/siem-exporter.js';
export { exportCommand } from './commands/export.js';
export { moveToKafkaCommand } from './commands/move-to-kafka.js';
export { prng } from './demo/scenarios.js';
export { fatigueSettingsFromEnv } from './gate/fatigue.js';
export type { PendingItem } from './commands/approve.js';
export { approveCommand, countdownScreen, parseSessionDuration, sessionGrant, MAX_SESSION_MS, MAX_BATCH_TIER } from './commands/approve.js';
export { rotateRootCommand } from './commands/rotate-root.js';
export { SignaturePool, signatureVerdict } from './sequencer/signature-pool.js';
export { GateWorker, DEFAULT_DEADLINES_MS, REDECISIONS } from './gate/gate-worker.js';
export type { GateWorkerSettings, GateDecider } from './gate/gate-worker.js';
export { DeadlineTimer } from './gate/timer.js';
export { AuthorityFollower } from './authority-follower.js';
export { HostAllowList } from './api/host-allow-list.js';
export { RateLimiter, rateSettingsFrom } from './api/rate-limit.js';
export type { RateSettings } from './api/rate-limit.js';
export { PASSED_OVER_MARGIN_MS, StatementTracker } from './api/statement-status.js';
export { READ_AUTH_SKEW_MS, READ_AUTH_WINDOW_MS, ReadAuthenticator } from './api/read-auth.js';
export type { ReadAuthenticatorOptions, ReadKey, ReadNonceStore, Reader } from './api/read-auth.js';
export { ChunkedTree } from './api/log-index.js';
export type { StatementStatus } from './api/statement-status.js';
export { openApiDocument } from './api/openapi.js';
export {
  AcceptedSchema,
  CheckpointSchema,
  ConsistencySchema,
  DecisionAnswerSchema,
  EnforcementListSchema,
  ErrorBodySchema,
  GrantListSchema,
  HealthSchema,
  InstallationSchema,
  PendingListSchema,
  ProposalDetailSchema,
  ReadySchema,
  ReceiptSchema,
  RefusalMetricsSchema,
  StatementStatusSchema,
} from './api/wire-schemas.js';
export { OperatorMetrics, APPROVAL_LATENCY_BUCKETS } from './api/operator-metrics.js';
export { ledgerLogLevel, loggerFor } from './logging.js';
export { judgeToolCall, Permission } from './hook/executor.js';
export type { Verdict, ExecutorOptions, LogPosition } from './hook/executor.js';
export { proposalFor, targetOf, FailMode, Interceptor } from './hook/tool-call.js';
export type { ToolCall, ToolHints } from './hook/tool-call.js';
export { parsePreToolUse, preToolUseOutput, toolCallOf } from './hook/claude-code.js';
export { executorClient, readExecutorConfig, writeExecutorConfig } from './hook/config.js';
export type { ExecutorConfig } from './hook/config.js';
export { installPreToolUseHook } from './hook/settings.js';
export { McpGateway, LEDGER_META_KEY } from './mcp/gateway.js';
export { serveGatewayHttp } from './mcp/http.js';
export { embeddedPaths, isEmbedded, openEmbeddedStorage, readingBus } from './dev-storage.js';
export type { EmbeddedStorage } from './dev-storage.js';
