import { Exit, UsageError } from '../cli-error.js';
import { openEmbeddedStorage, embeddedPaths } from '../dev-storage.js';
import { LedgerHome, initHome } from '../home.js';
import { ROLES, serve } from '../serve.js';
import { FENCED_EXIT } from './live.js';

/**
 * `ledger dev`: the whole ledger in this one process, every role of
 * `ledger serve --target all`, on an embedded log and an embedded Postgres
 * under the installation directory (created with `storage: "embedded"` when
 * missing). Nothing to install beyond Node. Same statements, API, pages,
 * bundles and CLI as on Kafka and Postgres. Runs until SIGINT / SIGTERM.
 */
export async function devCommand(options: { home?: string }): Promise<number> {
  const dir = options.home ?? LedgerHome.defaultDir();
  let home: LedgerHome;
  if (LedgerHome.exists(dir)) {
    home = LedgerHome.open(dir);
    if (home.config.storage !== 'embedded') {
      throw new UsageError(`${dir} keeps its log on Kafka and Postgres (run it with ledger serve); give ledger dev another --home or LEDGER_HOME`);
    }
  } else {
    home = initHome(dir, { storage: 'embedded' });
    process.stderr.write(`ledger dev: initialised ${home.dir} (origin ${home.config.origin}, trust root ${home.dir}/trust-root.json)\n`);
  }
  const paths = embeddedPaths(home);
  process.stderr.write(`ledger dev: log in ${paths.log}, database in ${paths.database} (the first start creates it: a few seconds)\n`);
  const storage = await openEmbeddedStorage(home);
  let running: Awaited<ReturnType<typeof serve>>;
  try {
    running = await serve(home, ROLES, { storage });
  } catch (err) {
    await storage.bus.close();
    await storage.pool.end();
    throw err;
  }
  process.stderr.write(`ledger dev: every role in one process; API ${running.apiUrl ?? '(none)'}; stop with Ctrl-C\n`);
  const signalled = new Promise<number>((resolve) => {
    process.once('SIGINT', () => resolve(Exit.ok));
    process.once('SIGTERM', () => resolve(Exit.ok));
  });
  const code = await Promise.race([signalled, running.fatal.then(() => FENCED_EXIT)]);
  // A clean stop, bounded; the bound's timer must not keep the process alive once the stop is done.
  await Promise.race([running.stop(), new Promise((resolve) => setTimeout(resolve, 15_000).unref())]);
  return code;
}
