import { readFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { z } from 'zod';
import { OperationalCode, OperationalError } from '@agent-ledger/refusals';
import { DEPLOYMENTS, createKafkaBus, loadTopicConfig, type DeploymentName, type Durability, type KafkaSecurity, type LogBus, type LogLevelName } from '@agent-ledger/kafka';
import type { HomeConfig, LedgerHome } from './home.js';
import { kafkaLogSink } from './logging.js';

/**
 * The installation config's `kafka` section: TLS, SASL/SCRAM and the kind of
 * deployment. File names relative to the installation directory. Secrets
 * live in files (owner-only), never in config.json.
 */
export const KafkaConfigSchema = z.strictObject({
  /** TLS to the brokers: the cluster's CA, and a client certificate and key when the cluster asks for one. PEM files. */
  ssl: z.strictObject({ caFile: z.string().min(1), certFile: z.string().min(1).optional(), keyFile: z.string().min(1).optional() }).optional(),
  /** SASL/SCRAM: the password is read from `passwordFile` (its first line). */
  sasl: z.strictObject({ mechanism: z.enum(['scram-sha-256', 'scram-sha-512']), username: z.string().min(1).max(256), passwordFile: z.string().min(1) }).optional(),
  /** What deploy/topics.json requires of the topics (absent: `cluster` on three brokers or more, `single-broker` on one). */
  deployment: z.enum(DEPLOYMENTS).optional(),
});
/** The `kafka` section of the installation config. */
export type KafkaConfig = z.infer<typeof KafkaConfigSchema>;

function badConfiguration(message: string, cause?: unknown): OperationalError {
  return new OperationalError(OperationalCode.BAD_CONFIGURATION, message, cause === undefined ? {} : { cause });
}

function readSecretFile(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    // The path is named, never the content.
    throw badConfiguration(`${what} ${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`, err);
  }
}

/**
 * The `kafka` section after the environment: LEDGER_KAFKA_SSL_CA (CA file),
 * LEDGER_KAFKA_SASL_MECHANISM, LEDGER_KAFKA_SASL_USERNAME,
 * LEDGER_KAFKA_SASL_PASSWORD_FILE and LEDGER_KAFKA_DEPLOYMENT each win over the
 * field they name. Config paths are relative to `homeDir`, environment paths
 * to the working directory. A half-given SASL setting is BAD_CONFIGURATION.
 */
export function kafkaSettings(config: HomeConfig, homeDir: string, env: NodeJS.ProcessEnv = process.env): KafkaConfig {
  const fromHome = (path: string): string => (isAbsolute(path) ? path : join(homeDir, path));
  const given = (name: string): string | undefined => (env[name] === undefined || env[name] === '' ? undefined : env[name]);
  const section = config.kafka ?? {};
  let ssl = section.ssl === undefined ? undefined : { caFile: fromHome(section.ssl.caFile), ...(section.ssl.certFile === undefined ? {} : { certFile: fromHome(section.ssl.certFile) }), ...(section.ssl.keyFile === undefined ? {} : { keyFile: fromHome(section.ssl.keyFile) }) };
  const ca = given('LEDGER_KAFKA_SSL_CA');
  if (ca !== undefined) ssl = { ...ssl, caFile: resolve(ca) };
  if (ssl !== undefined && (ssl.certFile === undefined) !== (ssl.keyFile === undefined)) throw badConfiguration('kafka.ssl: certFile and keyFile go together');

  const mechanism = given('LEDGER_KAFKA_SASL_MECHANISM') ?? section.sasl?.mechanism;
  const username = given('LEDGER_KAFKA_SASL_USERNAME') ?? section.sasl?.username;
  const passwordEnv = given('LEDGER_KAFKA_SASL_PASSWORD_FILE');
  const passwordFile = passwordEnv !== undefined ? resolve(passwordEnv) : section.sasl === undefined ? undefined : fromHome(section.sasl.passwordFile);
  let sasl: KafkaConfig['sasl'];
  if (mechanism !== undefined || username !== undefined || passwordFile !== undefined) {
    if (mechanism === undefined || username === undefined || passwordFile === undefined) {
      throw badConfiguration('kafka.sasl needs a mechanism, a username and a password file (LEDGER_KAFKA_SASL_MECHANISM, LEDGER_KAFKA_SASL_USERNAME, LEDGER_KAFKA_SASL_PASSWORD_FILE)');
    }
    if (mechanism !== 'scram-sha-256' && mechanism !== 'scram-sha-512') throw badConfiguration(`kafka.sasl.mechanism: scram-sha-256 or scram-sha-512, not ${mechanism}`);
    sasl = { mechanism, username, passwordFile };
  }
  const deploymentText = given('LEDGER_KAFKA_DEPLOYMENT');
  let deployment = section.deployment;
  if (deploymentText !== undefined) {
    if (!(DEPLOYMENTS as readonly string[]).includes(deploymentText)) throw badConfiguration(`LEDGER_KAFKA_DEPLOYMENT: one of ${DEPLOYMENTS.join(', ')}, not ${deploymentText}`);
    deployment = deploymentText as DeploymentName;
  }
  return { ...(ssl === undefined ? {} : { ssl }), ...(sasl === undefined ? {} : { sasl }), ...(deployment === undefined ? {} : { deployment }) };
}

