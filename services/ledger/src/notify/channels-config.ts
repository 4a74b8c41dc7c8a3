import { z } from 'zod';

/** Channels the notify role can route to, in `order` (the web page is served by the API and needs no routing). */
const RoutedChannel = z.enum(['telegram', 'discord', 'cli', 'webhook']);
const HttpUrl = z.url({ protocol: /^https?$/ });
const Port = z.number().int().min(0).max(65535);

/**
 * The optional `channels` section of `.ledger/config.json`: which chat
 * channels the notify role routes confirmation requests to, and in what
 * order. Absent: no chat channels; approvals come from the CLI and the web
 * page only. Secrets (bot tokens, the webhook secret) live here, in the
 * owner-only installation directory.
 */
export const ChannelsConfigSchema = z
  .strictObject({
    /** Failover order (default telegram, discord, cli, webhook); channels not configured are skipped. */
    order: z.array(RoutedChannel).min(1).max(4).optional(),
    telegram: z
      .strictObject({
        apiBase: HttpUrl,
        token: z.string().min(1).max(200),
        chatId: z.union([z.number().int(), z.string().min(1).max(100)]),
        /** Telegram user ids whose presses count; everyone else is refused. */
        allowedUserIds: z.array(z.number().int().positive()).min(1),
      })
      .optional(),
    discord: z
      .strictObject({
        apiBase: HttpUrl,
        token: z.string().min(1).max(200),
        channelId: z.string().regex(/^\d{1,20}$/),
        /** The application's Ed25519 public key (hex), which signs every interaction. */
        applicationPublicKey: z.string().regex(/^[0-9a-f]{64}$/),
        allowedUserIds: z.array(z.string().regex(/^\d{1,20}$/)).min(1),
        /** Port of the interactions endpoint (127.0.0.1). */
        listenPort: Port,
      })
      .optional(),
    webhook: z
      .strictObject({
        url: HttpUrl,
        /** HMAC-SHA256 shared secret, at least 32 characters. */
        secret: z.string().min(32).max(1024),
        /** Port (127.0.0.1) of the endpoint receivers POST signed answers to; absent: no answers by webhook. */
        listenPort: Port.optional(),
      })
      .optional(),
    /**
     * Who hears escalations: `owners` maps an agent (or `*`) to the channels
     * of the people it acts for (notify level), `admins` lists the admins'
     * channels (admin level), each in failover order; both default to
     * `order`. Emergencies go to every channel at once, then the webhook.
     */
    escalation: z
      .strictObject({
        owners: z.record(z.string().regex(/^(\*|[a-z][a-z0-9-]{0,31}:[A-Za-z0-9._@-]{1,128})$/), z.array(RoutedChannel).min(1).max(4)).optional(),
        admins: z.array(RoutedChannel).min(1).max(4).optional(),
      })
      .optional(),
  })
  .refine((c) => c.order === undefined || new Set(c.order).size === c.order.length, { message: 'channels.order names a channel twice', path: ['order'] });

/** The `channels` section of the configuration. */
export type ChannelsConfig = z.infer<typeof ChannelsConfigSchema>;
