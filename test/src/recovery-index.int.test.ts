import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createStatement, nodeEd25519, signStatement } from '@agent-ledger/core';
import { verifyReceipt } from '@agent-ledger/ledger';
import { clientFor, eventually, freshHome, getJson, proposal, start } from './live.js';
import { signedFetch } from '@agent-ledger/client';

// The API's log index after a restart starts from the projection (leaf
// hashes and the offsets the projector stored with them), not from the
// log's first entry; receipts for entries it never read from the log still
// verify offline against the signed checkpoint, and it follows the log from
// where the projection stood.

test('a restarted API indexes from the projection; its receipts verify; new entries are followed', async () => {
  const home = freshHome();
  let running = await start(home, ['api', 'sequencer', 'gate', 'projector']);
  try {
    const client = clientFor(home, running, 'agent-build-bot');
    const decisions = await Promise.all(Array.from({ length: 12 }, (_, n) => client.proposeAndWait({ ...proposal(), args: { command: `ls -la /srv/app-${n}` } }, 60_000)));
    assert.equal(decisions.length, 12);
    // Checkpoints seal the tail, and the projection reaches it.
    const sizes = await eventually(async () => {
      const heads = await running.pool.query<{ partition: number; size: string }>('SELECT partition, size FROM partition_heads ORDER BY partition');
      const bySize = new Map(heads.rows.map((r) => [r.partition, Number(r.size)]));
      const index = running.logIndex;
      if (index === undefined) return undefined;
      for (let p = 0; p <= home.config.eventPartitions; p++) {
        if ((bySize.get(p) ?? 0) !== index.size(p) || (index.size(p) > 0 && index.latestCheckpoint(p)?.size !== index.size(p))) return undefined;
      }
      return bySize;
    }, 60_000, 'the projection and the checkpoints at the log end');
    await running.stop();

    running = await start(home, ['api', 'sequencer', 'projector']);
    const index = running.logIndex;
    assert.equal(index?.started?.from, 'projection');
    for (const [p, size] of sizes) {
      assert.equal(index.started.loaded.get(p) ?? 0, size, `partition ${p}: every verified entry taken from the projection`);
      if (size === 0) continue;
      for (const i of new Set([0, 1, Math.floor(size / 2), size - 1])) {
        if (i >= size) continue;
        const response = await signedFetch(home.key('admin-alice'))(`${running.apiUrl as string}/v1/receipts/${p}/${i}`);
        assert.equal(response.status, 200, `receipt ${p}/${i}`);
        const verdict = verifyReceipt(await response.text(), home.trustRoot);
        assert.ok(verdict.ok, `receipt ${p}/${i}: ${verdict.message}`);
      }
    }

    // A statement sequenced after the restart is indexed from the log, where the projection stood.
    const agent = home.key('agent-build-bot');
    const envelope = signStatement(createStatement('proposal.submitted', { ...proposal(), agentId: agent.principal, args: { command: 'ls /after-restart' } }, agent), [agent], nodeEd25519);
    const posted = await fetch(`${running.apiUrl as string}/v1/statements`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(envelope) });
    assert.equal(posted.status, 202);
    const admitted = await eventually(async () => {
      const { body } = await getJson<{ status: string; partition: number; index: number }>(running, `/v1/statements/${envelope.statement.id}`);
      return body.status === 'admitted' ? body : undefined;
    }, 30_000, 'the new proposal admitted');
    const verdict = await eventually(async () => {
      const response = await signedFetch(home.key('admin-alice'))(`${running.apiUrl as string}/v1/receipts/${admitted.partition}/${admitted.index}`);
      return response.status === 200 ? verifyReceipt(await response.text(), home.trustRoot) : undefined;
    }, 30_000, 'a receipt of the new entry');
    assert.ok(verdict.ok, verdict.message);
    assert.equal(admitted.index, sizes.get(admitted.partition), 'the first entry after the restart');
  } finally {
    await running.stop();
  }
});
