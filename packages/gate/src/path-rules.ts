import { analysis } from './analysis-version.js';
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
  const facts = pathFacts(raw);
  const normal = facts.normal;
  const classes = analysis.v3 ? classesV3(findings, normal, facts.classes, action) : facts.classes;
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

/** Shell startup files version 2 did not know (read by interactive shells, or sourced by their startup files). */
const STARTUP_V3 = new Set(['.bash_aliases', '.bash_functions', '.aliases', '.zsh_aliases', '.zshrc.local', '.bashrc.local', '.profile.local', '.zprofile.local', '.shrc', '.envrc.local']);
/** The agent's own hook and permission settings: they decide whether a call reaches the gate at all. */
/** Version 3: more places where keys and tokens live (wallets, editor and assistant tokens, tool logins). */
const CREDENTIAL_DIRS_V3 = ['~/.config/solana/', '~/.config/github-copilot/', '~/.config/code/user/globalstorage/state.vscdb', '~/library/application support/code/user/globalstorage/state.vscdb', '~/.foundry/keystores/', '~/.brownie/accounts/', '~/.monero/', '~/.config/exodus/', '~/.config/atomic/', '~/.gem/credentials', '~/.m2/settings-security.xml', '~/.config/stripe/', '~/.wrangler/', '~/.config/configstore/', '~/.cloudflared/', '~/.config/ngrok/', '~/.supabase/', '~/.codex/auth.json', '~/.config/gcloud/', '~/.local/share/solana/', '~/.config/op/', '~/.1password/', '~/.config/keybase/', '~/.tsh/', '~/.vault-token'];
/**
 * Version 10: a source file inside the project's tree (no dot directory, no
 * secrets directory, not a dotfile) whose name holds a credential word among
 * others; a file named only for the word (secrets.py) stays a credential.
 */
const SOURCE_NAMED_FOR_SECRETS = /^(?!\.{1,2}\/|~|\/)(?!.*(?:^|\/)\.)(?!.*(?:^|\/)(?:secrets?|private[_-]?keys?)\/)(?:[\w@+-]+\/)*[\w@+-][\w.@+-]*\.(?:ts|tsx|js|jsx|mjs|cjs|py|rb|go|java|kt|kts|rs|cs|php|swift|scala|c|h|cc|cpp|hpp|vue|svelte|dart|ex|exs|md|mdx)$/;
/** Version 12: languages whose source files hold code, not configuration values (src/auth/passwords.ts is code; secrets.py may hold secrets). */
const TYPED_SOURCE = /\.(?:ts|tsx|js|jsx|mjs|cjs|go|java|kt|rs|cs|swift|scala|c|h|cc|cpp|hpp|dart|vue|svelte)$/;

/** Version 3: directories on a user's PATH where a file named like a common command shadows it. */
const USER_BIN = /^(?:~\/(?:\.local\/)?bin|\/usr\/local\/bin|\/opt\/homebrew\/bin)\/([^/]+)$/;
const SHADOWED = new Set(['sudo', 'su', 'ls', 'cd', 'cat', 'ssh', 'scp', 'git', 'curl', 'wget', 'ps', 'kill', 'rm', 'cp', 'mv', 'python', 'python3', 'node', 'npm', 'npx', 'pip', 'pip3', 'docker', 'kubectl', 'which', 'passwd', 'gpg', 'openssl', 'ledger', 'grep', 'find', 'id', 'whoami', 'make', 'bash', 'sh', 'zsh', 'env', 'less', 'vim', 'vi', 'nano', 'code', 'claude', 'gh', 'aws', 'gcloud', 'terraform', 'yarn', 'pnpm', 'go', 'cargo', 'java', 'ssh-add', 'ssh-agent']);
const AGENT_SETTINGS = /(?:^|\/)(?:\.claude\/(?:settings(?:\.local)?\.json|hooks(?:\/|$))|\.claude\.json$|\.mcp\.json$|\.cursor\/(?:mcp|hooks)\.json$|\.codex\/config\.toml$|\.gemini\/settings\.json$)/;

/**
 * Version 3's path classes: version 2's, with `/etc/passwd` and `/etc/group`
 * world-readable account lists (writing them stays an account change, not a
 * credential read), more shell startup files, and two findings of their own:
 * changing the agent's hook or permission settings is tampering with the
 * gate, and deleting a `.git` directory discards history.
 */
function classesV3(findings: Findings, normal: string, classes: number, action: PathAction): number {
  let out = classes;
  if (normal === '/etc/passwd' || normal === '/etc/group') out &= ~PathClass.credential;
  const slash = normal.lastIndexOf('/');
  const base = normal.slice(slash + 1);
  // Version 10: project source code named for what it handles (src/lib/password-strength.ts, credentials.schema.ts) is code, not a credential store.
  if (analysis.v10 && (out & PathClass.credential) !== 0 && SOURCE_NAMED_FOR_SECRETS.test(normal) && (!/^(?:secrets?|passwords?|credentials?)\.[a-z]+$/.test(base) || (analysis.v12 && TYPED_SOURCE.test(base) && !/(?:^|\/)(?:config|configs|settings|env|secrets?)\//.test(normal)))) out &= ~PathClass.credential;
  if (STARTUP_V3.has(base) && (normal.startsWith('~') || normal.indexOf('/') === slash)) out |= PathClass.shellStartup;
  if ((out & PathClass.credential) === 0 && normal.charCodeAt(0) === 126 /* ~ */) {
    for (const dir of CREDENTIAL_DIRS_V3) {
      if (normal === dir || normal.startsWith(dir) || `${normal}/` === dir) {
        out |= PathClass.credential;
        break;
      }
    }
  }
  if (action === 'read') return out;
  const bin = USER_BIN.exec(normal);
  if (bin !== null && SHADOWED.has(bin[1] as string)) findings.add(R.pathHijack);
  if (AGENT_SETTINGS.test(normal)) findings.add(R.ledgerTamper);
  if (action !== 'write' && base === '.git') findings.add(R.gitHistory);
  return out;
}

/** True when a path (raw) is in one of `mask`'s classes. */
export function pathIs(raw: string, mask: number): boolean {
  return (pathFacts(raw).classes & mask) !== 0;
}
