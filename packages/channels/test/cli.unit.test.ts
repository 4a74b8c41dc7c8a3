import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import { ReasonCode } from '@agent-ledger/refusals';
import { CliChannel } from '../src/cli.js';
import type { ChannelAnswer, ChannelRefusal } from '../src/types.js';
import { makePending, next } from './support/fixtures.js';

test('the terminal channel prints the operation and takes one answer per request; garbage and replays are refused', async () => {
  const input = new PassThrough();
  const output = new PassThrough();
  const cli = new CliChannel({ input, output, operator: 'oncall-bob' });
  try {
    const { pending } = makePending();
    const printed = once(output, 'data');
    await cli.notify(pending);
    const text = String(((await printed) as [Buffer])[0]);
    assert.ok(text.includes('target: account:ops-main'));
    const shortId = /approve ([A-Za-z0-9_-]{16})/.exec(text)?.[1] as string;
    const refusals: ChannelRefusal[] = [];
    cli.onRefusal((r) => refusals.push(r));
    const answers: ChannelAnswer[] = [];
    cli.onAnswer((a) => answers.push(a));
    const lastRefusal = next<ChannelRefusal>((l) => cli.onRefusal(l), (r) => r.code === ReasonCode.REPLAY);
    input.write(`yes\napprove AAAAAAAAAAAAAAAA\napprove ${shortId}\ndeny ${shortId}\n`);
    await lastRefusal;
    assert.deepEqual(refusals.map((r) => r.code), [ReasonCode.SCHEMA_INVALID, ReasonCode.STALE_APPROVAL, ReasonCode.REPLAY]);
    assert.deepEqual(answers, [{ channel: 'cli', request: pending.request, answer: 'approve', platformIdentity: 'cli:oncall-bob' }]);
  } finally {
    cli.close();
  }
});
