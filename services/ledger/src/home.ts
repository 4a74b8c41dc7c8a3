import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { LedgerError, OperationalCode, OperationalError, ReasonCode } from '@agent-ledger/refusals';
import { pinTrust, trustFromGenesis } from '@agent-ledger/client';
import { BODY_SCHEMAS, EnvelopeSchema, LATEST_AUTHORITY_RULES_VERSION, createStatement, nodeEd25519, parseStrictJson, signStatement, type BodyOf, type Envelope, type Role, type Signer, type TrustRoot } from '@agent-ledger/core';
import { newSigner, readKeyFile, writeKeyFile } from './keys.js';
import { formatTrustRoot, readTrustRoot } from './trust-root-file.js';
import { ChannelsConfigSchema } from './notify/channels-config.js';
import { AllowedHostSchema } from './api/host-allow-list.js';
import { RateSettingsSchema } from './api/rate-limit.js';
import { KafkaConfigSchema } from './kafka-client.js';

/**
 * The local installation's directory (default `.ledger/` at the repository
 * root, git-ignored, owner-only): configuration, the trust root auditors pin,
 * the signed genesis, and the private keys of the local principals.
 *
 *   .ledger/config.json        origin, partitions, checkpoint cadence, Kafka and Postgres addresses, chat channels
 *   .ledger/trust-root.json    root public keys and threshold (what `verify-chain --trust-root` takes)
 *   .ledger/genesis.json       the genesis envelope, signed by 2 of the 3 root keys
 *   .ledger/trust.json         the trust document agents pin to check decision receipts (SPEC.md 10.1)
 *   .ledger/keys/*.key         private keys (mode 0600), one per principal
 *
 * The three root private keys are not in it: `ledger init` writes them to a
 * directory of their own (default `<home>-root-keys/`, `--root-keys DIR`), to
 * be moved offline. The live installation needs none of them; the commands
 * that sign with a root key (`ledger rotate-root`) take each key's path.
 */
export const ConfigSchema = z.strictObject({
  v: z.literal(1),
  origin: z.string().min(1).max(200),
  eventPartitions: z.number().int().min(1).max(64),
  freshnessMs: z.number().int().min(1000),
  checkpointEvery: z.number().int().min(1),
  checkpointIntervalMs: z.number().int().min(10),
  kafkaBrokers: z.array(z.string().min(1)).min(1),
  pgUrl: z.string().min(1),
  apiPort: z.number().int().min(0).max(65535),
  /** Prefix of every topic and consumer group (several ledgers can share a broker). */
  topicPrefix: z.string().regex(/^[a-z][a-z0-9-]{0,31}$/),
  /**
   * The API's edge (absent: defaults). An environment variable, when set,
   * wins over each field: LEDGER_API_HOSTS, LEDGER_API_RATE_LIMIT,
   * LEDGER_API_REFUSAL_RECORD_LIMIT, LEDGER_API_MAX_BACKLOG_MS.
   */
  api: z
    .strictObject({
      /** Host names (`name` or `name:port`) the API answers besides the loopback names of its own port. */
      hosts: z.array(AllowedHostSchema).max(64).optional(),
      /** Statements one principal may submit: a token bucket. */
      rateLimit: RateSettingsSchema.optional(),
      /** Refusals of one principal (or one address) recorded on the log: a token bucket. */
      refusalRecordLimit: RateSettingsSchema.optional(),
      /** Longest wait of an accepted statement for the sequencer before new ones are refused (UNAVAILABLE). */
      maxBacklogMs: z.number().int().min(100).max(3_600_000).optional(),
      /**
       * How reads are authenticated: `signed` (absent: each read is signed by a
       * registered key and answered within its role) or `open` (anyone who
       * reaches the port reads everything: logged as a warning, shown on /readyz).
       */
      readAuth: z.enum(['signed', 'open']).optional(),
      /** A file holding the bearer token `/metrics` also accepts (a Prometheus scraper holds no ledger key). */
      metricsTokenFile: z.string().min(1).max(4096).optional(),
      /** Address the API listens on (absent: 127.0.0.1). LEDGER_API_BIND wins. */
      bind: z.string().min(1).max(255).optional(),
      /** TLS for the API from PEM files: the API serves https only. LEDGER_API_TLS_CERT and LEDGER_API_TLS_KEY win. */
      tls: z.strictObject({ certFile: z.string().min(1).max(4096), keyFile: z.string().min(1).max(4096) }).optional(),
      /** A PEM file of the CA the local clients (CLI, hook, MCP gateway) trust for the API's certificate. LEDGER_API_CA wins. */
      caFile: z.string().min(1).max(4096).optional(),
    })
    .optional(),
  /**
   * Where the log and the projection live: `kafka` (absent: the Kafka brokers
   * and the Postgres URL above; `ledger serve`) or `embedded` (`log/` and `pg/`
   * in this directory, one process; `ledger dev`).
   */
  storage: z.enum(['kafka', 'embedded']).optional(),
  /**
   * TLS and SASL/SCRAM to the brokers, and the kind of deployment the topics
   * are made for (absent: plain text, chosen by the cluster's size). The
   * environment wins over each field: LEDGER_KAFKA_SSL_CA,
   * LEDGER_KAFKA_SASL_MECHANISM, LEDGER_KAFKA_SASL_USERNAME,
   * LEDGER_KAFKA_SASL_PASSWORD_FILE, LEDGER_KAFKA_DEPLOYMENT.
   */
  kafka: KafkaConfigSchema.optional(),
  /** Chat approval channels of the notify role (absent: approvals by CLI and web page only). */
  channels: ChannelsConfigSchema.optional(),
  /**
   * The gate's pre-screen (absent: the deterministic rules screener). An
   * OpenAI-compatible chat-completions endpoint may replace it; its API key is
   * read from the environment variable named by `apiKeyEnv`, never stored here.
   */
  screener: z
    .discriminatedUnion('kind', [
      z.strictObject({ kind: z.literal('rules') }),
      z.strictObject({
        kind: z.literal('openai-compatible'),
        baseUrl: z.url({ protocol: /^https?$/ }),
        model: z.string().min(1).max(256),
        apiKeyEnv: z.string().regex(/^[A-Z_][A-Z0-9_]{0,63}$/).optional(),
        timeoutMs: z.number().int().min(100).max(60_000).default(5_000),
      }),
    ])
    .optional(),
});

