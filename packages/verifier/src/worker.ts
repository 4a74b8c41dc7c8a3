import { parentPort } from 'node:worker_threads';
import { nodeEd25519, type LineBatch } from '@agent-ledger/core';
import { checkBatch } from './steps/check-batch.js';

// Worker thread: checks batches of bundle lines (signatures, hashes, schema)
// and posts the results back in the same order.
parentPort?.on('message', (message: { id: number; batch: LineBatch }) => {
  parentPort?.postMessage({ id: message.id, results: checkBatch(message.batch, nodeEd25519) });
});
