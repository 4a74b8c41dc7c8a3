import { R, type Findings } from './findings.js';

/**
 * Rules version 5: what the content of some files means, whoever writes it
 * (a Write or Edit tool, `sed -i`, a here-document) or applies it
 * (`kubectl apply -f -`):
 * - CI workflows that hand their secrets out, run a pull request's code with
 *   them, or put event text into a shell;
 * - dependency manifests pointing a dependency at a git fork, a URL or an
 *   unofficial index;
 * - Kubernetes manifests giving a pod the host (the fields version 4 reads in
 *   `kubectl run --overrides`, in YAML as in JSON).
 * Build scripts (setup.py, build.rs, conftest.py, ...) are code, read as
 * inline code is. One reading for every writer: the tool registry (Write,
 * Edit) and the shell (`cat > f <<EOF`, `echo ... >> f`) call
 * {@link writtenContentFindings}.
 */

/** Findings that mean harm wherever a command runs: read from such files' content (their other commands are the project's own business). */
export const SEVERE_IN_SCRIPTS: ReadonlySet<number> = new Set([R.remotePipeShell, R.reverseShell, R.upload, R.decoded, R.loader, R.credentialFile, R.downloadExec, R.rootDelete, R.disk, R.forkBomb, R.ledgerTamper, R.ssh, R.shellStartup, R.sudoersPam]);

/**
 * Version 5: files that run as code when a project is built, installed or
 * tested (setup.py, conftest.py, build.rs, Gradle and CMake scripts, gemspecs,
 * .pth files, ...): their content is read as inline code is, and what means
 * harm wherever it runs holds the write.
 */
const BUILD_SCRIPT_FILE = /(?:^|\/)(?:setup\.py|conftest\.py|noxfile\.py|fabfile\.py|sitecustomize\.py|usercustomize\.py|[^/]+\.pth|build\.rs|build\.gradle(?:\.kts)?|settings\.gradle(?:\.kts)?|rakefile|[^/]+\.gemspec|extconf\.rb|makefile\.pl|build\.pl|binding\.gyp|cmakelists\.txt|[^/]+\.cmake|build\.sbt|mix\.exs)$/;

/**
 * Version 5: what new content of a CI workflow, a dependency manifest or a
 * build script means. `readShell` and `readCode` are the shell and
 * inline-code readings (command-analysis.ts); of them only what means harm
 * wherever it runs ({@link SEVERE_IN_SCRIPTS}) is kept.
 */
export function writtenContentFindings(findings: Findings, path: string, contents: readonly string[], readShell: (text: string) => readonly number[], readCode: (text: string) => readonly number[]): void {
  const lower = path.toLowerCase();
  const workflow = CI_WORKFLOW_FILE.test(lower);
  const manifest = DEPENDENCY_MANIFEST.test(lower);
  const build = BUILD_SCRIPT_FILE.test(lower);
  if (!workflow && !manifest && !build) return;
  const severe = (found: readonly number[]): void => {
    for (const index of found) if (SEVERE_IN_SCRIPTS.has(index)) findings.add(index);
  };
  for (const content of contents) {
    if (workflow) workflowFindings(findings, content, (line) => severe(readShell(line)));
    if (manifest) manifestFindings(findings, lower, content);
    if (build) severe(readCode(content));
  }
}


/** CI workflow files (GitHub Actions, GitLab CI, CircleCI, Azure Pipelines, Bitbucket, Buildkite, Drone). */
export const CI_WORKFLOW_FILE = /(?:^|\/)(?:\.github\/workflows\/[^/]+\.ya?ml|\.github\/actions\/[^/]+\/action\.ya?ml|action\.ya?ml|\.gitlab-ci\.yml|\.circleci\/config\.yml|azure-pipelines\.ya?ml|bitbucket-pipelines\.yml|\.buildkite\/pipeline\.ya?ml|\.drone\.ya?ml|\.travis\.yml)$/;

