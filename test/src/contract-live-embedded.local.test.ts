import { devReader, freshDevHome, startDev } from './dev-mode.js';
import { runLiveContract } from './live.contract.js';

// Deadlines short enough that timeouts happen within the test (read at start).
process.env.LEDGER_DEADLINES_MS = '2:3000,3:3000,4:3000';

runLiveContract({ name: 'embedded (ledger dev: embedded log and PGlite)', freshHome: freshDevHome, start: startDev, reader: devReader });
