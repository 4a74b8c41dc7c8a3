import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OCSF_REQUIRED, ocsfRecord } from '@agent-ledger/ledger';
import { TestLedger } from './fixtures.js';

/**
 * Attributes OCSF 1.1 defines for API Activity (class 6003): the base event,
 * the Application category, the class itself, and the `security_control`
 * profile the record declares (schema.ocsf.io 1.1.0, events/application/api.json,
 * events/base_event.json, profiles/security_control.json).
 */
const API_ACTIVITY_ATTRIBUTES = new Set([
  'activity_id', 'activity_name', 'category_name', 'category_uid', 'class_name', 'class_uid', 'count', 'duration', 'end_time', 'enrichments',
  'message', 'metadata', 'observables', 'raw_data', 'severity', 'severity_id', 'start_time', 'status', 'status_code', 'status_detail', 'status_id',
  'time', 'timezone_offset', 'type_name', 'type_uid', 'unmapped',
  'actor', 'api', 'dst_endpoint', 'http_request', 'resources', 'src_endpoint',
  'action', 'action_id', 'disposition', 'disposition_id', 'attacks', 'authorizations', 'firewall_rule', 'malware', 'policy',
]);
/** network_endpoint: at least one of these (OCSF 1.1 constraint). */
const ENDPOINT_ANY = ['ip', 'uid', 'name', 'hostname', 'svc_name', 'instance_uid', 'interface_uid', 'interface_name'];

function checkOcsf(record: Record<string, unknown>): void {
  for (const name of [...OCSF_REQUIRED.base, ...OCSF_REQUIRED.apiActivity]) assert.ok(record[name] !== undefined && record[name] !== null, `required ${name}`);
  assert.deepEqual([...OCSF_REQUIRED.apiActivity].sort(), ['actor', 'api', 'src_endpoint']);
  for (const key of Object.keys(record)) assert.ok(API_ACTIVITY_ATTRIBUTES.has(key), `top-level ${key} is an OCSF 1.1 API Activity attribute`);
  assert.equal(record.class_uid, 6003);
  assert.equal(record.category_uid, 6);
  assert.equal(record.type_uid, (record.class_uid as number) * 100 + (record.activity_id as number));
  const metadata = record.metadata as { version: string; product: { vendor_name: string }; profiles: string[] };
  assert.equal(metadata.version, '1.1.0');
  assert.ok(metadata.product.vendor_name.length > 0, 'metadata.product.vendor_name (required)');
  assert.deepEqual(metadata.profiles, ['security_control'], 'disposition and action come from the security_control profile');
  assert.equal(typeof (record.api as { operation?: unknown }).operation, 'string', 'api.operation (required)');
  const src = record.src_endpoint as Record<string, unknown>;
  assert.ok(ENDPOINT_ANY.some((k) => typeof src[k] === 'string'), 'src_endpoint has one of its identifying attributes');
  assert.ok(typeof (record.actor as { user?: { uid?: unknown } }).user?.uid === 'string', 'actor.user.uid');
  assert.equal(typeof record.time, 'number');
}

test('SIEM: a refusal record is OCSF 1.1 API Activity with every required attribute, and says what the agent tried', () => {
  const ledger = new TestLedger();
  const proposed = ledger.propose({ actionType: 'payment.send', tool: 'payments', targetResource: 'payments/vendors/globex', recipient: 'globex-ltd' });
  const refusal = ledger.say('refusal.recorded', { agentId: ledger.agent.principal, proposal: proposed.hash, code: 'HUMAN_DENIED', refusal: 'REFUSED: HUMAN_DENIED: denied by approver:dana' }, ledger.gate);
  const record = ocsfRecord(refusal.entry, 'HUMAN_DENIED', 'REFUSED: HUMAN_DENIED: denied by approver:dana', { tool: 'payments', actionType: 'payment.send', targetResource: 'payments/vendors/globex', recipient: 'globex-ltd', scope: 'vendors' });
  checkOcsf(record);
  assert.equal((record.api as { operation: string }).operation, 'payment.send');
  assert.equal((record.api as { service: { name: string } }).service.name, 'payments');
  assert.deepEqual((record.resources as { uid: string; type: string }[]).map((r) => [r.type, r.uid]), [['target', 'payments/vendors/globex'], ['recipient', 'globex-ltd']]);
  assert.equal(record.message, 'agent:billing-bot tried payment.send with payments on payments/vendors/globex for globex-ltd: refused, HUMAN_DENIED');
  const unmapped = record.unmapped as { entry: { hash: string }; proposal_hash: string };
  assert.equal(unmapped.entry.hash, refusal.entry.hash, 'the signed entry rides under unmapped');
  assert.equal(unmapped.proposal_hash, proposed.hash);
});

test('SIEM: without the proposal (an intake rejection, or a proposal before a restart) the record is still complete OCSF', () => {
  const ledger = new TestLedger();
  const rejected = ledger.say('intake.rejected', { agentId: 'unknown', code: 'INVALID_SIGNATURE', detail: 'signature does not verify', input: 'ab'.repeat(32) }, ledger.sequencer);
  const record = ocsfRecord(rejected.entry, 'INVALID_SIGNATURE', 'signature does not verify');
  checkOcsf(record);
  assert.equal((record.api as { operation: string }).operation, 'statement.submit');
  assert.equal(record.severity, 'High');
  const proposed = ledger.propose();
  const refusal = ledger.say('refusal.recorded', { agentId: ledger.agent.principal, proposal: proposed.hash, code: 'TIMEOUT', refusal: 'REFUSED: TIMEOUT: no answer' }, ledger.gate);
  checkOcsf(ocsfRecord(refusal.entry, 'TIMEOUT', 'REFUSED: TIMEOUT: no answer'));
});