/** The files of `settings` read: what the kafkajs adapter takes. BAD_CONFIGURATION naming a file that cannot be read. */
export function kafkaSecurity(settings: KafkaConfig): KafkaSecurity | undefined {
  const { ssl, sasl } = settings;
  if (ssl === undefined && sasl === undefined) return undefined;
  return {
    ...(ssl === undefined
      ? {}
      : {
          ssl: {
            ca: readSecretFile(ssl.caFile, 'kafka.ssl.caFile'),
            ...(ssl.certFile === undefined ? {} : { cert: readSecretFile(ssl.certFile, 'kafka.ssl.certFile') }),
            ...(ssl.keyFile === undefined ? {} : { key: readSecretFile(ssl.keyFile, 'kafka.ssl.keyFile') }),
          },
        }),
    ...(sasl === undefined
      ? {}
      : (() => {
          const password = readSecretFile(sasl.passwordFile, 'kafka.sasl.passwordFile').split(/\r?\n/)[0] ?? '';
          if (password === '') throw badConfiguration(`kafka.sasl.passwordFile ${sasl.passwordFile} is empty`);
          return { sasl: { mechanism: sasl.mechanism, username: sasl.username, password } };
        })()),
  };
}

/**
 * The Kafka log bus of an installation: its brokers (or `brokers`), with the
 * TLS and SASL settings of its config and environment. Every Kafka client a
 * command or role of this service opens is made here, and logs through the
 * service's logger (logging.ts).
 */
export function kafkaBusFor(home: LedgerHome, clientId: string, options: { logLevel?: LogLevelName; brokers?: readonly string[] } = {}): LogBus {
  const security = kafkaSecurity(kafkaSettings(home.config, home.dir));
  return createKafkaBus({
    brokers: options.brokers ?? home.config.kafkaBrokers,
    clientId,
    logSink: kafkaLogSink(),
    ...(options.logLevel === undefined ? {} : { logLevel: options.logLevel }),
    ...(security === undefined ? {} : { security }),
  });
}

/**
 * What the topics of this installation must be made with: the deployment the
 * config or LEDGER_KAFKA_DEPLOYMENT names, else one chosen by the cluster's
 * live brokers (three or more: `cluster`; one: `single-broker`, unless the
 * brokers give new topics more than one replica by default, a cluster with
 * brokers down: refused; two: refused, name it). deploy/topics.json says what each deployment requires.
 */
export async function topicDurability(bus: LogBus, home: LedgerHome): Promise<{ deployment: DeploymentName; durability: Durability }> {
  const topicConfig = await loadTopicConfig();
  let deployment = kafkaSettings(home.config, home.dir).deployment;
  if (deployment === undefined) {
    const size = bus.clusterSize === undefined ? 1 : await bus.clusterSize();
    if (size >= topicConfig.deployments.cluster.replicationFactor) deployment = 'cluster';
    else if (size === 1) {
      // One broker answers: a single broker, or a cluster whose other brokers are down (its topics must not be made with one replica).
      const built = await bus.defaultReplicationFactor?.();
      if (built !== undefined && built > 1) {
        throw badConfiguration(`only 1 live broker answers, but the brokers give new topics ${built} replicas (default.replication.factor): a cluster with brokers down; start them (scripts/kafka.sh cluster start) or set kafka.deployment (or LEDGER_KAFKA_DEPLOYMENT)`);
      }
      deployment = 'single-broker';
    } else throw badConfiguration(`the cluster has ${size} live brokers: set kafka.deployment (or LEDGER_KAFKA_DEPLOYMENT) to single-broker or cluster`);
  }
  return { deployment, durability: topicConfig.deployments[deployment] };
}
