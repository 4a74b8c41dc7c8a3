import { test } from 'node:test';
import { type Role, type Signer } from '@agent-ledger/core';
import { newSigner } from '@agent-ledger/ledger';
import type { TestLedger } from './fixtures.js';
import { ledgerV2 } from './grant-rules-support.js';
import { assertFailsAt, assertValid, verify, type Posted } from './replay-support.js';

// The auditor role (authority rules 3, SPEC.md section 7.3): a principal that
// reads the whole log through the API and writes nothing. Registered under
// four eyes like every privileged key; unknown to rules 1 and 2; never
// combined with another role; refused as the author of any statement.

function register(ledger: TestLedger, key: Signer, roles: Role[], author: Signer, cosigners: readonly Signer[]): Posted {
  return ledger.say('key.registered', { keyId: key.keyId, principal: key.principal, roles }, author, { extraSigners: cosigners });
}

test('under authority rules 3 two admins register an auditor; one admin alone cannot', async () => {
  const { ledger } = ledgerV2({ authorityRulesVersion: 3 });
  const audrey = newSigner('auditor:audrey');
  register(ledger, audrey, ['auditor'], ledger.admin, [ledger.admin2, audrey]);
  assertValid(await verify(ledger));

  const { ledger: l2 } = ledgerV2({ authorityRulesVersion: 3 });
  const mallory = newSigner('auditor:mallory');
  const alone = register(l2, mallory, ['auditor'], l2.admin, [mallory]);
  assertFailsAt(await verify(l2), 'SEPARATION_OF_DUTIES', alone.entry);
});

test('authority rules 2 know no auditor role: a registration naming it is POLICY_VIOLATION', async () => {
  const { ledger } = ledgerV2({ authorityRulesVersion: 2 });
  const audrey = newSigner('auditor:audrey');
  const refused = register(ledger, audrey, ['auditor'], ledger.admin, [ledger.admin2, audrey]);
  assertFailsAt(await verify(ledger), 'POLICY_VIOLATION', refused.entry);
});

test('an auditor holds no other role, on the same key or another key of its principal', async () => {
  const { ledger } = ledgerV2({ authorityRulesVersion: 3 });
  const both = newSigner('auditor:audrey');
  const refused = register(ledger, both, ['auditor', 'approver'], ledger.admin, [ledger.admin2, both]);
  assertFailsAt(await verify(ledger), 'SEPARATION_OF_DUTIES', refused.entry);

  const { ledger: l2, carol } = ledgerV2({ authorityRulesVersion: 3 });
  const dana2 = newSigner(l2.approver.principal);
  // A further key of an approver, asked for with the approver's current key and two admins, naming the auditor role.
  const second = register(l2, dana2, ['auditor'], l2.admin, [l2.admin2, carol, l2.approver, dana2]);
  assertFailsAt(await verify(l2), 'SEPARATION_OF_DUTIES', second.entry);
});

test('an auditor authors nothing: a grant it proposes or an answer it gives is KEY_ROLE', async () => {
  const { ledger } = ledgerV2({ authorityRulesVersion: 3 });
  const audrey = newSigner('auditor:audrey');
  register(ledger, audrey, ['auditor'], ledger.admin, [ledger.admin2, audrey]);
  const grant = ledger.say(
    'grant.proposed',
    {
      grantId: 'g-auditor',
      agentId: ledger.agent.principal,
      actionType: 'payment.send',
      targetResource: 'payments/vendors/acme',
      recipient: 'acme-corp',
      scope: 'invoice:2026-11',
      notBefore: new Date(ledger.clock).toISOString(),
      expiresAt: new Date(ledger.clock + 86_400_000).toISOString(),
      effect: 'allow',
      tier: 1,
      parentGrantId: null,
    },
    audrey,
  );
  assertFailsAt(await verify(ledger), 'KEY_ROLE', grant.entry);
});
