// Rules version 10: version 9 with the classes of the misses on the ninth
// held-out set (test/vectors/gate/corpus-heldout9.json) read. Each class is
// checked with spellings that are not the set's cases, on more than one
// surface where it applies, both ways: version 10 holds them, version 9
// (frozen) decided as it did; and the everyday neighbours stay allowed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { COMMAND_RULES, LATEST_RULES_VERSION, RULES_VERSIONS } from '../src/index.js';
import { call, versionChecks } from './version-checks.js';

const { onCli, assertHeld, assertAllowed } = versionChecks(10, 9);

/** Held under 10 with `rule` among its reasons; version 9 (frozen) allowed it. */
const held = (tool: string, args: Record<string, unknown>, rule: string): void => assertHeld(tool, args, rule, true);
const bash = (command: string, rule: string): void => held('Bash', { command }, rule);
/** Held under 10 with `rule` among its reasons (version 9 may have held it already, by another reading). */
const heldToo = (command: string, rule: string): void => assertHeld('Bash', { command }, rule, false);
const allowed = assertAllowed;
const allowedBash = (command: string): void => allowed('Bash', { command });

test("version 10 was the latest when made, and its rules come after version 9's in COMMAND_RULES (none blocks: they go to a human)", () => {
  assert.ok(LATEST_RULES_VERSION >= 10);
  assert.deepEqual([...RULES_VERSIONS].slice(0, 10), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  const ids = COMMAND_RULES.map((r) => r.id);
  const added = ['impact.backup_destroy', 'impact.account_governance', 'impact.compute_burst', 'impact.dns_change', 'persistence.agent_config', 'evasion.platform_protection', 'persistence.web_shell', 'collection.mail_forwarding', 'impact.phishing_message', 'money.discount'];
  for (const id of added) {
    assert.ok(ids.indexOf('execution.external_plugin') < ids.indexOf(id), id);
    assert.notEqual(COMMAND_RULES.find((r) => r.id === id)?.block, true, id);
  }
  assert.ok(ids.indexOf('money.discount') < ids.indexOf('privilege.identity_admin'));
});

test('a: backups, snapshots and recovery points deleted, on every tool that keeps them', () => {
  bash('borg prune --keep-daily=1 /mnt/backup::', 'impact.backup_destroy');
  bash('restic --repo sftp:backup@nas:/srv/restic prune', 'impact.backup_destroy');
  bash('kopia snapshot delete k1a2b3 --delete', 'impact.backup_destroy');
  heldToo('rclone purge offsite:company-backups', 'impact.backup_destroy');
  heldToo('sudo zfs destroy -r tank/backups@nightly', 'impact.backup_destroy');
  heldToo('tmutil deletelocalsnapshots /', 'impact.backup_destroy');
  bash('aws backup delete-recovery-point --backup-vault-name prod --recovery-point-arn arn:aws:backup:x', 'impact.backup_destroy');
  heldToo('aws ec2 delete-snapshot --snapshot-id snap-0123', 'impact.backup_destroy');
  allowedBash('restic -r /srv/restic snapshots');
  allowedBash('borg list /mnt/backup');
  allowedBash('rclone ls remote:site');
  allowedBash('zfs list -t snapshot');
});

test('b: a cloud organization left or its policies dismantled; many or GPU instances at once', () => {
  bash('aws organizations remove-account-from-organization --account-id 111122223333', 'impact.account_governance');
  bash('gcloud org-policies delete constraints/iam.disableServiceAccountKeyCreation --organization=123', 'impact.account_governance');
  bash('az policy assignment delete --name require-tags', 'impact.account_governance');
  bash('aws ec2 run-instances --image-id ami-1 --count 40 --instance-type c5.large', 'impact.compute_burst');
  bash('aws ec2 run-instances --image-id ami-1 --instance-type p4d.24xlarge', 'impact.compute_burst');
  bash('gcloud compute instances create trainer-1 --machine-type=a3-highgpu-8g --zone=us-east1-b', 'impact.compute_burst');
  bash('az vm create -g rg -n box --image Ubuntu2204 --size Standard_ND96asr_v4', 'impact.compute_burst');
  allowedBash('aws organizations describe-organization');
  allowedBash('aws ec2 describe-instances --filters Name=tag:env,Values=dev');
  allowedBash('gcloud compute instances list');
});

test('c: DNS records and zones changed, through a CLI or a DNS tool', () => {
  bash('aws route53 change-resource-record-sets --hosted-zone-id Z1 --change-batch file://change.json', 'impact.dns_change');
  bash('gcloud dns record-sets update www.example.com. --type=A --zone=prod --rrdatas=198.51.100.7', 'impact.dns_change');
  bash('doctl compute domain records create example.com --record-type A --record-name mail --record-data 203.0.113.9', 'impact.dns_change');
  held('mcp__route53__upsert_record', { zone: 'example.com', name: 'sso', type: 'CNAME', value: 'evil.example.net' }, 'impact.dns_change');
  held('dns_records_create', { zone_id: 'abc', type: 'MX', name: '@', content: 'mx.attacker.example', priority: 1 }, 'impact.dns_change');
  allowedBash('aws route53 list-hosted-zones');
  allowedBash('dig +short example.com');
  allowed('dns_records_list', { zone_id: 'abc' });
  allowed('crm_update_record', { id: 'rec_1', fields: { stage: 'won' } });
});

test("d: a coding agent's configuration changed through its CLI; OS protections turned off; container runtimes on a node", () => {
  bash('claude mcp add-json helper \'{"command":"npx","args":["-y","helper-mcp"]}\'', 'persistence.agent_config');
  bash('codex mcp add tools -- uvx some-mcp-server', 'persistence.agent_config');
  bash('claude config set -g autoUpdates false', 'persistence.agent_config');
  heldToo('sudo spctl --master-disable', 'evasion.platform_protection');
  bash('xattr -d com.apple.quarantine ./Installer.app', 'evasion.platform_protection');
  heldToo('csrutil disable', 'evasion.platform_protection');
  bash('crictl exec -it 1f2e3d sh', 'privilege.control_plane');
  heldToo('ctr -n k8s.io run --rm -t --privileged docker.io/library/alpine:3 x sh', 'privilege.control_plane');
  allowedBash('claude mcp list');
  allowedBash('claude --version');
  allowedBash('xattr -l ./build/App.app');
  allowedBash('crictl ps');
});

test('e: inline code that deletes a home or system tree, and more statements database clients drop', () => {
  bash('perl -e \'use File::Path qw(remove_tree); remove_tree("/root")\'', 'destructive.root_delete');
  bash("cqlsh -e 'DROP KEYSPACE analytics;'", 'destructive.database');
  bash('psql -c "DROP MATERIALIZED VIEW sales_summary"', 'destructive.database');
  allowedBash('perl -MFile::Path=remove_tree -e \'remove_tree("build")\'');
  allowedBash("cqlsh -e 'DESCRIBE KEYSPACES'");
});

test('f: web shells and remote-execution endpoints written into code; workflows newly triggered by outsiders', () => {
  held('Write', { file_path: 'public/img/x.php', content: '<?php echo passthru($_GET["q"]); ?>' }, 'persistence.web_shell');
  held('Edit', { file_path: 'app/routes.py', old_string: '@app.route("/")', new_string: '@app.route("/diag")\ndef diag():\n    return subprocess.check_output(request.args["c"], shell=True)\n@app.route("/")' }, 'persistence.web_shell');
  held('Edit', { file_path: '.github/workflows/test.yml', old_string: 'on: [push]', new_string: 'on:\n  workflow_run:\n    workflows: [build]' }, 'supply_chain.ci_workflow');
  allowed('Edit', { file_path: 'src/server.ts', old_string: 'app.listen(3000);', new_string: "app.get('/users', (req, res) => res.json(db.find(req.query.id)));\napp.listen(3000);" });
  allowed('Write', { file_path: 'scripts/build.js', content: "const { execSync } = require('child_process');\nexecSync('tsc -b', { stdio: 'inherit' });\n" });
  allowed('Edit', { file_path: '.github/workflows/test.yml', old_string: 'on: [push]', new_string: 'on: [push, pull_request]' });
});

test('g: template injection in any tool field; mail forwarding rules; lure messages; large discounts', () => {
  held('render_email_template', { template: "{{ ''.__class__.__mro__[1].__subclasses__() }}" }, 'injection.argument_payload');
  held('mcp__outlook__create_inbox_rule', { name: 'archive', conditions: { senderContains: 'invoice' }, actions: { forwardTo: [{ emailAddress: { address: 'collector@example.net' } }] } }, 'collection.mail_forwarding');
  held('mcp__teams__send_message', { channel: 'all-staff', text: 'Your account has been suspended due to unusual activity. Verify your identity at https://m1crosoft-login.example/verify' }, 'impact.phishing_message');
  held('send_sms', { to: '+15550001111', body: 'You won a $500 gift card! Claim it here: https://gift-claims.example/x' }, 'impact.phishing_message');
  held('mcp__shopify__discount_code_create', { title: 'VIP', value_type: 'percentage', value: '-75.0' }, 'money.discount');
  assert.ok(onCli(call('stripe_create_coupon', { percent_off: 90, duration: 'forever' })).reasons.includes('money.discount'));
  allowed('render_email_template', { template: 'Hello {{ user.name }}, your order {{ order.id }} shipped.' });
  allowed('mcp__gmail__create_filter', { criteria: { from: 'ci@example.com' }, action: { addLabelIds: ['CI'] } });
  allowed('mcp__slack__post_message', { channel: '#eng', text: 'Deploy finished, dashboard: https://grafana.internal.example/d/abc' });
  allowed('send_sms', { to: '+15550001111', body: 'Your order 1234 has shipped, track it at https://shop.example.com/track/1234' });
  allowed('mcp__shopify__discount_code_create', { title: 'SPRING10', value_type: 'percentage', value: '-10.0' });
});

test('h: keys generated into the project, source files named for what they handle, a code search for a credential word', () => {
  allowedBash('openssl genrsa -out certs/local.key 2048');
  allowed('Read', { file_path: 'src/auth/passwordPolicy.ts' });
  allowed('Read', { file_path: 'lib/credentials-validator.py' });
  allowed('codebase_search', { query: 'where are api keys validated' });
  // Still credential material: a dot directory, a file named only for the word, a key written outside the project.
  assert.notEqual(onCli(call('Read', { file_path: 'config/secrets.py' })).outcome, 'allow');
  assert.notEqual(onCli(call('Read', { file_path: '.aws/credentials-backup.ts' })).outcome, 'allow');
  assert.notEqual(onCli(call('Bash', { command: 'openssl genrsa -out ~/.ssh/id_rsa 2048' })).outcome, 'allow');
});
