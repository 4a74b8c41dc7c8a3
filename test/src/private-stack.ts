import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { appendFileSync, chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from './fixtures.js';

// A broker and a Postgres cluster of a test's own, on ports of its own, for
// fault tests that stop, kill and restart them: the shared broker and the
// shared Postgres other tests use are never touched.

/** A free TCP port on 127.0.0.1 (the kernel picks it; the socket is closed again). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function waitForPort(port: number, open: boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await portOpen(port)) !== open) {
    if (Date.now() > deadline) throw new Error(`${what}: port ${port} still ${open ? 'closed' : 'open'} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** The broker jars `scripts/kafka.sh install` resolved (installing them when missing). */
function kafkaLibs(): string {
  const version = process.env.KAFKA_VERSION ?? '4.1.2';
  const fromEnv = process.env.KAFKA_LIBS;
  if (fromEnv !== undefined && existsSync(fromEnv)) return fromEnv;
  const libs = join(repoRoot, '.stack/kafka', version, 'libs');
  if (!existsSync(libs)) execFileSync('bash', [join(repoRoot, 'scripts/kafka.sh'), 'install'], { stdio: 'ignore' });
  if (!existsSync(libs) || readdirSync(libs).length === 0) throw new Error(`no broker jars in ${libs}`);
  return libs;
}

/** A single-node KRaft broker of the test's own (same settings as deploy/kafka/server.properties). */
export class PrivateBroker {
  readonly dir: string;
  readonly port: number;
  readonly #controllerPort: number;
  readonly #libs: string;
  #child: ChildProcess | undefined;
  /** Times the broker was killed. */
  kills = 0;

  private constructor(dir: string, port: number, controllerPort: number, libs: string) {
    this.dir = dir;
    this.port = port;
    this.#controllerPort = controllerPort;
    this.#libs = libs;
  }

  /** `host:port` for LEDGER_KAFKA_BROKERS / the home's config. */
  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  /**
   * Formats a fresh data directory and starts the broker. `options.render`
   * rewrites the rendered server.properties (listeners, TLS, SASL) and
   * `options.formatArgs` go to `kafka-storage format` (`--add-scram ...`).
   */
  static async start(options: { render?: (properties: string) => string; formatArgs?: readonly string[] } = {}): Promise<PrivateBroker> {
    const libs = kafkaLibs();
    const dir = mkdtempSync(join(tmpdir(), 'ledger-broker-'));
    const broker = new PrivateBroker(dir, await freePort(), await freePort(), libs);
    const template = readFileSync(join(repoRoot, 'deploy/kafka/server.properties'), 'utf8');
    const render = options.render ?? ((text: string): string => text);
    writeFileSync(
      join(dir, 'server.properties'),
      // Kafka 4.x lines are marked `#kafka4# ` in the template (as scripts/kafka.sh renders it); other versions' lines go.
      render(template
        .split('\n')
        .map((line) => line.replace(/^#kafka4# /, ''))
        .filter((line) => !/^#kafka\d*# /.test(line))
        .join('\n')
        .replaceAll('@KAFKA_PORT@', String(broker.port)).replaceAll('@KAFKA_CONTROLLER_PORT@', String(broker.#controllerPort)).replaceAll('@KAFKA_DATA_DIR@', join(dir, 'data'))),
    );
    const clusterId = Buffer.from(randomUUID().replaceAll('-', ''), 'hex').toString('base64url').slice(0, 22);
    execFileSync('java', ['-Xmx256m', ...broker.#logOptions(), '-cp', `${libs}/*`, 'kafka.tools.StorageTool', 'format', '-t', clusterId, '-c', join(dir, 'server.properties'), '--standalone', ...(options.formatArgs ?? [])], { stdio: ['ignore', openSync(join(dir, 'format.log'), 'a'), openSync(join(dir, 'format.log'), 'a')] });
    await broker.restart();
    return broker;
  }

  #logOptions(): string[] {
    return [`-Dlog4j2.configurationFile=${join(repoRoot, 'deploy/kafka/log4j2.xml')}`];
  }

  /** Starts the broker process (after a kill) and waits until it accepts connections. */
  async restart(): Promise<void> {
    if (this.#child !== undefined && this.#child.exitCode === null && this.#child.signalCode === null) return;
    const child = spawn('java', ['-Xmx384m', '-Xms128m', '-XX:+UseG1GC', '-Djava.awt.headless=true', `-Dkafka.logs.dir=${this.dir}`, ...this.#logOptions(), '-cp', `${this.#libs}/*`, 'kafka.Kafka', join(this.dir, 'server.properties')], {
      // The broker's log goes to broker.log in its directory (read it when it does not come up).
      stdio: ['ignore', openSync(join(this.dir, 'broker.log'), 'a'), openSync(join(this.dir, 'broker.log'), 'a')],
    });
    this.#child = child;
    await waitForPort(this.port, true, 120_000, 'private broker');
  }

  /** SIGKILL: no clean shutdown, as in a crash. */
  async kill(): Promise<void> {
    const child = this.#child;
    if (child === undefined) return;
    child.kill('SIGKILL');
    await exited(child);
    this.kills += 1;
    await waitForPort(this.port, false, 30_000, 'private broker');
  }

  /** Stops the broker for good. */
  async stop(): Promise<void> {
    const child = this.#child;
    this.#child = undefined;
    if (child === undefined) return;
    child.kill('SIGKILL');
    await exited(child);
  }
}

/** The newest Postgres server binaries Debian installed (/usr/lib/postgresql/N/bin). */
function postgresBin(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a)) : [];
  const version = versions[0];
  if (version === undefined) throw new Error('no initdb under /usr/lib/postgresql/*/bin');
  return join(root, version, 'bin');
}

/** Runs a Postgres tool, as the postgres user when this process is root (initdb refuses root). */
function asPostgresUser(bin: string, args: readonly string[]): string {
  const root = process.getuid?.() === 0;
  return execFileSync(root ? 'runuser' : bin, root ? ['-u', 'postgres', '--', bin, ...args] : [...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** A Postgres cluster of the test's own: initdb into a temp dir, trust auth, loopback only, its own port. */
export class PrivateCluster {
  readonly dir: string;
  readonly port: number;
  readonly #bin: string;

  private constructor(dir: string, port: number, bin: string) {
    this.dir = dir;
    this.port = port;
    this.#bin = bin;
  }

  /** A URL for a database on this cluster. */
  url(database: string): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  /**
   * Creates and starts the cluster. With `ssl` (a PEM certificate and key),
   * the server speaks TLS and accepts TCP connections over TLS only
   * (`hostssl` in pg_hba.conf, no plain `host` line).
   */
  static async start(options: { readonly ssl?: { readonly certFile: string; readonly keyFile: string } } = {}): Promise<PrivateCluster> {
    const bin = postgresBin();
    const parent = mkdtempSync(join(tmpdir(), 'ledger-pg-'));
    chmodSync(parent, 0o777);
    const dir = join(parent, 'data');
    mkdirSync(dir, { mode: 0o700 });
    if (process.getuid?.() === 0) execFileSync('chown', ['postgres:postgres', dir]);
    asPostgresUser(join(bin, 'initdb'), ['-D', dir, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8']);
    if (options.ssl !== undefined) {
      // Postgres reads its key only when the server's own user owns it, mode 0600.
      for (const [from, to] of [[options.ssl.certFile, 'server.crt'], [options.ssl.keyFile, 'server.key']] as const) {
        copyFileSync(from, join(dir, to));
        chmodSync(join(dir, to), 0o600);
        if (process.getuid?.() === 0) execFileSync('chown', ['postgres:postgres', join(dir, to)]);
      }
      appendFileSync(join(dir, 'postgresql.conf'), "\nssl = on\nssl_cert_file = 'server.crt'\nssl_key_file = 'server.key'\n");
      writeFileSync(join(dir, 'pg_hba.conf'), 'local all all trust\nhostssl all all 127.0.0.1/32 trust\n');
    }
    const cluster = new PrivateCluster(dir, await freePort(), bin);
    await cluster.restart();
    return cluster;
  }

  /** Starts the server (after a stop) and waits until it accepts connections. */
  async restart(): Promise<void> {
    asPostgresUser(join(this.#bin, 'pg_ctl'), ['-D', this.dir, '-w', '-t', '60', '-l', join(this.dir, 'server.log'), '-o', `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`, 'start']);
    await waitForPort(this.port, true, 60_000, 'private Postgres');
  }

  /** Stops at once (immediate mode: like a crash, every connection dropped). */
  async stopImmediately(): Promise<void> {
    asPostgresUser(join(this.#bin, 'pg_ctl'), ['-D', this.dir, '-w', '-m', 'immediate', 'stop']);
    await waitForPort(this.port, false, 30_000, 'private Postgres');
  }

  /** Stops the cluster for good. */
  async stop(): Promise<void> {
    try {
      asPostgresUser(join(this.#bin, 'pg_ctl'), ['-D', this.dir, '-w', '-m', 'immediate', 'stop']);
    } catch {
      // Already stopped.
    }
  }
}

/** Runs `scripts/kafka.sh cluster <command>` for a cluster's directory and ports; resolves with its output. */
function clusterScript(command: string, dir: string, basePort: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [join(repoRoot, 'scripts/kafka.sh'), 'cluster', command], {
      env: { ...process.env, KAFKA_CLUSTER_DIR: dir, KAFKA_CLUSTER_PORT: String(basePort), KAFKA_CLUSTER_NODES: '3' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 || command === 'status' ? resolve(output) : reject(new Error(`kafka.sh cluster ${command} exited ${code}: ${output}`))));
  });
}

/** Six consecutive free ports from `KAFKA_TEST_CLUSTER_PORT`, else from a random base. */
async function clusterBasePort(): Promise<number> {
  const fromEnv = process.env.KAFKA_TEST_CLUSTER_PORT;
  if (fromEnv !== undefined && fromEnv !== '') return Number(fromEnv);
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * 30_000);
    const taken = await Promise.all(Array.from({ length: 6 }, (_, i) => portOpen(base + i)));
    if (taken.every((open) => !open)) return base;
  }
  throw new Error('no six consecutive free ports');
}

/**
 * A three-node Kafka cluster of a test's own (`scripts/kafka.sh cluster`, each
 * node broker + controller) in a temp directory, on six consecutive ports of
 * its own. Nodes are numbered 1..3; node i's broker is `127.0.0.1:base+i-1`.
 */
export class PrivateKafkaCluster {
  readonly dir: string;
  readonly basePort: number;

  private constructor(dir: string, basePort: number) {
    this.dir = dir;
    this.basePort = basePort;
  }

  /** Formats and starts the three nodes; resolves once every node lists all three brokers. */
  static async start(): Promise<PrivateKafkaCluster> {
    kafkaLibs();
    const cluster = new PrivateKafkaCluster(mkdtempSync(join(tmpdir(), 'ledger-kafka-cluster-')), await clusterBasePort());
    await cluster.startMissing();
    return cluster;
  }

  /** The bootstrap list for LEDGER_KAFKA_BROKERS. */
  get brokers(): string[] {
    return [1, 2, 3].map((node) => `127.0.0.1:${this.basePort + node - 1}`);
  }

  /** The node whose broker listens on `port`. */
  nodeOfPort(port: number): number {
    return port - this.basePort + 1;
  }

  /** The pid of node `node` (1..3) as its pidfile has it, or undefined when it is not running. */
  pid(node: number): number | undefined {
    const file = join(this.dir, `node-${node}`, 'broker.pid');
    if (!existsSync(file)) return undefined;
    const pid = Number(readFileSync(file, 'utf8').trim());
    try {
      process.kill(pid, 0);
      return pid;
    } catch {
      return undefined;
    }
  }

  /** Sends `signal` to node `node`; for SIGKILL, waits until its broker port is closed. */
  async signal(node: number, signal: NodeJS.Signals): Promise<void> {
    const pid = this.pid(node);
    if (pid === undefined) throw new Error(`node ${node} is not running`);
    process.kill(pid, signal);
    if (signal === 'SIGKILL') await waitForPort(this.basePort + node - 1, false, 30_000, `node ${node}`);
  }

  /** Starts the nodes that are not running (a killed one comes back) and waits until all three are brokers again. */
  async startMissing(): Promise<void> {
    await clusterScript('start', this.dir, this.basePort);
  }

  /** The active controller as `kafka.sh cluster status` reports it (the quorum-state files). */
  async activeController(): Promise<number> {
    const status = await clusterScript('status', this.dir, this.basePort);
    const match = /^active controller: node (\d+)/m.exec(status);
    if (match === null) throw new Error(`no active controller in: ${status}`);
    return Number(match[1]);
  }

  /** Stops every node (a paused one is continued first) and removes the cluster's directory. */
  async stop(): Promise<void> {
    await clusterScript('stop', this.dir, this.basePort).catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
  }
}
