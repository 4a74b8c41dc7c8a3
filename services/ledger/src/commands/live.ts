import { resolve } from 'node:path';
import { Exit, UsageError } from '../cli-error.js';
import { drive } from '../demo/drive.js';
import { LedgerHome, initHome, readGrantPolicy } from '../home.js';
import { ROLES, serve, type ServeRole } from '../serve.js';
import { reportSuccess } from './json-output.js';

/** `ledger init`: creates the local installation (keys, genesis, trust root, configuration). */
export function initCommand(options: { home?: string; origin?: string; partitions?: number; topicPrefix?: string; force?: boolean; grantPolicy?: string; rootKeys?: string; json?: boolean }): number {
  const dir = options.home ?? LedgerHome.defaultDir();
  const existed = LedgerHome.exists(dir);
  const home = initHome(dir, {
    ...(options.origin === undefined ? {} : { origin: options.origin }),
    ...(options.partitions === undefined ? {} : { eventPartitions: options.partitions }),
    ...(options.topicPrefix === undefined ? {} : { topicPrefix: options.topicPrefix }),
    ...(options.force === undefined ? {} : { force: options.force }),
    ...(options.grantPolicy === undefined ? {} : { grantPolicy: readGrantPolicy(options.grantPolicy) }),
    ...(options.rootKeys === undefined ? {} : { rootKeysDir: options.rootKeys }),
  });
  const created = !(existed && options.force !== true);
  const rootKeys = resolve(options.rootKeys ?? LedgerHome.defaultRootKeysDir(dir));
  reportSuccess(
    options.json,
    [
      `${created ? 'initialised' : 'using existing'} ledger home ${home.dir} (origin ${home.config.origin}, trust root ${home.dir}/trust-root.json)`,
      ...(created ? [`the three root private keys are in ${rootKeys}: move them offline (the installation needs none of them; see README "Access and TLS")`] : []),
    ],
    { created, home: home.dir, origin: home.config.origin, trustRoot: `${home.dir}/trust-root.json`, eventPartitions: home.config.eventPartitions, topicPrefix: home.config.topicPrefix, apiUrl: home.apiUrl(), ...(created ? { rootKeys } : {}) },
  );
  return Exit.ok;
}

/** Exit status of a `ledger serve` whose sequencer was fenced by a newer instance. */
export const FENCED_EXIT = 3;

/** `ledger serve --target all|api|sequencer|...`: runs roles until SIGINT / SIGTERM, or until fenced (exit 3). */
export async function serveCommand(options: { home?: string; target: string[] }): Promise<number> {
  const roles = options.target.includes('all') ? [...ROLES] : options.target;
  for (const role of roles) if (!(ROLES as readonly string[]).includes(role)) throw new UsageError(`unknown role ${role} (roles: all, ${ROLES.join(', ')})`);
  const home = LedgerHome.open(options.home);
  const running = await serve(home, roles as ServeRole[]);
  const signalled = new Promise<number>((resolve) => {
    process.once('SIGINT', () => resolve(Exit.ok));
    process.once('SIGTERM', () => resolve(Exit.ok));
  });
  // A fenced sequencer is a zombie: it stops at once with status 3 and writes nothing more.
  const code = await Promise.race([signalled, running.fatal.then(() => FENCED_EXIT)]);
  // A clean stop, bounded: a fenced writer's clients may never finish disconnecting.
  await Promise.race([running.stop(), new Promise((resolve) => setTimeout(resolve, code === FENCED_EXIT ? 3_000 : 15_000))]);
  return code;
}

/**
 * `ledger drive --proposals N`: a realistic stream of proposals through the
 * running API. With `--json`, stdout is the one summary object
 * `{"ok":true,"proposals","outcomes","codes","approvals","denials"}` and the
 * progress lines go to stderr.
 */
export async function driveCommand(options: { home?: string; proposals: number; json?: boolean }): Promise<number> {
  const home = LedgerHome.open(options.home);
  const json = options.json === true;
  const summary = await drive(home, { proposals: options.proposals, log: (line) => void (json ? process.stderr : process.stdout).write(`${line}\n`) });
  if (json) {
    reportSuccess(true, [], { ...summary });
    return Exit.ok;
  }
  const fmt = (counts: Record<string, number>): string => Object.entries(counts).sort().map(([k, v]) => `${k}=${v}`).join(' ') || 'none';
  process.stdout.write(
    [
      `proposals: ${summary.proposals}; human approvals ${summary.approvals}, denials ${summary.denials}${summary.lateAnswers > 0 ? `, answers refused as late (STALE_APPROVAL: the request had closed) ${summary.lateAnswers}` : ''}`,
      `final decisions: ${fmt(summary.outcomes)}`,
      `by reason code: ${fmt(summary.codes)}`,
      '',
    ].join('\n'),
  );
  return Exit.ok;
}
