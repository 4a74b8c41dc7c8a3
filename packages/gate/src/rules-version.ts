/**
 * Versions of the gate's rules (classifier tables, precedence, thresholds).
 * A classification and a decision name the version that made them
 * (`rulesVersion`; absent on statements written before versions existed,
 * which means 1). The project keeps every released version: `verify-chain`
 * replays each decision with the version it names, so tuning a weight or
 * adding a rule is a new version and never makes an old bundle fail.
 *
 * Version 2 reads commands, paths and tools by meaning (command-rules.ts);
 * the rulebook's version 2 also blocks a proposal whose key is revoked.
 * Version 3 is version 2 with the working directory tracked across `cd`,
 * fewer false alarms on everyday commands (`history`, `cat /etc/passwd`, an
 * API token in an Authorization header, `npm publish --dry-run`, reading a
 * certificate) and more paths and programs read (agent hook settings, more
 * shell startup files, browser stores read by sqlite3, `gh gist create`,
 * pushes to a remote added in the same command, recursive re-permissioning
 * of /, timestamp forgery, glob-named programs, deleting `.git`).
 * Version 4 is version 3 with wider reading of options and wrappers: the
 * tty flag of `docker run -it`, options after an rclone destination,
 * escape fields of a pod spec given to `kubectl run --overrides`/`patch`,
 * package uploads by every registry client (twine, gem, poetry, ...),
 * connection-string variables (DATABASE_URL, *_DSN), a decoded value used
 * as an argument, code that evaluates what it downloads (PowerShell IEX),
 * crypto miners, payment providers' CLIs, and an MCP tool named after a
 * program given its argv as an array.
 * Version 5 is version 4 with the classes of the misses on the fourth
 * held-out set read: inline code's string concatenations, home expressions
 * and quote-like literals joined before its shell calls are read, and a
 * socket module plus a spawned shell as a reverse shell; `sh -c BODY _ ARG`
 * read with its positional arguments and every `find -exec` read per match;
 * each wrapper's own options (setsid -f); package runners (npx, npm exec)
 * unwrapped and the ledger's CLI writing authority as tampering; containerd,
 * crictl, LXD and nspawn read as docker; kubectl into the control plane and
 * manifests applied from here-documents; cloud calls that publish data, mint
 * keys, copy a bucket into another or run commands remotely (their payload
 * read); HTTP DELETE on data stores and payment APIs through curl; statements
 * that change every row; crypto-wallet sends; CI workflows, dependency
 * manifests and build scripts by their content; dependency sources and
 * checksum bypasses in variables; compiled exploits; files encrypted then
 * deleted per match; zsh's sockets; secrets in what messaging tools send.
 * Its rules are appended to COMMAND_RULES (command-rules.ts).
 * Version 6 is version 5 with the classes of the misses on the fifth
 * held-out set read: interpreters and editors fed their program on standard
 * input (Tcl's and Expect's `exec`/`spawn`, ed's and ex's `!` commands, the
 * shell escapes of database and file-transfer clients); archivers that delete
 * their inputs (tar --remove-files, zip -m, 7z -sdel); a symbolic link made
 * earlier in the same command followed by a delete through it; a find
 * action judged by the filters of its own branch (not a `-prune` branch
 * beside it); `git rm` read with its own options (`git rm -rf .`); package
 * scripts set from the command line (npm pkg set scripts.*) read as scripts;
 * database statements that run programs or grant privileges; interactive
 * shells into production workloads; tools that give authority over code
 * hosting or relax its protection; sending tools that attach data files or
 * mail many recipients; secrets in a fetched URL (percent-encoded too);
 * infrastructure tools destroying with auto-approve; the ledger's own CLI
 * allowed when it only reads (status, grant list, grants trail, key list).
 * Its rules are appended to COMMAND_RULES (command-rules.ts).
 * Version 7 is version 6 with the classes of the misses on the sixth
 * held-out set read, on every surface (a command line, a file tool's path
 * and content, any tool's strings at any depth, argument names too;
 * call-text-rules.ts): content that will run later (fetch-and-run or a
 * reverse shell written to a file; editor, terminal and desktop startup
 * files; build files); environment that loads code, routes traffic through
 * a proxy or registry at a public IP or unknown host, or turns TLS off (a
 * shell prefix, an export written to .envrc, an `env` object, a
 * `{name, value}` pair); lockfiles edited by hand, a Dockerfile's FROM or a
 * workflow's `uses:` changed to another source, installs from a URL or an
 * archive in a dependency tool's fields; URLs at a public IP literal; a
 * credential file in a call that sends; deletes, cleanups and moves of the
 * home directory, its dot trees and system roots, or of a project to
 * /dev/null; osascript; editors' shell escapes; cloud calls minting keys and
 * pod manifests taking the host in any tool's fields; framework database
 * tasks that destroy data and a production prefix on a database task; and a
 * code tool's plain Python that only reads project files read as code, not
 * as a shell line (plain-python.ts).
 * Its rules are appended to COMMAND_RULES (command-rules.ts).
 * Version 8 is version 7 with the classes of the misses on the seventh
 * held-out set read, on every surface (rules-v8.ts): an argv given as an
 * array read as the command it runs (its program from the first element or
 * the tool's CLI word) and an `env` object setting LEDGER_* as tampering;
 * the root-key directory .ledger-root-keys/ as the ledger's own; keychain
 * reads, /proc/<pid>/environ and file searches whose pattern names key and
 * credential files; a brace expansion in command position expanded and read;
 * interpreters evaluating decoded data (perl eval pack, ruby decode64, ...);
 * registry and repository authority (npm unpublish/owner/deprecate/
 * dist-tag/access, gem and cargo yank and owner, gh pr merge --admin,
 * approving reviews, gh api writes to collaborators, protection, hooks, keys,
 * secrets and permissions; a git remote's URL changed); package-manager
 * configuration pointing at another source (composer repos, poetry and
 * nuget sources, bundler mirrors, conda channels); package lifecycle scripts
 * added or set to fetch or evaluate; making things public or shared with
 * anyone; URLs at capture, paste and tunnel services or carrying an encoded
 * blob; secrets handed to package runners and HTTP clients bound elsewhere;
 * `npx -y` of an unknown package at latest; typosquats and compromised
 * releases. Version 8 also allows `git branch -d` (a delete git refuses for
 * unmerged work) and does not read a payment provider's read-only tools
 * (search, get, list, documentation) as a financial operation.
 * Its rules are appended to COMMAND_RULES (command-rules.ts).
 * Version 9 is version 8 with the classes of the misses on the eighth
 * held-out set read, on every surface (rules-v9.ts): statements run through
 * application code and framework shells (manage.py shell, rails runner,
 * prisma db execute, node -e and python -c calling query/execute) judged by
 * the SQL rules; statements that turn database protections off; injection
 * payloads in any tool's arguments (SQL injection shapes, command
 * substitution, options smuggled into values); relative traversal resolved
 * before the path classes; writes into .git internals; kubeconfig and
 * admin.conf files as credentials and `gh ... --body-file` of a credential as
 * a send; infrastructure as code granting admin, public exposure or outside
 * trust, and snapshots shared with accounts; personal data and phishing in
 * messages; agent instruction files made to fetch-and-run or skip
 * confirmation; hook bypass; machinectl, run0 and systemd-run as root;
 * linters loading plugins from temporary directories; notebooks running
 * decoded data; merges through MCP tools and hard-coded token comparisons
 * added to auth checks. Version 9 also allows a search of the project's
 * source for a credential word and a numeric `tokens` argument.
 * Its rules are appended to COMMAND_RULES (command-rules.ts).
 * Version 10 is version 9 with the classes of the misses on the ninth
 * held-out set read, on every surface (rules-v10.ts): backups, snapshots and
 * recovery points deleted; a cloud organization left or its policies
 * dismantled; many or GPU instances started at once; DNS records and zones
 * changed (CLIs and DNS tools); a coding agent's own configuration changed
 * through its CLI (claude mcp add); operating system protections turned off
 * (quarantine attributes, spctl, csrutil); direct container-runtime access on
 * a node (crictl exec, ctr run) as control-plane access; inline code that
 * deletes a home or system tree (perl -e remove_tree("/home/dev")); more
 * statements database clients drop (DROP KEYSPACE, ...); web shells and
 * remote-execution endpoints written into code; workflows newly triggered by
 * pull_request_target or workflow_run; template injection in any tool's
 * field; mail forwarding rules; lure messages with links; discounts of half
 * off or more. Version 10 also allows keys and certificates generated into
 * the project's own tree, reads of source files named for what they handle
 * (password-strength.ts) and a code search for a credential word.
 * Its rules are appended to COMMAND_RULES (command-rules.ts).
 * Version 11 is version 10 with the classes of the misses on the tenth
 * held-out set read, on every surface (rules-v11.ts): code and configuration
 * edits that weaken a security control (a control removed, SQL built by
 * interpolation, a request-controlled bypass, a weak secret, a proxy to the
 * metadata service) or leak (the environment sent out, credentials logged);
 * identity and access changed with administrator reach through SaaS tools
 * and CLIs (MFA factors reset, domain-wide delegation, client grants, admin
 * users, management tokens, permission sets); audit trails narrowed or
 * deleted (CloudTrail event selectors, diagnostic settings, log streams and
 * sinks, audit-log API writes); orchestrators and secret stores purged
 * (nomad job stop -purge, vault secrets disable, argocd app delete);
 * networks and databases exposed to everyone; BigQuery and InfluxDB data
 * removed; database dumps streamed to buckets; secrets pushed to remote
 * repositories; bulk sends with links to unknown hosts; public posts; card
 * issuance; third-party Homebrew taps and Nix caches trusted without
 * signatures; agent instruction files that hide things from the user or
 * inject remote scripts; commits under another person's name. Version 11
 * also allows `kubectl port-forward` on loopback.
 * Its rules are appended to COMMAND_RULES (command-rules.ts).
 * Version 12 is version 11 with the classes of the misses on the eleventh
 * held-out set read, on every surface (rules-v12.ts): code edits that lower
 * a strength setting (iterations, rounds, key size), turn a check off or an
 * exemption on, add a broken mode or protocol, unsafe deserialization, any
 * origin with credentials, permitAll or dropped error reports, or remove a
 * guard (a refusal status, a redirect or private-address check, a row lock,
 * a role check); security tests skipped; the environment sent out from any
 * language; new dependency and hook sources in build files (Gradle, Maven,
 * NuGet, pre-commit, ...); commands sent by fleet runners (salt cmd.run,
 * ansible -m shell/file, pdsh, clush, pssh) read as commands; PowerShell
 * recursive deletes of the home directory or a root; Kafka topics deleted
 * and offsets reset; S3 lifecycle expiration and retention bypass; Lambda
 * URLs without auth; MFA devices removed; Keycloak and GitLab admin grants;
 * aws-auth edits; Pod Security set to privileged; CA-signed SSH
 * certificates; remote Deno scripts with permissions, `bun pm trust --all`,
 * Mix archives and Helm repositories over plain HTTP; more statements that
 * destroy data (DROP COLUMN, mutations deleting every row, VACUUM RETAIN 0,
 * DROP SCHEMA) on every surface; redis keys deleted by scan; cgroup release
 * agents written; SQL injection in a filter of any tool; code execution and
 * LDAP password attributes in tools' fields; monitoring muted everywhere;
 * files shared externally; a user's login email changed; access policies
 * opened to everyone; users added to admin groups; payment-redirection
 * messages. Version 12 also allows dropping a table of a local test
 * database, mkcert certificates written into the project and source files
 * of typed languages named only for a credential word (passwords.ts).
 * Its rules are appended to COMMAND_RULES (command-rules.ts).
 * Version 13 is version 12 with the classes of the misses on the twelfth
 * held-out set read, on every surface (rules-v13.ts), all reported by
 * existing rules: alias bodies read as commands; Windows Defender turned off
 * or told to skip paths; payroll and payout bank details, bypass codes and
 * access policies written through HTTP clients, and CI variables read;
 * queue and topic policies open to everyone, GKE control planes open,
 * EC2 user data replaced, EBS default encryption and KMS keys disabled,
 * SSO assignments; Heroku, Fly, Vercel, Netlify, Render and Railway apps
 * destroyed and members added; Neo4j, Firestore, etcd, redis stream and
 * Supabase storage data removed; git submodules added from a URL;
 * instructions planted for AI agents in files, memory, notes and docs
 * tools; editor settings that approve tools or run tasks automatically;
 * secret scanners told to ignore everything; code owners removed; webhook
 * signature, private-address and field allow-list checks removed; security
 * headers turned off; mass assignment; auth functions short-circuited; rate
 * limits raised tenfold; notebooks posting data frames out; prototype
 * pollution keys, options in path fields and calling spreadsheet formulas.
 */
export const RULES_VERSIONS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13] as const;

/** One released rules version. */
export type RulesVersion = (typeof RULES_VERSIONS)[number];

/** The version new decisions are made with. */
export const LATEST_RULES_VERSION: RulesVersion = 13;

/** True when `value` names a released rules version. */
export function isRulesVersion(value: unknown): value is RulesVersion {
  return typeof value === 'number' && (RULES_VERSIONS as readonly number[]).includes(value);
}
