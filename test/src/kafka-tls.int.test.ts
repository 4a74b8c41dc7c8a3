import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, readdirSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KNOWN_CODES } from '@agent-ledger/refusals';
import { createKafkaBus, type LogBus } from '@agent-ledger/kafka';
import { LedgerClient } from '@agent-ledger/client';
import { LedgerHome, kafkaBusFor, topicNames } from '@agent-ledger/ledger';
import { eventually } from './live.js';
import { PrivateBroker, freePort } from './private-stack.js';
import { Role, assertClean, children, line, newHome, routine, settle } from './battery-support.js';

// The ledger on a broker that speaks TLS only, with SASL/SCRAM: certificates
// made here with openssl, SCRAM users created by `kafka-storage format
// --add-scram`. The ledger works through it (roles configured by the
// installation config, the CLI's export and the test's reader by the same
// settings); from the attacker's side, plain text, a wrong password and a CA
// that did not sign the broker are each refused with a typed operational
// error (never a refusal code), and no password reaches a log.

const openssl = (dir: string, args: readonly string[]): void => void execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });

/** A CA, and a broker key and certificate for 127.0.0.1 signed by it; plus a second CA that signed nothing of the broker's. */
function certificates(dir: string): { ca: string; otherCa: string; brokerPem: string } {
  openssl(dir, ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=ledger test CA']);
  openssl(dir, ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'other-ca.key', '-out', 'other-ca.pem', '-days', '2', '-subj', '/CN=someone else']);
  openssl(dir, ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'broker.key', '-out', 'broker.csr', '-subj', '/CN=127.0.0.1']);
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  openssl(dir, ['x509', '-req', '-in', 'broker.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'broker.pem', '-days', '2', '-extfile', 'san.ext']);
  // Kafka's PEM key store: the PKCS#8 key, then the certificate chain.
  openssl(dir, ['pkcs8', '-topk8', '-nocrypt', '-in', 'broker.key', '-out', 'broker.pk8']);
  writeFileSync(join(dir, 'broker-keystore.pem'), readFileSync(join(dir, 'broker.pk8'), 'utf8') + readFileSync(join(dir, 'broker.pem'), 'utf8') + readFileSync(join(dir, 'ca.pem'), 'utf8'));
  return { ca: join(dir, 'ca.pem'), otherCa: join(dir, 'other-ca.pem'), brokerPem: join(dir, 'broker-keystore.pem') };
}

/** A typed operational error (an outage or a configuration to fix), not a refusal. */
function isOperational(codes: readonly string[], what: string): (err: unknown) => boolean {
  return (err) => {
    const code = (err as { code?: unknown }).code;
    process.stdout.write(`# ${what}: ${String(code)}: ${(err as Error).message.slice(0, 200)}\n`);
    assert.ok(typeof code === 'string' && codes.includes(code), `code ${String(code)} (${(err as Error).message})`);
    assert.ok(!(KNOWN_CODES as readonly string[]).includes(code), `${code} is a refusal code`);
    return true;
  };
}

describe('Kafka over TLS with SASL/SCRAM', () => {
  const cleanups: (() => Promise<void>)[] = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    for (const child of children) child.kill('SIGKILL');
  });

  test('the ledger works through a TLS-only SASL_SSL listener; plain text, a wrong password and a foreign CA fail typed; no secret in the logs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ledger-kafka-tls-'));
    const certs = certificates(dir);
    const password = `pw-${randomBytes(12).toString('hex')}`;
    const brokerPassword = `broker-${randomBytes(12).toString('hex')}`;
    const wrongPassword = `wrong-${randomBytes(12).toString('hex')}`;
    writeFileSync(join(dir, 'ledger.password'), `${password}\n`, { mode: 0o600 });
    writeFileSync(join(dir, 'wrong.password'), `${wrongPassword}\n`, { mode: 0o600 });

    const broker = await PrivateBroker.start({
      // One listener for clients and for the broker itself: SASL_SSL, TLS only. The controller listener stays on loopback plain text.
      render: (text) =>
        `${text.replaceAll('PLAINTEXT://', 'SASL_SSL://')}
inter.broker.listener.name=SASL_SSL
listener.security.protocol.map=CONTROLLER:PLAINTEXT,SASL_SSL:SASL_SSL
sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512
sasl.mechanism.inter.broker.protocol=SCRAM-SHA-512
listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="broker" password="${brokerPassword}";
ssl.keystore.type=PEM
ssl.keystore.location=${certs.brokerPem}
ssl.truststore.type=PEM
ssl.truststore.location=${certs.ca}
ssl.client.auth=none
`,
      formatArgs: ['--add-scram', `SCRAM-SHA-512=[name=broker,password=${brokerPassword}]`, '--add-scram', `SCRAM-SHA-256=[name=ledger,password=${password}]`],
    });
    cleanups.push(() => broker.stop());
    const previous = process.env.LEDGER_KAFKA_BROKERS;
    process.env.LEDGER_KAFKA_BROKERS = broker.address;
    cleanups.push(async () => {
      if (previous === undefined) delete process.env.LEDGER_KAFKA_BROKERS;
      else process.env.LEDGER_KAFKA_BROKERS = previous;
    });

    // The installation names the CA and the SCRAM user in its config; the password stays in its file.
    const apiPort = await freePort();
    const created = newHome({ apiPort });
    const configPath = join(created.dir, 'config.json');
    const config = JSON.parse(readFileSync(configPath, 'utf8')) as Record<string, unknown>;
    writeFileSync(configPath, JSON.stringify({ ...config, kafka: { ssl: { caFile: certs.ca }, sasl: { mechanism: 'scram-sha-256', username: 'ledger', passwordFile: join(dir, 'ledger.password') } } }, null, 2));
    const home: LedgerHome = LedgerHome.open(created.dir);

    // The attacker's side first, against the broker the ledger is about to use.
    const topics = topicNames(home.config.topicPrefix);
    const plain = createKafkaBus({ brokers: [broker.address], clientId: 'attacker-plain', logLevel: 'nothing' });
    await assert.rejects(plain.ensureTopics([{ name: 'attacker.plain', partitions: 1 }]), isOperational(['UNAVAILABLE', 'BAD_CONFIGURATION'], 'plain text to the TLS listener'));
    await plain.close();
    const wrong = createKafkaBus({ brokers: [broker.address], clientId: 'attacker-wrong', logLevel: 'nothing', security: { ssl: { ca: readFileSync(certs.ca, 'utf8') }, sasl: { mechanism: 'scram-sha-256', username: 'ledger', password: wrongPassword } } });
    await assert.rejects(wrong.ensureTopics([{ name: 'attacker.wrong', partitions: 1 }]), isOperational(['BAD_CONFIGURATION'], 'wrong SCRAM password'));
    await wrong.close();
    const foreign = createKafkaBus({ brokers: [broker.address], clientId: 'attacker-ca', logLevel: 'nothing', security: { ssl: { ca: readFileSync(certs.otherCa, 'utf8') }, sasl: { mechanism: 'scram-sha-256', username: 'ledger', password } } });
    await assert.rejects(foreign.ensureTopics([{ name: 'attacker.ca', partitions: 1 }]), isOperational(['BAD_CONFIGURATION'], 'a CA that did not sign the broker'));
    await foreign.close();

    // A role given the wrong password (by the environment, over the config) stops at start with BAD_CONFIGURATION.
    const refused = new Role(home, ['sequencer'], 'wrong-password', { LEDGER_KAFKA_BROKERS: broker.address, LEDGER_KAFKA_SASL_PASSWORD_FILE: join(dir, 'wrong.password'), LEDGER_STARTUP_WAIT_MS: '5000' });
    refused.start();
    cleanups.push(() => refused.kill());
    await eventually(async () => (refused.exits.length > 0 ? true : undefined), 60_000, 'the role with the wrong password exits');
    await refused.kill();
    const refusedLog = readFileSync(join(home.dir, 'wrong-password.log'), 'utf8');
    assert.match(refusedLog, /BAD_CONFIGURATION/);
    process.stdout.write(`# role with the wrong password: exits ${refused.exits.join(', ')}; ${refusedLog.split('\n').find((l) => l.includes('BAD_CONFIGURATION'))?.slice(0, 300) ?? ''}\n`);

    // The ledger through TLS + SCRAM: every role in one process, proposals through the API, decided, exported, verified.
    const everything = new Role(home, ['api', 'sequencer', 'gate', 'projector', 'timer', 'siem'], 'all', { LEDGER_KAFKA_BROKERS: broker.address });
    everything.start();
    cleanups.push(() => everything.kill());
    const api = `http://127.0.0.1:${apiPort}`;
    await eventually(async () => ((await fetch(`${api}/readyz`).then((r) => r.status, () => 0)) === 200 ? true : undefined), 120_000, '/readyz');
    const agent = new LedgerClient({ baseUrl: api, signer: home.key('agent-build-bot'), deciderKeys: [home.key('gate').keyId] });
    const acknowledged = new Map<string, string>();
    for (let n = 0; n < 20; n++) {
      const submitted = await agent.propose(routine(n));
      acknowledged.set(submitted.id, submitted.statementHash);
    }
    const reader: LogBus = kafkaBusFor(home, 'tls-reader', { logLevel: 'nothing' });
    cleanups.push(() => reader.close());
    const tally = await settle(reader, home, acknowledged, [everything], 120_000);
    process.stdout.write(line('through TLS + SCRAM-SHA-256', tally));
    assertClean(tally, 'TLS + SCRAM');
    assert.ok((await reader.endOffsets(topics.intake)).size > 0);

    // No password in any log the ledger wrote (role logs, the export's directory).
    for (const name of readdirSync(home.dir).filter((f) => f.endsWith('.log'))) {
      const text = readFileSync(join(home.dir, name), 'utf8');
      for (const secret of [password, wrongPassword, brokerPassword]) assert.ok(!text.includes(secret), `${name} holds a password`);
    }
  });
});
