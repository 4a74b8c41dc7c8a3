import type { SqlPool } from '@agent-ledger/store';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { LogBus } from '@agent-ledger/kafka';

/** How often the broker and Postgres are probed. */
const PROBE_MS = 2_000;
/** A probe that has not answered by then counts as down. */
const PROBE_TIMEOUT_MS = 5_000;

/** One dependency's last probe. */
export interface DependencyStatus {
  up: boolean;
  error?: string;
}

function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

function codeOf(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[A-Z_0-9]{1,40}$/.test(code) ? code : 'UNAVAILABLE';
}

/**
 * Watches the broker and Postgres a role depends on: a cheap probe every
 * {@link PROBE_MS}, the result on /readyz and as `ledger_dependency_up`, and
 * every failed probe counted by dependency and code (operational, never a
 * refusal). Roles ride out an outage by retrying; this makes it visible.
 */
export class DependencyWatch {
  readonly #bus: LogBus;
  /** Undefined in a process whose roles do not use Postgres: only the broker is probed. */
  readonly #pool: SqlPool | undefined;
  readonly #topic: string;
  readonly #log: (message: string) => void;
  readonly #status: Record<'broker' | 'postgres', DependencyStatus> = { broker: { up: true }, postgres: { up: true } };
  readonly #failures: Record<'broker' | 'postgres', number> = { broker: 0, postgres: 0 };
  #counter: Counter<'dependency' | 'code'> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #probing = false;

  constructor(bus: LogBus, pool: SqlPool | undefined, probeTopic: string, log: (message: string) => void) {
    this.#bus = bus;
    this.#pool = pool;
    this.#topic = probeTopic;
    this.#log = log;
  }

  /** Adds the gauges and counters to a registry. */
  register(registry: Registry): void {
    const status = this.#status;
    new Gauge({
      name: 'ledger_dependency_up',
      help: '1 while the dependency answered its last probe',
      labelNames: ['dependency'],
      registers: [registry],
      collect() {
        for (const [name, s] of Object.entries(status)) this.set({ dependency: name }, s.up ? 1 : 0);
      },
    });
    this.#counter = new Counter({ name: 'ledger_dependency_failures_total', help: 'Failed probes of a dependency (an outage the roles ride out), by operational code', labelNames: ['dependency', 'code'], registers: [registry] });
  }

  /** Starts probing. */
  start(): void {
    this.#timer = setInterval(() => {
      this.probe().catch((err: unknown) => this.#log(`dependency probe failed: ${(err as Error).message}`));
    }, PROBE_MS);
    this.#timer.unref();
  }

  /** Probes both dependencies once (never throws). */
  async probe(): Promise<void> {
    if (this.#probing) return;
    this.#probing = true;
    try {
      await Promise.all([
        this.#check('broker', () => withTimeout(this.#bus.endOffsets(this.#topic), PROBE_TIMEOUT_MS, 'the broker')),
        ...(this.#pool === undefined ? [] : [this.#check('postgres', () => withTimeout((this.#pool as SqlPool).query('SELECT 1'), PROBE_TIMEOUT_MS, 'Postgres'))]),
      ]);
    } finally {
      this.#probing = false;
    }
  }

  async #check(name: 'broker' | 'postgres', probe: () => Promise<unknown>): Promise<void> {
    try {
      await probe();
      if (!this.#status[name].up) this.#log(`${name}: reachable again after ${this.#failures[name]} failed probes`);
      this.#status[name] = { up: true };
      this.#failures[name] = 0;
    } catch (err) {
      const message = (err as Error).message;
      if (this.#status[name].up) this.#log(`${name}: unreachable (${message}); roles retry with back-off`);
      this.#status[name] = { up: false, error: message };
      this.#failures[name] += 1;
      this.#counter?.inc({ dependency: name, code: codeOf(err) === 'UNAVAILABLE' ? 'UNAVAILABLE' : codeOf(err) });
    }
  }

  /** The last probe of each dependency. */
  status(): Record<string, DependencyStatus> {
    return { broker: { ...this.#status.broker }, postgres: { ...this.#status.postgres } };
  }

  /** Stops probing. */
  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
  }
}

/**
 * Runs `work` until it succeeds, with back-off (200 ms doubling to 5 s),
 * while its failure is retryable (`retryable: true`, or what `isRetryable`
 * says), for at most LEDGER_STARTUP_WAIT_MS (default 120 s).
 */
export async function retrying<T>(name: string, log: (message: string) => void, work: () => Promise<T>, isRetryable: (err: unknown) => boolean = (err) => (err as { retryable?: unknown } | null)?.retryable === true): Promise<T> {
  const limitMs = Number(process.env.LEDGER_STARTUP_WAIT_MS ?? '120000');
  const deadline = Date.now() + (Number.isFinite(limitMs) && limitMs >= 0 ? limitMs : 120_000);
  let delay = 200;
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      if (!isRetryable(err) || Date.now() + delay > deadline) throw err;
      if (attempt === 1 || attempt % 10 === 0) log(`${name}: not reachable yet (${(err as Error).message}); retrying`);
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(5_000, delay * 2);
    }
  }
}
