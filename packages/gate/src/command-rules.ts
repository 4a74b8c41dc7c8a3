import type { Rule } from './rule.js';

/** A rule of rules version 2's structural analysis (commands, paths, tools, amounts). */
export interface CommandRule extends Rule {
  readonly kind: 'pattern';
  /** The family (README and the corpus bench group by it). */
  readonly family: string;
}

function rule(id: string, tier: CommandRule['tier'], weight: number, summary: string, block?: true): CommandRule {
  const family = id.slice(0, id.indexOf('.'));
  return block === true ? { id, kind: 'pattern', family, tier, weight, summary, block } : { id, kind: 'pattern', family, tier, weight, summary };
}

/**
 * Rules of version 2, by id (their order is the order of `reasons`). They
 * fire on what a command will do: its program (after unwrapping sudo, env,
 * xargs, `sh -c`, ssh, docker exec, ...), its flags in any spelling and the
 * classes of the paths it reads, writes or deletes (path-model.ts). Weights
 * as in version 1: tier 4 4-5, tier 3 2.5-3, tier 2 1.5, tier 1 0.5.
 */
export const COMMAND_RULES: readonly CommandRule[] = [
  rule('destructive.root_delete', 4, 5, 'recursive delete of /, ~, a top-level system directory (any flag spelling, through any wrapper)', true),
  rule('destructive.disk', 4, 5, 'making, wiping or overwriting a filesystem or block device (mkfs, wipefs, dd of=/dev/sdX, > /dev/nvme0n1)', true),
  rule('destructive.fork_bomb', 4, 5, 'fork bomb: a function that pipes into itself in the background', true),
  rule('destructive.recursive_delete', 3, 3, 'recursive delete outside the project and temporary directories, of `.`/`*`, or of an unresolved path'),
  rule('destructive.system_delete', 3, 3, 'deleting, moving away or truncating system or service data (/var/lib, /etc, /srv, ...)'),
  rule('destructive.secure_delete', 3, 3, 'secure deletion (shred, srm, wipe)'),
  rule('destructive.git_history', 3, 3, 'rewriting or discarding git history (push --force, reset --hard, clean -f, branch -D, push --delete, filter-branch)'),
  rule('destructive.cluster', 3, 2.5, 'deleting, draining or scaling to zero in a cluster (kubectl delete/drain/cordon, --replicas=0, helm uninstall, terraform destroy)'),
  rule('destructive.cloud', 3, 3, 'deleting cloud resources or buckets (aws ... delete/terminate, s3 rb, gsutil rm -r)'),
  rule('destructive.service_stop', 3, 2.5, 'stopping, restarting or disabling services (systemctl, service, launchctl)'),
  rule('destructive.shutdown', 3, 3, 'shutdown, reboot, halt, poweroff, init 0/6'),
  rule('destructive.container', 2, 1.5, 'docker/podman kill, forced rm, prune'),
  rule('destructive.database', 3, 3, 'dropping databases or flushing stores (dropdb, redis-cli flushall)'),
  rule('destructive.structured', 2, 1.5, 'a structured call whose tool or action deletes, destroys, drops, purges or terminates'),
  rule('destructive.scale_to_zero', 3, 2.5, 'a structured call that scales a workload to zero replicas'),
  rule('exfiltration.upload', 3, 3, 'sending a file, piped output or computed data over the network (curl -d @f, -T, nc < f, scp/rsync to a host)'),
  rule('exfiltration.cloud_upload', 3, 3, 'copying local data to a cloud bucket (aws s3 cp/sync, gsutil cp, az storage upload, rclone)'),
  rule('exfiltration.reverse_shell', 4, 4, 'reverse shells (/dev/tcp, nc -e, socat exec:, a network stream piped into a shell)'),
  rule('network.fetch', 1, 0.5, 'network access (curl, wget, fetch tools)'),
  rule('network.raw_socket', 2, 1.5, 'raw connections, listeners and tunnels (nc, socat, telnet, ssh -R/-D)'),
  rule('persistence.shell_startup', 3, 3, 'writing shell startup files (~/.bashrc, ~/.profile, /etc/profile.d)'),
  rule('persistence.scheduled', 3, 3, 'cron, systemd, launchd and init units (files, crontab, at)'),
  rule('persistence.ssh', 3, 3, 'writing SSH material (authorized_keys, ~/.ssh, /etc/ssh, ssh-copy-id)'),
  rule('persistence.git_hook', 3, 3, 'writing git hooks or a repository git configuration'),
  rule('persistence.service', 3, 3, 'enabling services to start on their own (systemctl enable, launchctl load, update-rc.d)'),
  rule('privilege.sudo', 2, 1.5, 'privilege escalation (sudo, doas, pkexec, su, runuser)'),
  rule('privilege.setuid', 4, 4, 'setuid or setgid bits (chmod u+s, 4755, +s)'),
  rule('privilege.capabilities', 4, 4, 'file capabilities (setcap)'),
  rule('privilege.container_escape', 4, 4, 'privileged containers, host namespaces, host root or docker socket mounts'),
  rule('privilege.mount_chroot', 3, 3, 'mount, chroot, nsenter, unshare'),
  rule('privilege.sudoers_pam', 4, 4, 'writing sudoers, doas, PAM, polkit or account databases (visudo)'),
  rule('privilege.accounts', 3, 3, 'creating or changing accounts and groups (useradd, usermod, passwd)'),
  rule('privilege.world_writable', 3, 3, 'making files world-writable (777, o+w)'),
  rule('privilege.chown_root', 3, 3, 'recursive chown to root'),
  rule('privilege.kernel', 3, 3, 'kernel tunables and modules (/proc/sys, sysctl -w, insmod, modprobe)'),
  rule('credential.file', 3, 3, 'reading credential files (SSH keys, cloud credentials, .env, keyrings, history, process memory)'),
  rule('credential.store', 3, 3, 'asking a secret store or CLI for secrets or tokens (keychain, vault, secretsmanager, kubectl get secret)'),
  rule('credential.cloud_metadata', 3, 3, 'cloud instance metadata (169.254.169.254, metadata.google.internal)'),
  rule('credential.search', 3, 3, 'searching the machine for secrets or key files'),
  rule('credential.write', 3, 3, 'writing or deleting credential files'),
  rule('credential.environment', 1, 0.5, 'dumping the environment'),
  rule('supply_chain.remote_pipe_shell', 4, 4, 'remote content run by a shell or interpreter (curl | sh, bash <(curl), sh -c "$(curl)")'),
  rule('supply_chain.remote_install', 3, 3, 'installing packages from URLs, git or unofficial indexes'),
  rule('supply_chain.package_config', 3, 3, 'changing package-manager registries or configuration'),
  rule('supply_chain.download_exec', 3, 3, 'running a file downloaded or decoded in the same command'),
  rule('injection.loader', 4, 4, 'dynamic loader injection (LD_PRELOAD, LD_AUDIT, DYLD_INSERT_LIBRARIES, /etc/ld.so.preload)'),
  rule('injection.path_hijack', 3, 3, 'PATH or library path putting a temporary, relative or unresolved directory first'),
  rule('injection.environment', 3, 3, 'environment that runs code (BASH_ENV, PROMPT_COMMAND, NODE_OPTIONS --require, GIT_SSH_COMMAND, ...)'),
  rule('injection.alias', 3, 3, 'redefining common commands (alias sudo=..., a function named ls)'),
  rule('injection.git_config', 3, 3, 'git configuration that runs code (core.hooksPath, core.sshCommand, core.fsmonitor, alias !cmd)'),
  rule('evasion.history', 3, 3, 'erasing or disabling shell history'),
  rule('evasion.logging', 3, 3, 'deleting logs or stopping audit and logging'),
  rule('evasion.security_tools', 3, 3, 'disabling firewalls or mandatory access control'),
  rule('evasion.crontab_remove', 3, 3, 'removing every cron job (crontab -r)'),
  rule('evasion.kill_init', 4, 4, 'signalling init or every process (kill 1, kill -9 -1, killall5)'),
  rule('evasion.attributes', 3, 2.5, 'changing file attributes (chattr)'),
  rule('discovery.offensive_tool', 3, 3, 'offensive tooling: password crackers, credential dumpers, exploit frameworks, privilege-escalation scanners'),
  rule('discovery.network_scan', 2, 1.5, 'network scanning and sniffing (nmap, masscan, tcpdump)'),
  rule('self.ledger_files', 3, 3, "reading the ledger's own installation (.ledger/, keys, configuration)"),
  rule('self.ledger_tamper', 4, 4, "changing the ledger's installation, stopping its processes or overriding its LEDGER_* environment"),
  rule('self.ledger_cli', 3, 3, 'running the ledger CLI (other than verify-chain, help, gate evaluate/bench)'),
  rule('system.write', 3, 3, 'writing under /etc, /usr, /boot, /sys or other system trees'),
  rule('execution.pipe_to_shell', 3, 2.5, 'text that is not a literal piped into a shell or interpreter'),
  rule('execution.inline_code', 1, 0.5, 'inline code for an interpreter (python -c, node -e), read for commands, paths and network use'),
  rule('uninspectable.parse_failure', 3, 3, 'a command the shell parser cannot read'),
  rule('uninspectable.indirection', 3, 3, 'a command word taken from a variable or a substitution'),
  rule('uninspectable.eval', 3, 3, 'eval, or source of text the gate cannot read'),
  rule('uninspectable.decoded_payload', 3, 3, 'decoded or obfuscated payloads (base64 -d | sh, exec(b64decode(...)))'),
  rule('uninspectable.process_substitution', 3, 3, 'process substitution <(...) / >(...)'),
  rule('uninspectable.depth', 3, 3, 'commands nested deeper than the gate reads'),
  rule('money.amount_low', 1, 0.5, 'an amount of money from 100 to 999 (USD or equivalent)'),
  rule('money.amount_medium', 2, 1.5, 'an amount of money from 1,000 to 9,999'),
  rule('money.amount_high', 3, 3, 'an amount of money of 10,000 or more'),
  // Version 4 (appended: the indexes of the rules above, and so version 2 and 3 reasons, stay as they were).
  rule('impact.resource_hijacking', 3, 3, 'crypto miners (xmrig, cpuminer, ...), their container images and stratum pool URLs'),
  rule('money.payment_command', 3, 3, "a payment provider's CLI creating or changing refunds, payouts, transfers, charges or payments (stripe ...); from version 5 also its HTTP API called directly (curl to api.stripe.com/v1/transfers, ...)"),
  // Version 5 (appended: the indexes of the rules above, and so the reasons of versions 2 to 4, stay as they were).
  rule('exfiltration.public_exposure', 3, 3, 'making stored data public: a public ACL on an upload or a bucket, a snapshot or image shared with everyone, a bucket opened to allUsers'),
  rule('credential.key_creation', 3, 3, 'creating long-lived credentials: service-account keys, access keys, service-principal secrets'),
  rule('execution.remote_command', 3, 3, "running commands on machines through a cloud's control plane (aws ssm send-command, az vm run-command, startup scripts); the payload is read too"),
  rule('destructive.sql_unbounded', 3, 3, 'an UPDATE or DELETE without a WHERE clause (or with one that holds for every row), through a database tool or client'),
  rule('money.crypto_transfer', 3, 3, 'moving crypto-currency from a wallet (cast send --value, solana transfer, bitcoin-cli sendtoaddress, ...)'),
  rule('supply_chain.ci_workflow', 3, 3, "a CI workflow that hands its secrets out (toJSON(secrets), a secret sent in a request) or runs a pull request's code with them (pull_request_target checking out the head), or puts event text into a shell"),
  rule('supply_chain.dependency_source', 3, 3, 'a dependency pointed at a git fork, a URL or an unofficial index, or its checksum check turned off (edited manifests, GOSUMDB=off, GOPROXY over http)'),
  rule('privilege.local_exploit', 3, 3, 'building and running a local exploit: a program compiled into a temporary directory and run on a setuid program, or a source named as an exploit'),
  rule('privilege.control_plane', 3, 3, "a shell or file copy in the cluster's control plane (kubectl exec/cp/attach/debug into kube-system or etcd, API server, controller or scheduler pods)"),
  rule('impact.data_encrypted', 4, 4, 'encrypting files and deleting the originals, file after file (find -exec, xargs, loops): the shape of ransomware'),
  rule('exfiltration.secret_in_message', 3, 3, 'a secret (a connection string with its password, a private key, a provider token) in what a messaging, posting or sending tool sends'),
  // Version 6 (appended: the indexes of the rules above, and so the reasons of versions 2 to 5, stay as they were).
  rule('execution.database_program', 4, 4, 'a database statement that runs a program or shell on the server or client (COPY ... PROGRAM, xp_cmdshell, sys_exec, untrusted procedural languages, psql \\!, sqlite .shell); the program is read too'),
  rule('privilege.database_grant', 3, 3, 'a database statement that grants privileges or roles (GRANT, CREATE/ALTER USER or ROLE, role-membership procedures, an UPDATE or INSERT that sets a role, admin flag or permission)'),
  rule('privilege.repository_authority', 3, 3, "a tool call that gives authority over code hosting or weakens its protection (adding collaborators or members with write or admin, deploy keys, branch protection or rulesets removed or relaxed)"),
  rule('exfiltration.file_attachment', 3, 3, 'a sending tool attaching a local file that holds data or secrets (exports, dumps, spreadsheets, databases, archives, key and credential files)'),
  rule('exfiltration.bulk_message', 3, 3, 'a message or mail sent to many recipients at once (a list or everyone address, dozens of recipients, a campaign, segment or audience)'),
  rule('execution.production_shell', 3, 3, 'an interactive shell, attach or debug session in a production workload (kubectl exec -it / attach / debug in a production namespace or context)'),
  rule('destructive.infrastructure', 3, 3, 'an infrastructure tool destroying what it manages without a human review (terraform/tofu/pulumi destroy or apply -destroy with auto-approve; a structured apply with destroy and auto_approve)'),
  // Version 7 (appended: the indexes of the rules above, and so the reasons of versions 2 to 6, stay as they were).
  rule('persistence.deferred_payload', 3, 3, 'text written where it will run later (a file, a startup or build file, a notebook cell, an editor command) holding fetch-and-run or a reverse shell'),
  rule('injection.transport_trust', 3, 3, 'TLS verification turned off, or traffic or packages routed through a proxy, registry or index at a public IP or an unknown host (HTTPS_PROXY, npm_config_registry, PIP_INDEX_URL, GOPROXY, ...)'),
  rule('supply_chain.lockfile_edit', 3, 3, 'a lockfile edited by hand (Edit, Write, sed -i, a redirection) instead of by its package manager'),
  rule('supply_chain.build_source', 3, 3, "an edit that changes where a build's code comes from (a Dockerfile's FROM image, a CI workflow's uses:, image: or include reference)"),
  rule('network.ip_literal', 2, 1.5, 'a URL or host:port at a public IP address literal (not loopback, private or link-local)'),
  rule('execution.system_automation', 3, 3, 'AppleScript or JXA through osascript (do shell script, System Events, login items): what it runs is not read'),
  rule('execution.editor_escape', 3, 3, "an editor run with commands that escape to a shell (vim -c '!cmd', :terminal, system()); the inner command is read too"),
  rule('context.production_command', 1, 1, 'a database or migration task run with a production environment prefix (RAILS_ENV=production, NODE_ENV=production, ...)'),
  // Version 8 (appended: the indexes of the rules above, and so the reasons of versions 2 to 7, stay as they were).
  rule('supply_chain.registry_authority', 3, 3, "changing who owns or what is published in a package registry (npm unpublish, owner, deprecate, dist-tag, access, team; gem and cargo yank and owner)"),
  rule('exfiltration.remote_redirect', 3, 3, "a git remote's URL or push URL changed, or URLs rewritten (git remote set-url, git config remote.*.url|pushurl, url.*.insteadOf): where the code goes next"),
  rule('supply_chain.lifecycle_script', 3, 3, 'a package lifecycle script (preinstall, install, postinstall, prepare, prepublish, prepack) added, or set to fetch, evaluate or decode, by an edit of package.json or npm pkg set'),
  rule('exfiltration.capture_url', 3, 3, 'a URL at a request-capture, paste, file-drop or tunnel service (webhook.site, requestbin, pipedream, ngrok, interactsh, oast, pastebin, transfer.sh, ...), or carrying an encoded blob that decodes to text'),
  rule('exfiltration.secret_argument', 3, 3, 'a secret-bearing variable ($GITHUB_TOKEN, $*_SECRET, $*_API_KEY, $*PASSWORD) handed to a package runner, or to an HTTP client bound for a host that is not the secret\'s own'),
  rule('supply_chain.remote_runner', 3, 3, 'a package runner told to fetch and run, without asking, a package of no known publisher at its latest version (npx -y pkg@latest)'),
  rule('supply_chain.typosquat', 3, 3, 'installing a package one or two edits from a popular one (crossenv, reqeusts) or a release known to have been compromised (event-stream@3.3.6, ua-parser-js@0.7.29, rest-client 1.6.13, ...)'),
  // Version 9 (appended: the indexes of the rules above, and so the reasons of versions 2 to 8, stay as they were).
  rule('destructive.app_statement', 3, 3, 'a database statement run through application code or a framework shell (manage.py shell, rails runner, prisma db execute, node -e or python -c calling query/execute) that drops, truncates, changes every row, grants privileges or changes balances'),
  rule('evasion.database_protection', 3, 3, 'a statement that turns a database protection off (DISABLE TRIGGER, DISABLE or NO FORCE ROW LEVEL SECURITY, session_replication_role = replica, DROP POLICY, a role given BYPASSRLS or SUPERUSER)'),
  rule('injection.argument_payload', 3, 3, "an injection payload in a tool's argument: SQL injection shapes, shell command substitution read as the command it runs, or an option smuggled into a value (--output=, --upload-pack, --exec)"),
  rule('persistence.agent_instructions', 3, 3, "an agent instruction file (CLAUDE.md, AGENTS.md, .cursorrules, .cursor/rules, copilot-instructions.md, .windsurfrules, GEMINI.md) written with commands that fetch and run or that tell the agent not to ask for confirmation"),
  rule('evasion.hook_bypass', 3, 3, 'commit or push hooks skipped (git commit -n/--no-verify, git push --no-verify, HUSKY=0), or test and security directories deleted together with a commit'),
  rule('exfiltration.infrastructure_exposure', 3, 3, 'infrastructure as code written to a file that grants administrator rights, exposes data or ports to everyone, or trusts an outside account; or snapshots and images shared with other accounts'),
  rule('exfiltration.personal_data', 3, 3, 'a message carrying personal data (social security numbers, card numbers, lists of named email addresses) or a bulk text or mail with a link to an unknown host'),
  rule('execution.external_plugin', 3, 3, 'a linter or tool told to load rules, plugins or modules from a temporary directory or outside the workspace (--rulesdir, --resolve-plugins-relative-to, --require, --plugin)'),
  // Version 10 (appended: the indexes of the rules above, and so the reasons of versions 2 to 9, stay as they were).
  rule('impact.backup_destroy', 3, 3, 'backups, snapshots or recovery points deleted or pruned (restic forget/prune, borg delete/prune, kopia snapshot delete, rclone purge of a remote, zfs destroy, btrfs subvolume delete, tmutil delete, vssadmin delete shadows, cloud snapshot and backup deletes)'),
  rule('impact.account_governance', 3, 3, "a cloud organization left or dismantled: an account leaving or closed, organization policies detached, deleted or not enforced (aws organizations leave-organization, gcloud org-policies delete, az policy assignment delete)"),
  rule('impact.compute_burst', 3, 3, 'many cloud instances started at once, or accelerator (GPU, TPU) instances: the cost and the shape of resource hijacking'),
  rule('impact.dns_change', 3, 3, 'DNS records, zones or name servers changed (route53 change-resource-record-sets, gcloud dns record-sets, a DNS tool that creates, updates or deletes a record): where names, logins and mail resolve'),
  rule('persistence.agent_config', 3, 3, "a coding agent's own configuration changed through its CLI (claude mcp add, claude config set, codex or gemini mcp add): tool servers and settings the next session runs with"),
  rule('evasion.platform_protection', 3, 3, "an operating system protection turned off or bypassed (Gatekeeper's quarantine attribute removed, spctl --master-disable, csrutil disable, FileVault disabled)"),
  rule('persistence.web_shell', 3, 3, 'code written that hands what a web request carries to a shell, a process or an evaluator (system($_REQUEST[...]), execSync(req.query...)): a web shell or a remote-execution endpoint'),
  rule('collection.mail_forwarding', 3, 3, "a mailbox rule or setting that forwards mail to an address (a filter with forward, auto-forwarding turned on)"),
  rule('impact.phishing_message', 3, 3, 'a message whose text reads as a lure (urgency, an account threat, a credential or prize ask) with a link to an unknown host, or a mass mention (@everyone, <!channel>) with a lure and a link'),
  rule('money.discount', 3, 3, 'a discount, coupon or price rule of half off or more created or changed through a commerce tool'),
  // Version 11 (appended: the indexes of the rules above, and so the reasons of versions 2 to 10, stay as they were).
  rule('privilege.identity_admin', 3, 3, "identity and access changed with administrator reach: MFA factors reset, domain-wide delegation or client grants given, users made admins or owners, management tokens and permission sets assigned (Okta, Auth0, Google Workspace, Salesforce, Consul, Vault, Nomad)"),
  rule('evasion.identity_spoofing', 3, 3, "a commit made under another person's name (GIT_AUTHOR_*/GIT_COMMITTER_* set for the command, git -c user.email=..., --author)"),
  rule('injection.security_weakening', 3, 3, 'code or configuration changed to weaken a security control: a control removed (CSRF, signature verification, sanitising, secure randomness, parameterised SQL), SQL built by interpolation, a request-controlled bypass, a weak secret or a proxy to the metadata service'),
  rule('exfiltration.code_leak', 3, 3, 'code written that sends the whole environment to a network endpoint or writes credentials (authorization headers, passwords, tokens) to logs'),
  rule('impact.public_post', 3, 3, "a post published in the organization's name on a public network (X/Twitter, LinkedIn, Mastodon, Reddit, Bluesky, ...)"),
  rule('money.card_issuance', 3, 3, 'a payment card issued or its spending limit set or raised through a finance tool'),
  // Version 12 (appended: the indexes of the rules above, and so the reasons of versions 2 to 11, stay as they were).
  rule('impact.retention_bypass', 3, 3, 'object lock, legal hold or governance retention bypassed or removed (--bypass-governance-retention, a legal hold set OFF, the lock configuration replaced): data kept by law or policy deleted'),
];

/** Index of each rule of {@link COMMAND_RULES}, by id. */
export const COMMAND_RULE_INDEX: ReadonlyMap<string, number> = new Map(COMMAND_RULES.map((r, i) => [r.id, i]));

/** The index of a rule id; throws at load for an id not in the table (a typo must fail loudly). */
export function ruleIndex(id: string): number {
  const index = COMMAND_RULE_INDEX.get(id);
  if (index === undefined) throw new Error(`no command rule ${id}`);
  return index;
}
