import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import { fromHex, nodeEd25519, parseStrictJsonBytes, type Ed25519Backend } from '@agent-ledger/core';
import { ChannelEvents } from './channel-events.js';
import { verifyDiscordInteraction, DISCORD_MAX_SKEW_SECONDS } from './discord-signature.js';
import { ChannelDown } from './errors.js';
import { OutstandingRequests } from './outstanding.js';
import { describePendingApproval } from './pending-approval.js';
import { asObject, postJson } from './platform-http.js';
import { describeEscalation } from './escalation.js';
import type { AlertChannel, ApprovalChannel, EscalationNotice, PendingApproval } from './types.js';

/** Options of {@link DiscordChannel}. */
export interface DiscordOptions {
  /** REST API base (default https://discord.com/api/v10). */
  readonly apiBase?: string;
  /** Bot token (sent as `Authorization: Bot <token>`). */
  readonly token: string;
  /** Channel the approval messages go to. */
  readonly channelId: string;
  /** The application's Ed25519 public key, hex (Developer Portal, "Public Key"). */
  readonly applicationPublicKey: string;
  /** Discord user ids (snowflakes) whose button presses count. */
  readonly allowedUserIds: readonly string[];
  /** Interactions endpoint: host (default 127.0.0.1), port (default 0: any free port), path (default /interactions). */
  readonly host?: string;
  readonly port?: number;
  readonly path?: string;
  /** Allowed clock skew of interaction timestamps, seconds (default 300). */
  readonly maxSkewSeconds?: number;
  /** Timeout of REST calls in ms (default 10 000). */
  readonly requestTimeoutMs?: number;
  readonly fetch?: typeof fetch;
  readonly now?: () => number;
  readonly ed25519?: Ed25519Backend;
}

/** Interaction types and callback types (https://discord.com/developers/docs/interactions/receiving-and-responding). */
const InteractionType = { PING: 1, MESSAGE_COMPONENT: 3 } as const;
const CallbackType = { PONG: 1, CHANNEL_MESSAGE_WITH_SOURCE: 4, UPDATE_MESSAGE: 7 } as const;
/** Message flag: only the user who pressed sees the reply. */
const EPHEMERAL = 64;
/** Interactions are small; anything bigger is refused before it is read in full. */
const MAX_INTERACTION_BYTES = 64 * 1024;
/** Button custom ids this channel issues: `ledger:a:<shortId>` or `ledger:d:<shortId>`. */
const CUSTOM_ID = /^ledger:([ad]):([A-Za-z0-9_-]{16})$/;
const SNOWFLAKE = /^[0-9]{1,20}$/;

/**
 * Approval channel over Discord: each pending approval is a message with
 * Approve / Deny buttons posted through the REST API; presses arrive at this
 * channel's interactions HTTP endpoint, which verifies Discord's Ed25519
 * request signature before reading anything, answers PING with PONG, and for a
 * button press by an allowed user records the answer and updates the message
 * (callback type 7). Everything in an interaction is untrusted until then.
 */
export class DiscordChannel extends ChannelEvents implements ApprovalChannel, AlertChannel {
  readonly name = 'discord' as const;
  readonly #options: DiscordOptions;
  readonly #apiBase: string;
  readonly #publicKey: Uint8Array;
  readonly #allowed: ReadonlySet<string>;
  readonly #fetch: typeof fetch;
  readonly #now: () => number;
  readonly #outstanding: OutstandingRequests<string>;
  /** Interaction ids already handled (bounded): a signed request replayed inside the skew window is refused. */
  readonly #seenInteractions = new Set<string>();
  #server: Server | null = null;

  constructor(options: DiscordOptions) {
    super();
    this.#options = options;
    this.#apiBase = (options.apiBase ?? 'https://discord.com/api/v10').replace(/\/+$/, '');
    this.#publicKey = fromHex(options.applicationPublicKey.toLowerCase(), 32);
    this.#allowed = new Set(options.allowedUserIds);
    this.#fetch = options.fetch ?? fetch;
    this.#now = options.now ?? Date.now;
    this.#outstanding = new OutstandingRequests({ now: this.#now });
  }

