import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EventEmitter } from 'node:events';

/** A delivery the receiver got, with whether its HMAC checked out on the receiver's side. */
export interface Delivery {
  readonly body: string;
  readonly signature: string | undefined;
  readonly hmacValid: boolean;
}

/** A local webhook receiver: records each POST and checks its HMAC like a real integration would. */
export class WebhookReceiver {
  readonly deliveries: Delivery[] = [];
  readonly events = new EventEmitter();
  status = 204;
  readonly #server: Server;

  constructor(readonly secret: string) {
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const signature = req.headers['x-ledger-signature'] as string | undefined;
        const expected = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
        this.deliveries.push({ body, signature, hmacValid: signature === expected });
        this.events.emit('delivery');
        res.writeHead(this.status);
        res.end(this.status === 204 ? undefined : 'nope');
      });
    });
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/hooks/approvals`;
  }

  async stop(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  /** The receiver's signed answer to the newest delivery. */
  answer(answer: 'approve' | 'deny', approver = 'alice', delivery = this.deliveries.at(-1)): { body: string; signature: string } {
    const pending = JSON.parse(delivery?.body ?? '{}') as { callbackId: string; pending: { request: string } };
    const body = JSON.stringify({ callbackId: pending.callbackId, request: pending.pending.request, answer, approver });
    return { body, signature: `sha256=${createHmac('sha256', this.secret).update(body).digest('hex')}` };
  }
}