/** Configuration of the local installation. */
export type HomeConfig = z.infer<typeof ConfigSchema>;

/** The principals `ledger init` creates, with their roles. */
export const LOCAL_PRINCIPALS: readonly { principal: string; file: string; roles: Role[] }[] = [
  { principal: 'admin:alice', file: 'admin-alice', roles: ['admin'] },
  { principal: 'admin:bob', file: 'admin-bob', roles: ['admin'] },
  { principal: 'sequencer:main', file: 'sequencer', roles: ['sequencer'] },
  // Each service signs only the statement types of its role (SPEC.md section 7.3).
  { principal: 'service:gate', file: 'gate', roles: ['gate'] },
  { principal: 'service:timer', file: 'timer', roles: ['timer'] },
  { principal: 'approver:dana', file: 'approver-dana', roles: ['approver'] },
  { principal: 'approver:eli', file: 'approver-eli', roles: ['approver'] },
  // The chat bridge signs answers given on chat platforms: platform assurance because of its role; see MAX_PLATFORM_ASSURANCE_TIER.
  { principal: 'bridge:chat', file: 'bridge-chat', roles: ['bridge'] },
  { principal: 'agent:billing-bot', file: 'agent-billing-bot', roles: ['agent'] },
  { principal: 'agent:ops-bot', file: 'agent-ops-bot', roles: ['agent'] },
  { principal: 'agent:support-bot', file: 'agent-support-bot', roles: ['agent'] },
  { principal: 'agent:deploy-bot', file: 'agent-deploy-bot', roles: ['agent'] },
  { principal: 'agent:build-bot', file: 'agent-build-bot', roles: ['agent'] },
];

/** An opened installation directory. */
export class LedgerHome {
  readonly dir: string;
  readonly config: HomeConfig;
  readonly trustRoot: TrustRoot;

  private constructor(dir: string, config: HomeConfig, trustRoot: TrustRoot) {
    this.dir = dir;
    this.config = config;
    this.trustRoot = trustRoot;
  }

  /** Default directory: $LEDGER_HOME, else `.ledger` in the current directory. */
  static defaultDir(): string {
    return resolve(process.env.LEDGER_HOME ?? '.ledger');
  }

  /** True when `dir` holds an initialised installation. */
  static exists(dir: string): boolean {
    return existsSync(join(dir, 'config.json')) && existsSync(join(dir, 'genesis.json'));
  }

