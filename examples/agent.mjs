// A ten-line agent: sign a proposal with its own key, wait for the gate's signed decision, act only on "allow".
import { LedgerClient, deciderKeysFromGenesis, loadKey } from '@agent-ledger/client';

const home = process.env.LEDGER_HOME ?? '.ledger';
const client = new LedgerClient({ baseUrl: process.env.LEDGER_API ?? 'http://127.0.0.1:8787', signer: loadKey(`${home}/keys/agent-build-bot.key`), deciderKeys: deciderKeysFromGenesis(`${home}/genesis.json`) });
const decision = await client.proposeAndWait({ tool: 'shell', actionType: 'shell.exec', targetResource: 'host/build-01', recipient: 'none', scope: 'workspace', args: { command: 'ls -la /srv/app' }, query: 'check the build output', labels: [], channel: 'api', context: { environment: 'staging' } }, 30_000);
if (decision.outcome === 'allow') console.log(`allowed: run it (decision ${decision.entry.hash.slice(0, 16)})`);
else console.log(decision.refusal ?? `${decision.outcome}: do not run it`);
