import { after } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEmbeddedBus } from '../src/index.js';
import { runLogBusContract } from './log-bus.contract.js';

// One directory for the suite: every bus the contract opens (standing for separate processes) shares its log.
const dir = mkdtempSync(join(tmpdir(), 'embedded-contract-'));
after(() => rmSync(dir, { recursive: true, force: true }));

runLogBusContract({
  name: 'embedded log',
  makeBus: () => createEmbeddedBus({ dir }),
  cleanup: async () => undefined,
});
