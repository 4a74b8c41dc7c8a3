import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import { pinTrust, trustFromGenesis } from '@agent-ledger/client';
import { BODY_SCHEMAS, EnvelopeSchema, LATEST_AUTHORITY_RULES_VERSION, createStatement, nodeEd25519, parseStrictJson, signStatement, type BodyOf, type Envelope, type Role, type Signer, type TrustRoot } from '@agent-ledger/core';
import { newSigner, readKeyFile, writeKeyFile } from './keys.js';
import { formatTrustRoot, readTrustRoot } from './trust-root-file.js';
import { ChannelsConfigSchema } from './notify/channels-config.js';
import { AllowedHostSchema } from './api/host-allow-list.js';
import { RateSettingsSchema } from './api/rate-limit.js';

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
    })
    .optional(),
  /**
   * Where the log and the projection live: `kafka` (absent: the Kafka brokers
   * and the Postgres URL above; `ledger serve`) or `embedded` (`log/` and `pg/`
   * in this directory, one process; `ledger dev`).
   */
  storage: z.enum(['kafka', 'embedded']).optional(),
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
    return new LedgerHome(dir, config, readTrustRoot(join(dir, 'trust-root.json')));
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

  /** Base URL of the local API. */
  apiUrl(): string {
    return `http://127.0.0.1:${this.config.apiPort}`;
  }
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
  options: { origin?: string; eventPartitions?: number; force?: boolean; topicPrefix?: string; pgUrl?: string; apiPort?: number; grantPolicy?: BodyOf<'genesis'>['grantPolicy']; storage?: 'kafka' | 'embedded' } = {},
): LedgerHome {
  if (LedgerHome.exists(dir) && options.force !== true) return LedgerHome.open(dir);
  mkdirSync(join(dir, 'keys'), { recursive: true });
  chmodSync(dir, 0o700);
  chmodSync(join(dir, 'keys'), 0o700);
  const origin = options.origin ?? 'ledger.local/main';
  const eventPartitions = options.eventPartitions ?? 4;
  const roots = [1, 2, 3].map((n) => {
    const signer = newSigner(`root:${n}`);
    writeKeyFile(join(dir, 'keys', `root-${n}.key`), signer);
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
  const freshnessMs = 300_000;
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
