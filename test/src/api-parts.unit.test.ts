import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HostAllowList, PASSED_OVER_MARGIN_MS, RateLimiter, StatementTracker, rateSettingsFrom } from '@agent-ledger/ledger';

test('Host allow-list: loopback names on the port the request came to, configured names, nothing else', () => {
  const hosts = new HostAllowList(['ledger.example.com', 'ops.example.com:8443', ' ']);
  assert.ok(hosts.allows('127.0.0.1:4000', 4000));
  assert.ok(hosts.allows('LOCALHOST:4000', 4000));
  assert.ok(hosts.allows('[::1]:4000', 4000));
  assert.ok(hosts.allows('ledger.example.com', 4000));
  assert.ok(hosts.allows('ledger.example.com:1234', 4000));
  assert.ok(hosts.allows('ops.example.com:8443', 4000));
  for (const host of ['127.0.0.1:4001', 'localhost', 'evil.example.com:4000', 'ops.example.com', 'ops.example.com:8444', '127.0.0.1.evil.com:4000', 'a b', '', 'localhost:4000/x', '[::1', 'localhost:99999x']) {
    assert.equal(hosts.allows(host, 4000), false, host);
  }
  assert.equal(hosts.allows('127.0.0.1:4000', undefined), false, 'no local port: only configured names');
  assert.throws(() => new HostAllowList(['bad host!']));
});

test('rate limiter: a burst, then the refill rate; principals apart; memory bounded', () => {
  const limiter = new RateLimiter({ burst: 3, perSecond: 2 });
  const t0 = 1_000_000;
  assert.deepEqual([1, 2, 3, 4].map(() => limiter.take('agent:a', t0)), [true, true, true, false]);
  assert.equal(limiter.take('agent:b', t0), true, 'another principal has its own bucket');
  assert.equal(limiter.take('agent:a', t0 + 400), false, '0.8 token after 400 ms');
  assert.equal(limiter.take('agent:a', t0 + 500), true, 'one token after 500 ms');
  assert.equal(limiter.take('agent:a', t0 + 10_000_000), true, 'refilled, capped at the burst');
  for (let i = 0; i < 20_000; i++) limiter.take(`agent:n${i}`, t0);
  assert.deepEqual(rateSettingsFrom('20/0.5', { burst: 1, perSecond: 1 }, 'X'), { burst: 20, perSecond: 0.5 });
  assert.deepEqual(rateSettingsFrom(undefined, { burst: 1, perSecond: 1 }, 'X'), { burst: 1, perSecond: 1 });
  for (const bad of ['0/1', '5/0', 'x', '5', '5/1/2']) assert.throws(() => rateSettingsFrom(bad, { burst: 1, perSecond: 1 }, 'X'), bad);
});

test('statement tracker: pending until its entry or its intake.rejected is seen; refusals by the API kept apart', () => {
  const tracker = new StatementTracker();
  tracker.accepted('id-1', 'a'.repeat(64), 1000, 1);
  tracker.accepted('id-2', 'b'.repeat(64), 2000, 2);
  assert.deepEqual(tracker.status('id-1'), { status: 'pending', acceptedAt: new Date(1000).toISOString() });
  assert.equal(tracker.oldestPendingMs(5000), 4000);
  tracker.admitted('id-1', 1, 7);
  assert.deepEqual(tracker.status('id-1'), { status: 'admitted', partition: 1, index: 7 });
  assert.equal(tracker.oldestPendingMs(5000), 3000);
  tracker.rejected('b'.repeat(64), 'REPLAY', 'statement was not fresh when sequenced', 2, 9);
  assert.deepEqual(tracker.status('id-2'), { status: 'rejected', code: 'REPLAY', detail: 'statement was not fresh when sequenced', partition: 2, index: 9 });
  assert.equal(tracker.oldestPendingMs(5000), 0);
  assert.ok(tracker.seen('id-1'));
  tracker.refused('id-3', 'KEY_ROLE', 'not an agent key');
  assert.deepEqual(tracker.status('id-3'), { status: 'refused', code: 'KEY_ROLE', detail: 'not an agent key' });
  assert.equal(tracker.seen('id-3'), false, 'a refused statement may be sent again once fixed');
  assert.equal(tracker.status('never'), undefined);
  // Entries for statements this API never accepted change nothing.
  tracker.admitted('other', 1, 8);
  tracker.rejected('c'.repeat(64), 'REPLAY', 'x', 1, 9);
  assert.equal(tracker.status('other'), undefined);
  // A statement pending too long is dropped, so the backlog check cannot stick.
  tracker.accepted('id-4', 'd'.repeat(64), 10_000, 1);
  assert.equal(tracker.expire(10_000 + 601_000, 600_000), 1);
  assert.equal(tracker.pendingCount, 0);
  assert.equal(tracker.status('id-4'), undefined);
});

test('statement tracker: a statement passed over on its partition (one accepted well after it was sequenced first) stops holding the backlog check', () => {
  const tracker = new StatementTracker();
  const t0 = 1_000_000;
  tracker.accepted('lost', 'a'.repeat(64), t0, 1);
  tracker.accepted('other-partition', 'b'.repeat(64), t0 + 100, 2);
  tracker.accepted('close-behind', 'c'.repeat(64), t0 + PASSED_OVER_MARGIN_MS - 500, 1);
  tracker.accepted('later', 'd'.repeat(64), t0 + PASSED_OVER_MARGIN_MS - 1, 1);
  // A statement accepted at about the same time may reach intake first: nothing is passed over.
  assert.deepEqual(tracker.admitted('close-behind', 1, 5), [], 'within the margin of the pending one');
  assert.equal(tracker.status('lost')?.status, 'pending');
  assert.deepEqual(tracker.rejected('d'.repeat(64), 'REPLAY', 'x', 1, 6), [], 'a rejection counts as sequenced, and is still within the margin');
  // One accepted well after it, on the same partition, was sequenced: the earlier one is not waiting any more.
  tracker.accepted('much-later', 'e'.repeat(64), t0 + 2 * PASSED_OVER_MARGIN_MS, 1);
  assert.deepEqual(tracker.admitted('much-later', 1, 7), ['lost']);
  assert.equal(tracker.status('lost'), undefined, 'forgotten: its status is unknown');
  assert.equal(tracker.status('other-partition')?.status, 'pending', 'another partition is not judged by this one');
  assert.equal(tracker.oldestPendingMs(t0 + 60_000), 60_000 - 100);
});
