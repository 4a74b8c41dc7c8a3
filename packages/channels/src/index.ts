export { ChannelName } from './types.js';
export type {
  ApprovalChannel,
  PendingApproval,
  ExactOperation,
  ChannelAnswer,
  ChannelRefusal,
  AnswerListener,
  RefusalListener,
  AlertChannel,
  EscalationLevel,
  EscalationNotice,
} from './types.js';
export { EscalationRouter, describeEscalation } from './escalation.js';
export type { AlertDelivery, EscalationRouting } from './escalation.js';
export { ChannelDown } from './errors.js';
export { pendingApprovalFrom, describePendingApproval } from './pending-approval.js';
export { TelegramChannel } from './telegram.js';
export type { TelegramOptions } from './telegram.js';
export { DiscordChannel } from './discord.js';
export type { DiscordOptions } from './discord.js';
export { verifyDiscordInteraction, DISCORD_MAX_SKEW_SECONDS } from './discord-signature.js';
export type { SignedInteraction } from './discord-signature.js';
export { WebhookChannel, webhookSignature, WEBHOOK_SIGNATURE_HEADER } from './webhook.js';
export type { WebhookOptions } from './webhook.js';
export { CliChannel } from './cli.js';
export type { CliOptions } from './cli.js';
export { FailoverNotifier, DEFAULT_FAILOVER_ORDER } from './failover.js';
export type { FailoverOptions, RouteAttempt, RouteOutcome } from './failover.js';
export { ChatBridge } from './chat-bridge.js';
export type { ChatBridgeOptions } from './chat-bridge.js';
export { requireSelfSignedAbove } from './assurance-policy.js';
export type { Assurance, AssurancePolicy } from './assurance-policy.js';
