import pg from 'pg';
import { DECISION_CHANNEL, type SqlNotifications } from '@agent-ledger/store';

/** Back-off between reconnection attempts: doubles from the first to the last. */
const RETRY_FIRST_MS = 100;
const RETRY_LAST_MS = 5_000;

/** Where a wake-up is delivered: the proposal hash a decision was applied for. */
export type DecisionWake = (proposal: string) => void;

/**
 * The API's one LISTEN connection for decisions (store's DECISION_CHANNEL).
 * It owns a dedicated client, never a pooled one: a terminated backend or a
 * Postgres restart is an 'error' event it handles by reconnecting with
 * back-off, never a crash. Notifications sent while it was away are lost, so
 * after every (re)connection `onReconnect` runs: waiters re-read their
 * decision from the projection.
 */
export class DecisionListener {
  /** A Postgres URL (a dedicated LISTEN connection), or an embedded database that notifies in the process. */
  readonly #source: string | SqlNotifications;
  #unlisten: (() => Promise<void>) | undefined;
  readonly #onDecision: DecisionWake;
  readonly #onReconnect: () => void;
  readonly #log: (message: string) => void;
  #client: pg.Client | undefined;
  #connected = false;
  #stopped = false;
  #retryMs = RETRY_FIRST_MS;
  #timer: NodeJS.Timeout | undefined;
  /** Connections lost since start (shown on /metrics). */
  losses = 0;

  constructor(source: string | SqlNotifications, onDecision: DecisionWake, options: { onReconnect: () => void; log: (message: string) => void }) {
    this.#source = source;
    this.#onDecision = onDecision;
    this.#onReconnect = options.onReconnect;
    this.#log = options.log;
  }

  /** True while the LISTEN connection is up. */
  get connected(): boolean {
    return this.#connected;
  }

  /** Connects once; when that fails, keeps retrying in the background and resolves anyway. */
  async start(): Promise<void> {
    await this.#connect();
  }

  async #connect(): Promise<void> {
    if (this.#stopped) return;
    if (typeof this.#source !== 'string') {
      // In the process there is no connection to lose: subscribe once.
      this.#unlisten = await this.#source.listen(DECISION_CHANNEL, (payload) => this.#onDecision(payload));
      this.#connected = true;
      this.#onReconnect();
      return;
    }
    const client = new pg.Client({ connectionString: this.#source, connectionTimeoutMillis: 10_000 });
    this.#client = client;
    let lost = false;
    const onLost = (reason: string): void => {
      if (lost) return;
      lost = true;
      if (this.#client === client) {
        this.#client = undefined;
        if (this.#connected) this.losses += 1;
        this.#connected = false;
      }
      client.removeAllListeners('notification');
      void client.end().catch(() => undefined);
      if (!this.#stopped) {
        this.#log(`api: decision listener lost (${reason}); reconnecting in ${this.#retryMs} ms`);
        this.#schedule();
      }
    };
    client.on('error', (err) => onLost(err.message));
    client.on('end', () => onLost('connection ended'));
    client.on('notification', (msg) => {
      if (msg.payload !== undefined) this.#onDecision(msg.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${DECISION_CHANNEL}`);
    } catch (err) {
      onLost((err as Error).message);
      return;
    }
    if (lost) return;
    this.#connected = true;
    this.#retryMs = RETRY_FIRST_MS;
    // Decisions applied while no connection listened are found by re-reading.
    this.#onReconnect();
  }

  #schedule(): void {
    if (this.#timer !== undefined || this.#stopped) return;
    const delay = this.#retryMs;
    this.#retryMs = Math.min(RETRY_LAST_MS, this.#retryMs * 2);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#connect().catch((err: unknown) => this.#log(`api: decision listener: ${(err as Error).message}`));
    }, delay);
  }

  /** Stops listening and closes the connection. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    const client = this.#client;
    this.#client = undefined;
    this.#connected = false;
    if (client !== undefined) await client.end().catch(() => undefined);
    const unlisten = this.#unlisten;
    this.#unlisten = undefined;
    if (unlisten !== undefined) await unlisten().catch(() => undefined);
  }
}