  /** Opens an installation, with environment overrides for addresses (LEDGER_KAFKA_BROKERS, LEDGER_PG_URL, LEDGER_API_PORT). */
  static open(dir: string = LedgerHome.defaultDir()): LedgerHome {
    if (!LedgerHome.exists(dir)) throw new LedgerError(ReasonCode.SCHEMA_INVALID, `${dir} is not an initialised ledger home (run: ledger init)`);
    const parsed = ConfigSchema.safeParse(parseStrictJson(readFileSync(join(dir, 'config.json'), 'utf8')));
    if (!parsed.success) throw new LedgerError(ReasonCode.SCHEMA_INVALID, `${dir}/config.json: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
    const config = { ...parsed.data };
    if (process.env.LEDGER_KAFKA_BROKERS) config.kafkaBrokers = process.env.LEDGER_KAFKA_BROKERS.split(',');
    if (process.env.LEDGER_PG_URL) config.pgUrl = process.env.LEDGER_PG_URL;
    if (process.env.LEDGER_API_PORT) config.apiPort = Number(process.env.LEDGER_API_PORT);
    // The CA this process's clients of the API trust (CLI commands open the installation before they reach it).
    if (config.api?.caFile !== undefined) openedApiCa = config.api.caFile;
    return new LedgerHome(dir, config, readTrustRoot(join(dir, 'trust-root.json')));
  }

  /** Where `ledger init` writes the root private keys of the installation in `dir` unless told otherwise: `<dir>-root-keys`. */
  static defaultRootKeysDir(dir: string): string {
    return `${resolve(dir)}-root-keys`;
  }

  /** Path of a key file by its short name (e.g. `gate`, `admin-alice`). */
  keyPath(name: string): string {
    return join(this.dir, 'keys', `${name}.key`);
  }

  /** Loads a private key by its short name. */
  key(name: string): Signer {
    return readKeyFile(this.keyPath(name));
  }

  /** The signed genesis envelope. */
  genesis(): Envelope<'genesis'> {
    const parsed = EnvelopeSchema.safeParse(parseStrictJson(readFileSync(join(this.dir, 'genesis.json'), 'utf8')));
    if (!parsed.success || parsed.data.statement.type !== 'genesis') throw new LedgerError(ReasonCode.SCHEMA_INVALID, 'genesis.json is not a genesis envelope');
    return parsed.data as unknown as Envelope<'genesis'>;
  }

  /** Base URL of the local API: https when the API serves TLS. */
  apiUrl(): string {
    return `${apiTls(this.config) === undefined ? 'http' : 'https'}://127.0.0.1:${this.config.apiPort}`;
  }
}

/** The API's certificate and key files (LEDGER_API_TLS_CERT / LEDGER_API_TLS_KEY win over `api.tls`), or undefined for plain http. */
export function apiTls(config: HomeConfig, env: NodeJS.ProcessEnv = process.env): { certFile: string; keyFile: string } | undefined {
  const certFile = env.LEDGER_API_TLS_CERT || config.api?.tls?.certFile;
  const keyFile = env.LEDGER_API_TLS_KEY || config.api?.tls?.keyFile;
  if (certFile === undefined && keyFile === undefined) return undefined;
  if (certFile === undefined || keyFile === undefined) throw new OperationalError(OperationalCode.BAD_CONFIGURATION, 'API TLS needs both a certificate and a key file (api.tls.certFile and keyFile, or LEDGER_API_TLS_CERT and LEDGER_API_TLS_KEY)');
  return { certFile, keyFile };
}

let openedApiCa: string | undefined;

/** The `api.caFile` of the last installation this process opened, if any. */
export function openedHomeApiCa(): string | undefined {
  return openedApiCa;
}

/** The CA file local clients trust for the API (LEDGER_API_CA wins over `api.caFile`), if any. */
export function apiCaFile(config: HomeConfig | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env.LEDGER_API_CA || config?.api?.caFile || undefined;
}

/**
 * Reads a grant policy file (genesis `grantPolicy`, SPEC.md section 7.2):
 * `{"cosigners": [k0..k4], "maxLifetimeMs": [ms0..ms4], "cosignWindowMs": ms}`.
 * Strict JSON and the genesis schema; anything else is SCHEMA_INVALID.
 */
export function readGrantPolicy(path: string): NonNullable<BodyOf<'genesis'>['grantPolicy']> {
  const parsed = BODY_SCHEMAS.genesis.shape.grantPolicy.unwrap().safeParse(parseStrictJson(readFileSync(path, 'utf8')));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new LedgerError(ReasonCode.SCHEMA_INVALID, `${path}: ${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'not a grant policy'}`);
  }
  return parsed.data;
}

