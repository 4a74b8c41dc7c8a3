import { runStoreContract } from './store.contract.js';
import { freshPglite } from './support/pglite.js';

runStoreContract({ name: 'PGlite (embedded, in the process)', open: freshPglite });
