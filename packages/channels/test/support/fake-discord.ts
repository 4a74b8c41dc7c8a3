import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EventEmitter } from 'node:events';
import { concatBytes, generateSeed, nodeEd25519, toHex, utf8 } from '@agent-ledger/core';

/** A message created through the fake REST API. */
export interface DiscordMessage {
  readonly id: string;
  readonly channel_id: string;
  readonly content: string;
  readonly components: { type: 1; components: { type: 2; custom_id: string; label: string }[] }[];
  readonly allowed_mentions: unknown;
}

/**
 * A local Discord REST API (`POST /api/v10/channels/{id}/messages`, bot
 * token auth, the message object in reply; errors as `{"message","code"}`).
 */
export class FakeDiscordRest {
  readonly messages: DiscordMessage[] = [];
  readonly events = new EventEmitter();
  down = false;
  readonly #token: string;
  readonly #server: Server;
  #nextId = 900_000_000_000_000_000n;

  constructor(token: string) {
    this.#token = token;
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const reply = (status: number, body: unknown): void => {
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(JSON.stringify(body));
        };
        if (req.headers.authorization !== `Bot ${this.#token}`) return reply(401, { message: '401: Unauthorized', code: 0 });
        if (this.down) return reply(503, { message: 'Service Unavailable', code: 0 });
        const match = /^\/api\/v10\/channels\/([0-9]+)\/messages$/.exec(req.url ?? '');
        if (req.method !== 'POST' || match === null) return reply(404, { message: '404: Not Found', code: 0 });
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Omit<DiscordMessage, 'id' | 'channel_id'>;
        const message: DiscordMessage = { ...body, id: String(this.#nextId++), channel_id: match[1] as string };
        this.messages.push(message);
        this.events.emit('message', message);
        return reply(200, message);
      });
    });
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/api/v10`;
  }

  async stop(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

/** What Discord would send, and how a test may spoil it. */
export interface InteractionSend {
  readonly body: unknown;
  /** Unix seconds for X-Signature-Timestamp (default now). */
  readonly timestamp?: number;
  /** Sign these bytes but send `body` (the body altered after signing). */
  readonly signedBody?: string;
  /** Override the signature header (null: leave it out). */
  readonly signature?: string | null;
  /** Sign with this seed instead of the application's. */
  readonly seed?: Uint8Array;
  /** Leave out the timestamp header. */
  readonly omitTimestamp?: boolean;
}

/**
 * Plays Discord's side of the interactions endpoint: signs each request with
 * the application's Ed25519 key over timestamp + raw body and sends
 * `X-Signature-Ed25519` (hex) and `X-Signature-Timestamp` like Discord does.
 */
export class DiscordInteractionClient {
  readonly publicKeyHex: string;
  url = '';
  #nextInteractionId = 1_200_000_000_000_000_000n;

  /** `seed` is the application's private key; its public key is what the endpoint is configured with. */
  constructor(readonly seed: Uint8Array = generateSeed()) {
    this.publicKeyHex = toHex(nodeEd25519.publicKeyFromSeed(seed));
  }

  /** A MESSAGE_COMPONENT interaction pressing `customId` on `messageId`, by `userId` (guild member shape). */
  buttonPress(userId: string, customId: string, messageId: string, id?: string): Record<string, unknown> {
    return {
      type: 3,
      id: id ?? String(this.#nextInteractionId++),
      application_id: '1100000000000000000',
      token: 'interaction-token',
      version: 1,
      channel_id: '555',
      guild_id: '777',
      member: { user: { id: userId, username: `user${userId}` }, roles: [] },
      message: { id: messageId, channel_id: '555' },
      data: { custom_id: customId, component_type: 2 },
    };
  }

  async send(request: InteractionSend): Promise<{ status: number; body: Record<string, unknown> }> {
    const text = JSON.stringify(request.body);
    const timestamp = String(request.timestamp ?? Math.floor(Date.now() / 1000));
    const signed = concatBytes(utf8(timestamp), utf8(request.signedBody ?? text));
    const signature = request.signature === undefined ? toHex(nodeEd25519.sign(request.seed ?? this.seed, signed)) : request.signature;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (signature !== null) headers['x-signature-ed25519'] = signature;
    if (request.omitTimestamp !== true) headers['x-signature-timestamp'] = timestamp;
    const response = await fetch(this.url, { method: 'POST', headers, body: text });
    const reply = await response.text();
    return { status: response.status, body: reply === '' ? {} : (JSON.parse(reply) as Record<string, unknown>) };
  }
}