  /** Posts the approval message with its buttons. @throws ChannelDown */
  async notify(pending: PendingApproval): Promise<void> {
    const entry = this.#outstanding.issue(pending);
    try {
      const reply = await postJson({
        channel: this.name,
        url: `${this.#apiBase}/channels/${encodeURIComponent(this.#options.channelId)}/messages`,
        headers: { authorization: `Bot ${this.#options.token}` },
        body: JSON.stringify({
          content: escapeMarkdown(describePendingApproval(pending)),
          // Nothing in an agent's arguments may ping anyone.
          allowed_mentions: { parse: [] },
          components: [
            {
              type: 1,
              components: [
                { type: 2, style: 3, label: 'Approve', custom_id: `ledger:a:${entry.shortId}` },
                { type: 2, style: 4, label: 'Deny', custom_id: `ledger:d:${entry.shortId}` },
              ],
            },
          ],
        }),
        timeoutMs: this.#options.requestTimeoutMs ?? 10_000,
        fetch: this.#fetch,
      });
      const message = asObject(reply.body);
      if (reply.status !== 200 || typeof message?.id !== 'string') {
        const detail = typeof message?.message === 'string' ? message.message.slice(0, 200) : 'no message returned';
        throw new ChannelDown(this.name, `create message: HTTP ${reply.status}: ${detail}`);
      }
      entry.ref = message.id;
    } catch (error) {
      this.#outstanding.discard(entry.shortId);
      throw error;
    }
  }

  /** Posts an escalation notice as a plain message (no components, no mentions). @throws ChannelDown */
  async alert(notice: EscalationNotice): Promise<void> {
    const reply = await postJson({
      channel: this.name,
      url: `${this.#apiBase}/channels/${encodeURIComponent(this.#options.channelId)}/messages`,
      headers: { authorization: `Bot ${this.#options.token}` },
      body: JSON.stringify({ content: escapeMarkdown(describeEscalation(notice)), allowed_mentions: { parse: [] } }),
      timeoutMs: this.#options.requestTimeoutMs ?? 10_000,
      fetch: this.#fetch,
    });
    const message = asObject(reply.body);
    if (reply.status !== 200 || typeof message?.id !== 'string') {
      const detail = typeof message?.message === 'string' ? message.message.slice(0, 200) : 'no message returned';
      throw new ChannelDown(this.name, `create message: HTTP ${reply.status}: ${detail}`);
    }
  }

