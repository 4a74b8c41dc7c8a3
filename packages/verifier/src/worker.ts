import { parentPort } from 'node:worker_threads';
import { nodeEd25519, type LineBatch } from '@agent-ledger/core';
import { packResults } from './result-codec.js';
import { checkBatchLines } from './steps/check-batch.js';

// Worker thread: checks batches of bundle lines (signatures, hashes, schema)
// and posts the results back packed, in the same order (the buffer is transferred).
parentPort?.on('message', (message: { id: number; batch: LineBatch }) => {
  const packed = packResults(checkBatchLines(message.batch, nodeEd25519));
  parentPort?.postMessage({ id: message.id, packed }, [packed.bytes.buffer as ArrayBuffer, packed.ends.buffer as ArrayBuffer]);
});
