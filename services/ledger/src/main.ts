import { ROLES } from '@agent-ledger/core';
import { Argument, Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { OperationalCode, OperationalError } from '@agent-ledger/refusals';
import { Exit, reportError } from './cli-error.js';
import type { VerifyReceiptCommandOptions } from './commands/receipt.js';
import type { TrustOptions, TrustRootOptions } from './commands/trust.js';
import type { ApproveOptions } from './commands/approve.js';
import type { GrantsTrailOptions } from './commands/grants.js';
import type { RotateRootOptions } from './commands/rotate-root.js';
import type { GrantProposeOptions, GrantWriteOptions } from './commands/grant-admin.js';
import type { KeyRegisterOptions, KeyWriteOptions } from './commands/key-admin.js';
import type { AdminOptions } from './commands/admin.js';
import { cliVersion, configureUsageErrors } from './cli-usage.js';
import { failureJson, reportFailureJson } from './commands/json-output.js';

function wholeNumber(value: string): number {
  if (!/^\d{1,9}$/.test(value)) throw new InvalidArgumentError('expected a whole number');
  return Number(value);
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** The description of every `--json` option: one object, success or failure alike. */
const JSON_OUTPUT = 'print one JSON object: {"ok":true,...} or {"ok":false,"error":{code,message,retryable}}';

let exitCode: number = Exit.ok;
/**
 * A command's action. Commander passes the command last: when it was given
 * `--json`, a failure is printed as the one JSON object on stdout (exit 1
 * refused, 2 usage or operational) instead of a line on stderr.
 */
const run =
  <A extends unknown[]>(fn: (...args: A) => number | Promise<number>) =>
  async (...args: A): Promise<void> => {
    try {
      exitCode = await fn(...args);
    } catch (err) {
      if ((args.at(-1) as Command).opts<{ json?: boolean }>().json !== true) throw err;
      exitCode = reportFailureJson(err);
    }
  };

const program = new Command('ledger')
  .description('Signed, hash-chained audit ledger and action firewall for AI agents')
  .version(cliVersion(), '-V, --version', 'print the version')
  .exitOverride();

program
  .command('verify-chain')
  .description('verify an exported bundle offline against a pinned trust root (exit 0 valid, 1 invalid, 2 usage or I/O error)')
  .argument('<bundle>', 'NDJSON bundle file')
  .requiredOption('--trust-root <file>', 'trust-root JSON file (root keys and threshold)')
  .option('--json', JSON_OUTPUT)
  .option('--known-checkpoint <file>', 'a signed checkpoint seen earlier; the bundle must extend it')
  .option('--allow-uncovered-tail', 'accept entries after the last checkpoint of a partition')
  .option('--workers <n>', 'signature-check worker threads (default: CPU count)', wholeNumber)
  .action(run(async (bundle: string, opts: { trustRoot: string; json?: boolean; knownCheckpoint?: string; allowUncoveredTail?: boolean; workers?: number }) => (await import('./commands/verify-chain.js')).verifyChainCommand(bundle, opts)));

program
  .command('receipt')
  .description("write one entry's receipt (entry, inclusion proof, covering checkpoint) from a bundle")
  .requiredOption('--bundle <file>', 'bundle to read')
  .requiredOption('--partition <n>', 'partition', wholeNumber)
  .requiredOption('--index <n>', 'entry index', wholeNumber)
  .requiredOption('--out <file>', 'receipt file to write')
  .option('--json', JSON_OUTPUT)
  .action(run(async (opts: { bundle: string; partition: number; index: number; out: string; json?: boolean }) => (await import('./commands/receipt.js')).receiptCommand(opts)));

program
  .command('verify-receipt')
  .description("verify one entry's inclusion proof against its signed checkpoint, offline; with --trust and --proposal, a decision receipt as an executor checks it")
  .argument('<receipt>', 'receipt JSON file')
  .option('--trust-root <file>', 'trust-root JSON file')
  .option('--trust <file>', 'pinned trust document (ledger trust)')
  .option('--proposal <hash>', 'with --trust: the proposal hash the decision must name')
  .option('--agent <principal>', 'with --trust: the agent the decision must be about')
  .option('--max-age-ms <ms>', "with --trust: oldest decision accepted (default the ledger's freshness window)", wholeNumber)
  .option('--json', JSON_OUTPUT)
  .action(run(async (receipt: string, opts: VerifyReceiptCommandOptions) => (await import('./commands/receipt.js')).verifyReceiptCommand(receipt, opts)));

program
  .command('trust')
  .description('fetch the trust document from the API (GET /v1/trust), check it against the trust root and the pinned one, and pin it')
  .option('--api <url>', 'ledger API', 'http://127.0.0.1:8787')
  .option('--home <dir>', 'installation directory (default $LEDGER_HOME or .ledger)')
  .option('--out <file>', 'trust file to write (default <home>/trust.json)')
  .option('--trust-root <file>', 'trust-root file handed out of band (default <home>/trust-root.json when present)')
  .option('--json', JSON_OUTPUT)
  .action(run(async (opts: TrustOptions) => (await import('./commands/trust.js')).trustCommand(opts)));

program
  .command('trust-root')
  .description("the pinned trust root, the sequencer keys and the C2SP verifier-key string of each under each partition's origin line (for transparency-log tools)")
  .option('--home <dir>', 'installation directory (default $LEDGER_HOME or .ledger)')
  .option('--trust <file>', 'pinned trust document (default <home>/trust.json)')
  .option('--verifier-key', 'print only the verifier-key strings, one a line (with --json: {"ok":true,"verifierKeys":[...]})')
  .option('--json', JSON_OUTPUT)
  .action(run(async (opts: TrustRootOptions) => (await import('./commands/trust.js')).trustRootCommand(opts)));

program
  .command('demo')
  .description('synthesize a realistic, valid ledger bundle and its trust root')
  .requiredOption('--events <n>', 'number of entries to write', wholeNumber)
  .requiredOption('--out <file>', 'bundle file to write')
  .requiredOption('--trust-root-out <file>', 'trust-root file to write')
  .option('--grant-policy <file>', 'grant policy JSON: co-signers, maximum lifetimes per tier 0-4 and the co-signing window (SPEC.md 7.2)')
  .option('--partitions <n>', 'event partitions', wholeNumber)
  .option('--checkpoint-every <n>', 'entries between checkpoints in a partition', wholeNumber)
  .option('--seed <n>', 'seed of the scenario mix', wholeNumber)
  .option('--json', JSON_OUTPUT)
  .action(run(async (opts: { events: number; out: string; trustRootOut: string; partitions?: number; checkpointEvery?: number; seed?: number; json?: boolean }) => (await import('./commands/demo.js')).demoCommand(opts)));

program
  .command('keygen')
  .description('create an Ed25519 key file (mode 0600) for a principal and print its key id')
  .requiredOption('--principal <id>', 'who the key speaks for, e.g. admin:alice')
  .requiredOption('--out <file>', 'key file to write')
  .option('--force', 'overwrite an existing file')
  .option('--json', JSON_OUTPUT)
  .action(run(async (opts: { principal: string; out: string; force?: boolean; json?: boolean }) => (await import('./commands/keys.js')).keygenCommand(opts)));

program
  .command('genesis')
  .description('sign the genesis statement with root keys and write the trust root')
  .requiredOption('--origin <origin>', 'log origin, e.g. ledger.example.com/prod')
  .requiredOption('--root-key <file>', 'root key file (repeat for each signer)', collect, [])
  .requiredOption('--threshold <m>', 'root signatures required', wholeNumber)
  .requiredOption('--key <file=roles>', 'first keys and their roles, e.g. alice.key=admin (repeat)', collect, [])
  .addOption(new Option('--event-partitions <n>', 'event partitions').argParser(wholeNumber).default(4))
  .addOption(new Option('--freshness-ms <ms>', 'accepted clock skew of statements').argParser(wholeNumber).default(300_000))
  .requiredOption('--out <file>', 'genesis envelope file to write')
  .requiredOption('--trust-root-out <file>', 'trust-root file to write')
  .option('--json', JSON_OUTPUT)
  .action(run(async (opts: Parameters<typeof import('./commands/keys.js').genesisCommand>[0]) => (await import('./commands/keys.js')).genesisCommand(opts)));

program
  .command('init')
  .description('create the local installation in .ledger/ (keys, genesis signed by 2 of 3 root keys, trust root, configuration)')
  .option('--home <dir>', 'installation directory (default $LEDGER_HOME or .ledger)')
  .option('--origin <origin>', 'log origin')
  .option('--partitions <n>', 'event partitions', wholeNumber)
  .option('--topic-prefix <prefix>', 'prefix of every topic and consumer group')
  .option('--force', 'replace an existing installation')
  .option('--grant-policy <file>', 'grant policy JSON for genesis (SPEC.md 7.2; default: 1 co-signer for tiers 0-3, 2 for tier 4)')
  .option('--root-keys <dir>', 'where the three root private keys are written, to be moved offline (default: <home>-root-keys)')
  .option('--json', JSON_OUTPUT)
  .action(run(async (opts: { home?: string; origin?: string; partitions?: number; topicPrefix?: string; force?: boolean; grantPolicy?: string; rootKeys?: string; json?: boolean }) => (await import('./commands/live.js')).initCommand(opts)));

program
  .command('serve')
  .description('run ledger roles: all, or any of api, sequencer, gate, projector, timer, siem')
  .option('--home <dir>', 'installation directory')
  .option('--target <role...>', 'roles to run', ['all'])
  .action(run(async (opts: { home?: string; target: string[] }) => (await import('./commands/live.js')).serveCommand(opts)));

program
  .command('dev')
  .description('run the whole ledger in this one process on an embedded log and an embedded Postgres under the installation directory (created when missing); nothing but Node needed')
  .option('--home <dir>', 'installation directory (default $LEDGER_HOME or .ledger)')
  .action(run(async (opts: { home?: string }) => (await import('./commands/dev.js')).devCommand(opts)));

program
  .command('move-to-kafka')
  .description('move an embedded installation (ledger dev, stopped) to Kafka and Postgres: its log replayed into the topics byte for byte, consumer offsets translated, the configuration switched; then run ledger serve')
  .option('--home <dir>', 'installation directory (default $LEDGER_HOME or .ledger)')
  .option('--brokers <list>', 'Kafka brokers, comma-separated (default: the configuration\'s, or LEDGER_KAFKA_BROKERS)')
  .option('--pg-url <url>', 'PostgreSQL URL for the projection (default: the configuration\'s, or LEDGER_PG_URL)')
  .option('--json', `${JSON_OUTPUT}; progress goes to stderr`)
  .action(run(async (opts: { home?: string; brokers?: string; pgUrl?: string; json?: boolean }) => (await import('./commands/move-to-kafka.js')).moveToKafkaCommand(opts)));

program
  .command('export')
  .description('write the committed log, through the newest checkpoint of each partition, as a bundle')
  .requiredOption('--out <file>', 'bundle file to write')
  .option('--home <dir>', 'installation directory')
  .option('--json', JSON_OUTPUT)
  .action(run(async (opts: { out: string; home?: string; json?: boolean }) => (await import('./commands/export.js')).exportCommand(opts)));

program
  .command('drive')
  .description('drive a realistic stream of agent proposals through the running API and print the outcomes')
  .option('--home <dir>', 'installation directory')
  .option('--proposals <n>', 'number of proposals', wholeNumber, 40)
  .option('--json', `${JSON_OUTPUT}; progress goes to stderr`)
  .action(run(async (opts: { home?: string; proposals: number; json?: boolean }) => (await import('./commands/live.js')).driveCommand(opts)));

program
  .command('approve')
  .description('show pending confirmations with the exact operation and time left; answer them signed with the local approver key')
  .option('--home <dir>', 'installation directory')
  .option('--as <principal>', 'approver principal whose key signs (default: the first approver-*.key)')
  .option('--api <url>', 'API base URL (default: the installation\'s)')
  .option('--list', 'list the pending items (the default; a live countdown on a terminal)')
  .option('--approve <id>', 'approve the pending proposal whose hash starts with ID')
  .option('--deny <id>', 'deny the pending proposal whose hash starts with ID')
  .option('--reason <text>', 'with --deny: why (signed into the response, 1 to 256 characters)')
  .option('--batch', 'approve every pending item of tier <= --max-tier (tiers 0-2 only)')
  .option('--max-tier <n>', 'highest tier --batch approves (3 or more is refused)', wholeNumber)
  .option('--json', JSON_OUTPUT)
  .option('--session <duration>', 'with --approve: also ask for a session grant for the exact operation (e.g. 15m, at most 1h, tiers 0-2); a second admin must co-sign it')
  .option('--admin <principal>', 'with --session: the admin whose key proposes the session grant (without it the grant is printed for an admin)')
  .action(run(async (opts: ApproveOptions) => (await import('./commands/approve.js')).approveCommand(opts)));

const gate = program.command('gate').description('the pure gate: decide proposals offline');
gate
  .command('evaluate')
  .description('decide scenarios (one JSON object or an array) and print one JSON decision line per scenario, in order')
  .requiredOption('--scenario <file>', 'scenario JSON file')
  .option('--json', `${JSON_OUTPUT}, with the decision lines as "results" (a failure for invalid content carries them too), instead of one line per scenario`)
  .action(run(async (opts: { scenario: string; json?: boolean }) => (await import('./commands/gate-evaluate.js')).gateEvaluateCommand(opts.scenario, undefined, opts)));
gate.command('bench').description('decide a gate corpus and print coverage by category, severity-weighted coverage and the misses').option('--corpus <file>', 'corpus JSON (default: the project corpus)').option('--min-coverage <percent>', 'exit 1 when the severity-weighted coverage or the benign allow rate is under this', Number).option('--rules-version <n>', 'rules version to decide with', Number).option('--json', JSON_OUTPUT).action(run(async (opts: { corpus?: string; minCoverage?: number; rulesVersion?: number; json?: boolean }) => (await import('./commands/gate-bench.js')).gateBenchCommand(opts)));

const grants = program.command('grants').description('the grant table: paper trails of grants and of the decisions they authorised');
grants
  .command('trail')
  .description("print a grant's paper trail (who proposed, co-signed, re-authorised and revoked it, with authority indexes; its parents; grants derived from it; decisions that cited it), or with --decision the grant chain behind a decision")
  .argument('[grantId]', 'grant id')
  .option('--decision <proposal>', "a decision, by its proposal's 64-hex statement hash: the grant chain behind it")
  .option('--api <url>', 'API base URL (default: the installation\'s)')
  .option('--home <dir>', 'installation directory')
  .option('--as <principal>', "the admin whose key signs the read (default: the installation's first admin key)")
  .option('--signer-key <file>', 'a key file that signs the read instead')
  .option('--json', `${JSON_OUTPUT}; success holds the API's answer`)
  .action(run(async (grantId: string | undefined, opts: GrantsTrailOptions) => (await import('./commands/grants.js')).grantsTrailCommand(grantId, opts)));

/** The options every admin command shares: who signs, which API, JSON output. */
function adminOptions(command: Command, signs = true): Command {
  if (signs) {
    command
      .option('--as <principal>', 'principal whose key in .ledger/keys/ signs (default: the first admin-*.key)')
      .option('--signer-key <file>', 'a key file that signs instead of --as');
  }
  return command
    .option('--api <url>', "API base URL (default: the installation's)")
    .option('--home <dir>', 'installation directory (default $LEDGER_HOME or .ledger)')
    .option('--json', JSON_OUTPUT);
}

const grant = program
  .command('grant')
  .description('write grants (signed with a local admin key, submitted through the API) and list them; exit 0 accepted, 1 refused by the ledger (its reason code), 2 usage, configuration or outage');
adminOptions(
  grant
    .command('propose')
    .description('propose a grant; it is in force only once other admins co-sign it (four eyes)')
    .requiredOption('--grant-id <id>', 'grant id (1 to 256 characters)')
    .requiredOption('--agent <principal>', 'the agent it authorises, e.g. agent:billing-bot')
    .requiredOption('--action <type>', 'action type, e.g. payment.send')
    .requiredOption('--target <resource>', 'target resource (a subtree pattern such as payments/vendors/* allowed)')
    .option('--recipient <recipient>', 'recipient', 'none')
    .requiredOption('--scope <scope>', 'scope')
    .option('--effect <effect>', 'allow or block', 'allow')
    .requiredOption('--tier <n>', 'highest risk tier it covers (0-4)', wholeNumber)
    .option('--not-before <instant>', 'start of the window (default: now)')
    .option('--expires-at <instant>', 'end of the window')
    .option('--for <duration>', 'length of the window instead of --expires-at, e.g. 7d, 12h')
    .option('--parent <grantId>', 'the grant this one is delegated from (it must be narrower)')
    .option('--constraint <path=json>', 'an argument constraint on one argument path, PATH=JSON, e.g. amount={"kind":"range","max":20} or currency={"kind":"equals","value":"EUR"} (repeat)', collect, [])
    .option('--constraints-json <json|file>', 'the whole constraints array as JSON text or a file holding it')
    .option('--wait', 'wait until the sequencer admitted it (or report its rejection code) and report its index'),
).action(run(async (opts: GrantProposeOptions) => (await import('./commands/grant-admin.js')).grantProposeCommand(opts)));
adminOptions(
  grant
    .command('cosign')
    .description('co-sign the write of a grant that waits for co-signatures (its proposal or a re-authorisation), after printing what it is')
    .argument('<grantId>', 'grant id')
    .option('--write <hash>', 'the statement hash of the write to co-sign (default: the latest one not in force)')
    .option('--wait', 'wait until it is on the authority stream and report whether the grant is in force'),
).action(run(async (grantId: string, opts: GrantWriteOptions & { write?: string }) => (await import('./commands/grant-admin.js')).grantCosignCommand(grantId, opts)));
adminOptions(
  grant
    .command('revoke')
    .description('revoke a grant and every grant derived from it')
    .argument('<grantId>', 'grant id')
    .requiredOption('--reason <text>', 'why (recorded on the ledger)')
    .option('--wait', 'wait until it is on the authority stream'),
).action(run(async (grantId: string, opts: GrantWriteOptions & { reason: string }) => (await import('./commands/grant-admin.js')).grantRevokeCommand(grantId, opts)));
adminOptions(
  grant
    .command('reauthorize')
    .description('extend a grant in force to a new end; another admin must co-sign it (ledger grant cosign)')
    .argument('<grantId>', 'grant id')
    .option('--expires-at <instant>', 'new end of the window')
    .option('--for <duration>', 'new end as a duration from now, e.g. 30d')
    .option('--wait', 'wait until it is on the authority stream'),
).action(run(async (grantId: string, opts: GrantWriteOptions & { expiresAt?: string; for?: string }) => (await import('./commands/grant-admin.js')).grantReauthorizeCommand(grantId, opts)));
adminOptions(
  grant
    .command('list')
    .description('list the grant table (GET /v1/grants)')
    .option('--agent <principal>', 'only grants for this agent')
    .option('--status <status>', 'only proposed, active or revoked grants'),
  false,
).action(run(async (opts: AdminOptions & { agent?: string; status?: string }) => (await import('./commands/grant-admin.js')).grantListCommand(opts)));

const key = program
  .command('key')
  .description('register and revoke keys (signed with local admin keys, possibly several, submitted through the API) and list them; exit 0 accepted, 1 refused by the ledger, 2 usage, configuration or outage');
adminOptions(
  key
    .command('register')
    .description('register a key for a principal with its roles; --out writes a partly signed statement for more admins (ledger key cosign)')
    .requiredOption('--principal <id>', 'who the key speaks for, e.g. agent:billing-bot')
    .requiredOption('--roles <roles>', `roles, comma-separated (${ROLES.join(', ')})`)
    .option('--key-id <hex>', 'the new key id (public key, 64 hex)')
    .option('--new-key <file>', 'the new key file (its key id is read from it)')
    .option('--no-prove', 'with --new-key: the new key does not sign (ledgers under authority rules 1 take one signature only)')
    .option('--risk-threshold <n>', "an agent's risk threshold: tier 0-1 calls below it are allowed without a human")
    .option('--out <file>', 'write the signed statement here for more signers')
    .option('--submit', 'with --out: submit it as well')
    .option('--wait', 'after submitting, wait until the sequencer admitted it (or report its rejection code)'),
).action(run(async (opts: KeyRegisterOptions) => (await import('./commands/key-admin.js')).keyRegisterCommand(opts)));
adminOptions(
  key
    .command('cosign')
    .description('add a signature to a partly signed key statement (written in place or to --out); --submit sends it')
    .argument('<file>', 'the signed statement file')
    .option('--out <file>', 'write the result here instead of in place')
    .option('--submit', 'submit it after signing')
    .option('--wait', 'after submitting, wait until the sequencer admitted it (or report its rejection code)'),
).action(run(async (file: string, opts: KeyWriteOptions) => (await import('./commands/key-admin.js')).keyCosignCommand(file, opts)));
adminOptions(
  key
    .command('submit')
    .description('submit a signed key statement file, or a root rotation signed offline (ledger rotate-root --out)')
    .argument('<file>', 'the signed statement file')
    .option('--wait', 'wait until the sequencer admitted it (or report its rejection code)'),
  false,
).action(run(async (file: string, opts: AdminOptions & { wait?: boolean }) => (await import('./commands/key-admin.js')).keySubmitCommand(file, opts)));
adminOptions(
  key
    .command('revoke')
    .description('revoke a key: nothing it signs after this entry counts')
    .argument('<keyId>', 'the key id (64 hex)')
    .requiredOption('--reason <text>', 'why (recorded on the ledger)')
    .option('--out <file>', 'write the signed statement here for more signers')
    .option('--submit', 'with --out: submit it as well')
    .option('--wait', 'after submitting, wait until the sequencer admitted it (or report its rejection code)'),
).action(run(async (keyId: string, opts: KeyWriteOptions & { reason: string }) => (await import('./commands/key-admin.js')).keyRevokeCommand(keyId, opts)));
key
  .command('list')
  .description("list the keys the authority stream registered (read from the installation's broker and folded as the ledger folds them)")
  .option('--principal <id>', 'only this principal (revoked keys included)')
  .option('--all', 'include revoked keys')
  .option('--home <dir>', 'installation directory')
  .option('--json', JSON_OUTPUT)
  .action(run(async (opts: { home?: string; json?: boolean; principal?: string; all?: boolean }) => (await import('./commands/key-admin.js')).keyListCommand(opts)));

program
  .command('rotate-root')
  .description('sign a trust-root rotation with current and new root keys, optionally revoking and registering keys (recovery after a key compromise)')
  .requiredOption('--root-key <file>', 'current root key file (repeat; at least the current threshold)', collect, [])
  .requiredOption('--new-root-key <file>', 'new root key file (repeat; all of them form the new set and sign)', collect, [])
  .requiredOption('--threshold <m>', 'new root threshold', wholeNumber)
  .option('--revoke <keyId>', 'key id to revoke in the same statement (repeat)', collect, [])
  .option('--register <file=roles>', 'key file to register with its roles, e.g. erin.key=admin (repeat)', collect, [])
  .requiredOption('--reason <text>', 'why (recorded on the ledger)')
  .option('--out <file>', 'write the signed envelope')
  .option('--submit', 'submit it to the installation\'s API')
  .option('--api <url>', 'API base URL (default: the installation\'s)')
  .option('--home <dir>', 'installation directory')
  .option('--json', JSON_OUTPUT)
  .action(run(async (opts: RotateRootOptions) => (await import('./commands/rotate-root.js')).rotateRootCommand(opts)));

// Where agents meet the ledger: the Claude Code hook and the MCP gateway (loaded on use).
const hook = program.command('hook').description('executor hooks of agent tools');
hook.command('claude-code').description("Claude Code's PreToolUse hook: propose the tool call on stdin, answer allow/deny/ask on stdout (always exit 0; a failure is a deny)").requiredOption('--config <file>', 'executor configuration (ledger setup claude-code writes .claude/agent-ledger.json)').action(run(async (opts: { config: string }) => (await import('./commands/hook.js')).hookClaudeCodeCommand(opts)));
const setup = program.command('setup').description('put an agent behind the ledger');
adminOptions(setup.command('claude-code').description("register this machine's agent key and add the PreToolUse hook to .claude/settings.json").option('--project <dir>', 'project directory (default: the current one)').option('--agent <principal>', 'agent principal (default agent:claude-code-<host>)').option('--fail-mode <mode>', 'ledger unreachable: closed (deny), ask (the user decides) or open (run it); recorded with every proposal', 'closed').option('--budget <seconds>', 'longest wait for a decision (a human answer) before the hook denies', wholeNumber, 110).option('--risk-threshold <n>', "the agent's risk threshold, registered with its key")).action(run(async (opts: import('./commands/setup.js').SetupClaudeCodeOptions) => (await import('./commands/setup.js')).setupClaudeCodeCommand(opts)));
adminOptions(
  program
    .command('dashboard')
    .description("serve the operator pages on 127.0.0.1, each read signed with a local admin or auditor key (the API's reads need a signature a browser cannot make from a key file)")
    .option('--port <n>', 'loopback port (default: any free port)', wholeNumber),
).action(run(async (opts: import('./commands/dashboard.js').DashboardOptions) => (await import('./commands/dashboard.js')).dashboardCommand(opts)));
program.command('mcp-gateway').description('stand in front of an MCP server: every tools/call is a signed proposal, forwarded only on a verified allow').argument('<command...>', 'the MCP server to start, after --').option('--config <file>', 'executor configuration file').option('--agent <principal>', "or: the agent whose key in the installation's keys/ signs").option('--home <dir>', 'installation directory').option('--api <url>', "API base URL (default: the installation's)").option('--fail-mode <mode>', 'ledger unreachable: closed (refuse) or open (forward)').option('--budget <seconds>', 'longest wait for a decision per call', wholeNumber).option('--name <server>', 'server name in tool names mcp__<server>__<tool>').option('--http <port>', 'serve Streamable HTTP on this port (path /mcp) instead of stdio', wholeNumber).option('--host <host>', 'address to bind with --http', '127.0.0.1').action(run(async (command: string[], opts: import('./commands/mcp-gateway.js').McpGatewayOptions) => (await import('./commands/mcp-gateway.js')).mcpGatewayCommand(command, opts)));

program
  .command('status')
  .description('which roles run, whether the broker and Postgres answer, the lag, and the newest checkpoint of every partition (exit 2, UNAVAILABLE, when something is down)')
  .option('--home <dir>', 'installation directory')
  .option('--api <url>', "API base URL (default: the installation's)")
  .option('--json', JSON_OUTPUT)
  .action(run(async (opts: { home?: string; api?: string; json?: boolean }) => (await import('./commands/status.js')).statusCommand(opts)));

program
  .command('doctor')
  .description('check the installation (files, keys, trust root, broker, Postgres, API, clocks) and say how to fix what is wrong (exit 2 when a check fails)')
  .option('--home <dir>', 'installation directory')
  .option('--json', JSON_OUTPUT)
  .action(run(async (opts: { home?: string; json?: boolean }) => (await import('./commands/doctor.js')).doctorCommand(opts)));

program
  .command('schemas')
  .description('write the JSON Schemas generated from the statement types')
  .requiredOption('--out <dir>', 'directory')
  .option('--check', 'fail when the files on disk differ')
  .option('--json', JSON_OUTPUT)
  .action(run(async (opts: { out: string; check?: boolean; json?: boolean }) => (await import('./commands/schemas.js')).schemasCommand(opts)));

program
  .command('completion')
  .description('print a completion script for bash, zsh or fish, generated from this command tree (bash: source <(ledger completion bash))')
  .addArgument(new Argument('<shell>', 'the shell').choices(['bash', 'zsh', 'fish']))
  .action(run(async (shell: string) => (await import('./commands/completion.js')).completionCommand(shell, program)));

configureUsageErrors(program);
// With --json (before a `--`, after which the words are another program's), a
// usage error is the failure object on stdout like every other failure.
const words = process.argv.slice(2);
const jsonRequested = (words.includes('--') ? words.slice(0, words.indexOf('--')) : words).includes('--json');
let usageFailure: string | undefined;
if (jsonRequested) {
  const capture = (command: Command, name: string): void => {
    command.configureOutput({ outputError: (text) => void (usageFailure = `${text.replace(/^error: /, '').trimEnd()} (usage: ${name} ${command.usage()})`) });
    for (const sub of command.commands) capture(sub, `${name} ${sub.name()}`);
  };
  capture(program, program.name());
}
try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    exitCode = err.exitCode === 0 ? Exit.ok : Exit.usage;
    if (jsonRequested && exitCode !== Exit.ok) process.stdout.write(`${JSON.stringify(failureJson(new OperationalError(OperationalCode.BAD_ARGUMENT, usageFailure ?? err.message)))}\n`);
  } else {
    try {
      exitCode = reportError(err);
    } catch (unexpected) {
      process.stderr.write(`ledger: internal error: ${(unexpected as Error).stack ?? String(unexpected)}\n`);
      exitCode = Exit.usage;
    }
  }
}
process.exitCode = exitCode;
// Kafka and Postgres clients may hold the event loop open after a command finishes.
if (['serve', 'status', 'doctor'].includes(process.argv[2] ?? '')) process.exit(exitCode);
