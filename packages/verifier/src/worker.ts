import { parentPort } from 'node:worker_threads';
import { nodeEd25519, type LineBatch } from '@agent-ledger/core';
import { checkAndPackBatch } from './steps/check-batch.js';

/** Expected size of the next batch's packed results: the last one's, plus an eighth. */
let capacityHint = 64 * 1024;

// Worker thread: checks batches of bundle lines (signatures, hashes, schema)
// and posts the results back packed, in the same order (the buffer is transferred).
parentPort?.on('message', (message: { id: number; batch: LineBatch }) => {
  const packed = checkAndPackBatch(message.batch, nodeEd25519, capacityHint);
  capacityHint = packed.bytes.byteLength + (packed.bytes.byteLength >>> 3);
  parentPort?.postMessage({ id: message.id, packed }, [packed.bytes.buffer as ArrayBuffer]);
});