/** Every secret of the workflow at once (`toJSON(secrets)`, `${{ secrets }}`). */
const ALL_SECRETS = /\$\{\{\s*(?:tojson\(\s*secrets\s*\)|secrets\s*\}\})/i;
/** Triggers that run with the base repository's secrets on a pull request from a fork. */
const PRIVILEGED_TRIGGER = /(?:^|[\s[,{-])(?:pull_request_target|workflow_run)\b/m;
/** A checkout of the pull request's own code. */
const HEAD_CHECKOUT = /\bref\s*:\s*["']?\$\{\{\s*github\.(?:event\.pull_request\.head\.(?:sha|ref)|head_ref|event\.workflow_run\.head_(?:sha|branch))\s*\}\}|refs\/pull\/\$\{\{/i;
/** Event text an attacker writes (titles, bodies, branch names, commit messages), expanded into a step. */
const EVENT_TEXT = /\$\{\{\s*github\.(?:head_ref|event\.(?:issue|pull_request|comment|review|review_comment|discussion|pages|head_commit|commits|workflow_run)\S*\.(?:title|body|head_ref|ref|label|name|message|email|default_branch|page_name))\s*\}\}/i;
/** A step's shell lines: `run:` and its block. */
const RUN_STEP = /(?:^|\n)(\s*)-?\s*run\s*:\s*([|>][-+]?\s*\n(?:\1\s+.*(?:\n|$))+|.*)/g;

/** The findings of a CI workflow's text; `runShell` reads one shell line (workflow expressions already replaced by a variable). */
export function workflowFindings(findings: Findings, content: string, runShell: (line: string) => void): void {
  const text = content.length > 65_536 ? content.slice(0, 65_536) : content;
  if (ALL_SECRETS.test(text)) findings.add(R.ciWorkflow);
  if (PRIVILEGED_TRIGGER.test(text) && HEAD_CHECKOUT.test(text)) findings.add(R.ciWorkflow);
  RUN_STEP.lastIndex = 0;
  let steps = 0;
  for (let m = RUN_STEP.exec(text); m !== null && steps < 256; m = RUN_STEP.exec(text), steps++) {
    const body = m[2] ?? '';
    if (EVENT_TEXT.test(body)) findings.add(R.ciWorkflow);
    // `${{ ... }}` is substituted by the runner before the shell reads the line: a variable to the shell reading.
    const lines = body.replace(/^[|>][-+]?\s*\n/, '').split('\n', 512);
    for (const line of lines) {
      const shellLine = line.trim().replace(/\$\{\{[^}]*\}\}/g, '$GITHUB_EXPRESSION');
      if (shellLine !== '' && !shellLine.startsWith('#')) runShell(shellLine);
    }
  }
}

/** Dependency manifests: files that say where dependencies come from. */
export const DEPENDENCY_MANIFEST = /(?:^|\/)(?:package\.json|requirements[^/]*\.(?:txt|in)|constraints[^/]*\.txt|pipfile|pyproject\.toml|setup\.cfg|go\.mod|cargo\.toml|gemfile|composer\.json|\.yarnrc(?:\.yml)?|bunfig\.toml|deno\.jsonc?|import_map\.json)$/;

/** A dependency (not repository metadata) whose version is a git, URL or fork source. */
const PACKAGE_JSON_SOURCE = /"(?!(?:url|homepage|repository|bugs|funding|\$schema|author|email|name|description|main|module|types|bin|directory|registry|publishConfig)")[^"\n]{1,214}"\s*:\s*"(?:github:|gitlab:|bitbucket:|gist:|git\+|git:\/\/|https?:\/\/|file:\/(?:tmp|var\/tmp|dev\/shm)\/|[a-z0-9_.-]+\/[a-z0-9_.-]+#)/i;
/** requirements and constraints files, Pipfile, pyproject: a VCS or URL requirement, or an index other than PyPI. */
const PYTHON_SOURCE = /(?:^|\s|["'=@])(?:git\+|hg\+|svn\+|bzr\+)[a-z]+:\/\/|(?:^|\n)\s*(?:-i|--index-url|--extra-index-url|-f|--find-links)[=\s]+(?!https:\/\/(?:pypi\.org|files\.pythonhosted\.org|pypi\.python\.org)\b)\S|(?:^|\n)\s*--trusted-host\b|@\s*https?:\/\/|\bgit\s*=\s*["']|\burl\s*=\s*["']http:\/\//i;
/** go.mod: a replace of a module by another module path (a local ./ or ../ path is a workspace, not a fork). */
const GO_REPLACE = /(?:^|\n)\s*(?:replace\s+)?[^\s=]+(?:\s+v[\w.+-]+)?\s+=>\s+(?![./])[a-z0-9.-]+\.[a-z]{2,}\//i;
/** Cargo.toml, Gemfile, composer.json: git sources, HTTP sources. */
const OTHER_SOURCE = /\bgit\s*=\s*["']|\b(?:git|github|gitlab|bitbucket)\s*:\s*["']|\bsource\s*\(?\s*["']http:\/\/|"type"\s*:\s*"(?:vcs|git|github)"|\b(?:npmregistryserver|registry)\s*[:=]?\s*["']?http:\/\//i;

/** Adds `supply_chain.dependency_source` when `content` (all of a manifest, or the new text of an edit) points a dependency elsewhere. */
export function manifestFindings(findings: Findings, path: string, content: string): void {
  const text = content.length > 65_536 ? content.slice(0, 65_536) : content;
  const base = path.slice(path.lastIndexOf('/') + 1).toLowerCase();
  const found =
    base === 'package.json' || base === 'deno.json' || base === 'deno.jsonc' || base === 'import_map.json'
      ? PACKAGE_JSON_SOURCE.test(text)
      : base === 'go.mod'
        ? GO_REPLACE.test(text)
        : base.startsWith('requirements') || base.startsWith('constraints') || base === 'pipfile' || base === 'pyproject.toml' || base === 'setup.cfg'
          ? PYTHON_SOURCE.test(text)
          : OTHER_SOURCE.test(text) || PACKAGE_JSON_SOURCE.test(text);
  if (found) findings.add(R.dependencySource);
}

/** Pod spec fields that take the host, in YAML or JSON (version 4's reading of `--overrides`, for manifests). */
const POD_ESCAPE_FIELD = /["']?\b(?:privileged|hostPID|hostIPC|hostNetwork|allowPrivilegeEscalation)["']?\s*:\s*["']?true\b/i;
/** A hostPath volume of `/` or of a tree that holds the node (its root, /etc, /proc, the runtime's socket, the kubelet's data). */
const HOST_PATH = /\bhostPath["']?\s*:\s*\{?[\s\S]{0,80}?\bpath["']?\s*:\s*["']?(?:\/|\/etc|\/root|\/proc|\/sys|\/dev|\/var\/run(?:\/docker\.sock|\/containerd[^\s"']*|\/crio[^\s"']*)?|\/run(?:\/containerd[^\s"']*)?|\/var\/lib\/(?:kubelet|docker|containerd|etcd)|\/home)\/?["']?\s*(?:[,}\n]|$)/i;
/** Capabilities that break out of a container. */
const ESCAPE_CAPABILITY = /\bcapabilities["']?\s*:[\s\S]{0,80}?\badd["']?\s*:[\s\S]{0,40}?\b(?:SYS_ADMIN|SYS_PTRACE|SYS_MODULE|DAC_READ_SEARCH|ALL)\b/;
const CLUSTER_ADMIN_BINDING = /\bkind["']?\s*:\s*["']?ClusterRoleBinding[\s\S]{0,2000}?\bname["']?\s*:\s*["']?cluster-admin\b/i;

/** The findings of a Kubernetes manifest that will be applied. */
export function kubernetesManifestFindings(findings: Findings, manifest: string): void {
  const text = manifest.length > 65_536 ? manifest.slice(0, 65_536) : manifest;
  if (POD_ESCAPE_FIELD.test(text) || HOST_PATH.test(text) || ESCAPE_CAPABILITY.test(text)) findings.add(R.containerEscape);
  if (CLUSTER_ADMIN_BINDING.test(text)) findings.add(R.accounts);
}