  /** Starts the interactions endpoint; resolves to the port it listens on. */
  async listen(): Promise<number> {
    if (this.#server !== null) return (this.#server.address() as AddressInfo).port;
    const server = createServer((req, res) => {
      this.#serve(req, res).catch(() => {
        if (!res.headersSent) reply(res, 500, { error: { code: ReasonCode.INTEGRITY_FAILURE } });
      });
    });
    this.#server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.#options.port ?? 0, this.#options.host ?? '127.0.0.1', () => resolve());
    });
    return (server.address() as AddressInfo).port;
  }

  /** Stops the interactions endpoint. */
  async close(): Promise<void> {
    const server = this.#server;
    this.#server = null;
    if (server === null) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  async #serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'POST' || (req.url ?? '').split('?')[0] !== (this.#options.path ?? '/interactions')) {
      return reply(res, 404, { error: { code: ReasonCode.SCHEMA_INVALID } });
    }
    const rawBody = await readBody(req, MAX_INTERACTION_BYTES);
    if (rawBody === null) return reply(res, 413, { error: { code: ReasonCode.SCHEMA_INVALID } });
    try {
      verifyDiscordInteraction(
        { signatureHex: header(req, 'x-signature-ed25519'), timestamp: header(req, 'x-signature-timestamp'), rawBody },
        this.#publicKey,
        this.#now(),
        this.#options.ed25519 ?? nodeEd25519,
        this.#options.maxSkewSeconds ?? DISCORD_MAX_SKEW_SECONDS,
      );
    } catch (error) {
      const code = error instanceof LedgerError ? error.code : ReasonCode.INVALID_SIGNATURE;
      this.emitRefusal({ channel: this.name, code, platformIdentity: null, detail: 'interaction request refused' });
      // Discord's endpoint contract: any request whose signature does not check gets 401.
      return reply(res, 401, { error: { code } });
    }
    let interaction: Readonly<Record<string, unknown>> | undefined;
    try {
      interaction = asObject(parseStrictJsonBytes(rawBody));
    } catch {
      interaction = undefined;
    }
    if (interaction === undefined) return reply(res, 400, { error: { code: ReasonCode.SCHEMA_INVALID } });
    if (interaction.type === InteractionType.PING) return reply(res, 200, { type: CallbackType.PONG });
    if (interaction.type !== InteractionType.MESSAGE_COMPONENT) return reply(res, 400, { error: { code: ReasonCode.SCHEMA_INVALID } });
    return reply(res, 200, this.#onComponent(interaction));
  }

  /** A button press: returns the interaction response. */
  #onComponent(interaction: Readonly<Record<string, unknown>>): unknown {
    const user = asObject(asObject(interaction.member)?.user) ?? asObject(interaction.user);
    const userId = typeof user?.id === 'string' && SNOWFLAKE.test(user.id) ? user.id : null;
    const identity = userId === null ? null : `discord:${userId}`;
    const refuse = (code: ReasonCode, detail: string, text: string): unknown => {
      this.emitRefusal({ channel: this.name, code, platformIdentity: identity, detail });
      return { type: CallbackType.CHANNEL_MESSAGE_WITH_SOURCE, data: { content: text, flags: EPHEMERAL, allowed_mentions: { parse: [] } } };
    };
    if (typeof interaction.id !== 'string' || !SNOWFLAKE.test(interaction.id)) return refuse(ReasonCode.SCHEMA_INVALID, 'interaction has no id', 'Unknown request.');
    if (this.#seenInteractions.has(interaction.id)) return refuse(ReasonCode.REPLAY, 'interaction already handled', 'Already handled.');
    this.#remember(interaction.id);
    if (userId === null || !this.#allowed.has(userId)) return refuse(ReasonCode.POLICY_VIOLATION, 'user is not on the allowed list', 'You are not allowed to answer this request.');
    const customId = asObject(interaction.data)?.custom_id;
    const match = typeof customId === 'string' ? CUSTOM_ID.exec(customId) : null;
    if (match === null) return refuse(ReasonCode.SCHEMA_INVALID, 'malformed custom_id', 'Unknown request.');
    const [, answerLetter, shortId] = match as unknown as [string, 'a' | 'd', string];
    const entry = this.#outstanding.peek(shortId);
    if (entry !== undefined && entry.ref !== null && asObject(interaction.message)?.id !== entry.ref) {
      return refuse(ReasonCode.INTEGRITY_FAILURE, 'custom_id does not belong to this message', 'Unknown request.');
    }
    const settled = this.#outstanding.settle(shortId);
    if (!settled.ok) return refuse(settled.code, settled.detail, 'This request is no longer pending.');
    const answer = answerLetter === 'a' ? 'approve' : 'deny';
    this.emitAnswer({ channel: this.name, request: settled.entry.pending.request, answer, platformIdentity: `discord:${userId}` });
    const verdict = answer === 'approve' ? 'Approved' : 'Denied';
    return {
      type: CallbackType.UPDATE_MESSAGE,
      data: {
        content: `${escapeMarkdown(describePendingApproval(settled.entry.pending))}\n\n${verdict} by <@${userId}>`,
        components: [],
        allowed_mentions: { parse: [] },
      },
    };
  }

  #remember(interactionId: string): void {
    this.#seenInteractions.add(interactionId);
    if (this.#seenInteractions.size > 10_000) {
      const oldest = this.#seenInteractions.values().next().value;
      if (oldest !== undefined) this.#seenInteractions.delete(oldest);
    }
  }
}

/** Backslash-escapes Discord markdown so an agent's text shows literally. */
function escapeMarkdown(text: string): string {
  return text.replace(/[\\*_`~|>#[\]()<@:-]/g, (c) => `\\${c}`);
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === 'string' ? value : undefined;
}

/** Reads a request body of at most `limit` bytes; null when it is longer. */
async function readBody(req: IncomingMessage, limit: number): Promise<Uint8Array | null> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    length += chunk.length;
    if (length > limit) return null;
    chunks.push(chunk);
  }
  return new Uint8Array(Buffer.concat(chunks));
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
