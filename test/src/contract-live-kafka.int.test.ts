import { createKafkaBus } from '@agent-ledger/kafka';
import { freshHome, start } from './live.js';
import { runLiveContract } from './live.contract.js';

// Deadlines short enough that timeouts happen within the test (read at start).
process.env.LEDGER_DEADLINES_MS = '2:3000,3:3000,4:3000';

runLiveContract({
  name: 'Kafka and PostgreSQL',
  freshHome,
  start: (home, roles) => start(home, roles),
  reader: (home) => createKafkaBus({ brokers: home.config.kafkaBrokers, clientId: 'contract-reader', logLevel: 'nothing' }),
});
