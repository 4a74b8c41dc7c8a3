import { R, type Findings } from './findings.js';
import { PathClass, pathFacts } from './path-model.js';

/** What is done to a path. `delete_tree` is a recursive delete. */
export type PathAction = 'read' | 'write' | 'delete' | 'delete_tree';

const WRITE_CLASSES: readonly (readonly [number, number])[] = [
  [PathClass.device, R.disk],
  [PathClass.ledger, R.ledgerTamper],
  [PathClass.sudoersPam, R.sudoersPam],
  [PathClass.loader, R.loader],
  [PathClass.ssh, R.ssh],
  [PathClass.shellStartup, R.shellStartup],
  [PathClass.scheduled, R.scheduled],
  [PathClass.gitHooks, R.gitHook],
  [PathClass.packageConfig, R.packageConfig],
  [PathClass.kernel, R.kernel],
  [PathClass.history, R.history],
  [PathClass.log, R.logging],
];

/**
 * The path rules: one table for every source of paths (shell arguments and
 * redirections, file tools, tool arguments). Reading a credential is
 * credential access; writing a startup file, unit, hook or registry
 * configuration is persistence or supply chain; deleting trees outside the
 * project and temporary directories is destructive; anything done to the
 * ledger's own installation is self-protection.
 */
export function touchPath(findings: Findings, raw: string, action: PathAction): void {
  if (raw === '' || raw === '-') return;
  const { normal, classes } = pathFacts(raw);
  if (action === 'read') {
    if ((classes & PathClass.ledger) !== 0) findings.add(R.ledgerFiles);
    if ((classes & (PathClass.credential | PathClass.processMemory)) !== 0) findings.add(R.credentialFile);
    return;
  }
  let named = false;
  for (const [bit, index] of WRITE_CLASSES) {
    if ((classes & bit) !== 0) {
      findings.add(index);
      named = true;
    }
  }
  if ((classes & PathClass.credential) !== 0 && (classes & PathClass.history) === 0) {
    findings.add(R.credentialWrite);
    named = true;
  }
  if (!named && (classes & PathClass.system) !== 0) findings.add(R.systemWrite);
  if (action === 'write') return;
  if ((classes & (PathClass.data | PathClass.system)) !== 0 && (classes & PathClass.temp) === 0) findings.add(R.systemDelete);
  if (action !== 'delete_tree') return;
  if ((classes & PathClass.root) !== 0) {
    findings.add(R.rootDelete);
    return;
  }
  const wholeDirectory = normal === '.' || normal === '*' || normal === '.*' || normal === '..' || normal.startsWith('../') || normal === '~';
  if ((classes & PathClass.temp) !== 0 && (classes & PathClass.dynamic) === 0) return;
  if ((classes & PathClass.project) !== 0 && !wholeDirectory) return;
  findings.add(R.recursiveDelete);
}

/** True when a path (raw) is in one of `mask`'s classes. */
export function pathIs(raw: string, mask: number): boolean {
  return (pathFacts(raw).classes & mask) !== 0;
}