/**
 * `ledger init`: creates keys for the local principals, three root keys, a
 * genesis signed by two of them that registers everyone else under the
 * latest authority rules (each service with its own role), the trust root
 * and the configuration. Refuses to overwrite an existing installation.
 */
export function initHome(
  dir: string,
  options: {
    origin?: string;
    eventPartitions?: number;
    force?: boolean;
    topicPrefix?: string;
    pgUrl?: string;
    apiPort?: number;
    grantPolicy?: BodyOf<'genesis'>['grantPolicy'];
    storage?: 'kafka' | 'embedded';
    rootKeysDir?: string;
    /** How far a statement's issuedAt may be from its sequencing time (default 5 minutes; the genesis fixes it). */
    freshnessMs?: number;
  } = {},
): LedgerHome {
  if (LedgerHome.exists(dir) && options.force !== true) return LedgerHome.open(dir);
  // The root keys go apart from the live installation, to be moved offline (never into its keys/).
  const rootKeysDir = resolve(options.rootKeysDir ?? LedgerHome.defaultRootKeysDir(dir));
  if (rootKeysDir === resolve(dir) || rootKeysDir.startsWith(`${resolve(dir)}/`)) {
    throw new OperationalError(OperationalCode.BAD_ARGUMENT, `the root keys directory ${rootKeysDir} must be outside the installation ${resolve(dir)}`);
  }
  if (options.force !== true && [1, 2, 3].some((n) => existsSync(join(rootKeysDir, `root-${n}.key`)))) {
    throw new OperationalError(OperationalCode.BAD_ARGUMENT, `${rootKeysDir} already holds root keys (of another installation?): move them away, or pass --force`);
  }
  mkdirSync(rootKeysDir, { recursive: true });
  chmodSync(rootKeysDir, 0o700);
  mkdirSync(join(dir, 'keys'), { recursive: true });
  chmodSync(dir, 0o700);
  chmodSync(join(dir, 'keys'), 0o700);
  const origin = options.origin ?? 'ledger.local/main';
  const eventPartitions = options.eventPartitions ?? 4;
  const roots = [1, 2, 3].map((n) => {
    const signer = newSigner(`root:${n}`);
    writeKeyFile(join(rootKeysDir, `root-${n}.key`), signer);
    return signer;
  });
  const keys = LOCAL_PRINCIPALS.map(({ principal, file, roles }) => {
    const signer = newSigner(principal);
    writeKeyFile(join(dir, 'keys', `${file}.key`), signer);
    return { keyId: signer.keyId, principal, roles };
  });
  const trustRoot: TrustRoot = { v: 1, origin, rootKeys: roots.map((r) => r.keyId), threshold: 2 };
  // One id per installation names its database and its topics: installations
  // sharing one Postgres or one broker (or a re-initialised .ledger/) never
  // meet each other's offsets, chains or rows.
  const installation = randomBytes(4).toString('hex');
  const freshnessMs = options.freshnessMs ?? 300_000;
  const grantPolicy = options.grantPolicy === undefined ? {} : { grantPolicy: options.grantPolicy };
  const statement = createStatement('genesis', { origin, eventPartitions, freshnessMs, rootKeys: trustRoot.rootKeys, rootThreshold: 2, keys, authorityRulesVersion: LATEST_AUTHORITY_RULES_VERSION, ...grantPolicy }, roots[0] as Signer);
  const genesis = signStatement(statement, [roots[0] as Signer, roots[1] as Signer], nodeEd25519);
  const config: HomeConfig = {
    v: 1,
    origin,
    eventPartitions,
    freshnessMs,
    checkpointEvery: 1000,
    checkpointIntervalMs: 200,
    kafkaBrokers: ['127.0.0.1:9092'],
    pgUrl: options.pgUrl ?? `postgres://postgres@127.0.0.1:5432/ledger_${installation}`,
    apiPort: options.apiPort ?? 8787,
    topicPrefix: options.topicPrefix ?? `ledger-${installation}`,
    ...(options.storage === 'embedded' ? { storage: 'embedded' as const } : {}),
  };
  writeFileSync(join(dir, 'config.json'), `${JSON.stringify(config, null, 2)}\n`);
  writeFileSync(join(dir, 'trust-root.json'), formatTrustRoot(trustRoot));
  writeFileSync(join(dir, 'genesis.json'), `${JSON.stringify(genesis, null, 2)}\n`);
  // What an agent pins to check decision receipts (SPEC.md section 10.1); `ledger trust` refreshes it from the API.
  pinTrust(join(dir, 'trust.json'), trustFromGenesis(genesis));
  return LedgerHome.open(dir);
}
