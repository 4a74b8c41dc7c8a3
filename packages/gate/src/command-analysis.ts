import { hasOption, programName, readOptions, type Options } from './argv.js';
import { ANALYSIS_SLOTS, analysis, analysisSlot } from './analysis-version.js';
import { programFindingsV8 } from './rules-v8.js';
import { programFindingsV10 } from './rules-v10.js';
import { lineFindingsV11, programFindingsV11 } from './rules-v11.js';
import { lineFindingsV12, localTestDatabase, programFindingsV12, projectCertificate } from './rules-v12.js';
import { lineFindingsV13, programFindingsV13 } from './rules-v13.js';
import { lineFindingsV9, programFindingsV9 } from './rules-v9.js';
import { BoundedCache } from './bounded-cache.js';
import { inspectCode } from './code-analysis.js';
import { DEPENDENCY_MANIFEST, SEVERE_IN_SCRIPTS, kubernetesManifestFindings, manifestFindings, writtenContentFindings } from './file-content-rules.js';
import { sqlFindings } from './sql-rules.js';
import { ruleIndex } from './command-rules.js';
import { Findings, R } from './findings.js';
import { PathClass, looksLikePath, pathFacts } from './path-model.js';
import { touchPath } from './path-rules.js';
import { isDecoderCommand, isFetchCommand, parseShell, plainWord, type Assignment, type Redirect, type SimpleCommand, type Word } from './shell-syntax.js';
import { touchUrl, urlsIn } from './url-rules.js';

/**
 * Rules version 2's reading of shell commands: each simple command of the
 * parse (shell-syntax.ts) is unwrapped (sudo, env, nohup, timeout, nice,
 * xargs, find -exec, busybox, `sh -c`, ssh, docker and kubectl exec, ...) and
 * judged by its program, its options in any spelling and the classes of the
 * paths it touches (path-rules.ts). What cannot be read is a finding of its
 * own (uninspectable.*), never a pass.
 */

/** Deepest nesting of command strings read (`bash -c "sh -c '...'"`); deeper is uninspectable. */
export const MAX_SHELL_DEPTH = 5;
/** Most wrappers peeled off one command. */
const MAX_UNWRAP = 16;

/** What one script run has produced so far (files downloaded or decoded), for "download then run". */
interface ScriptFacts {
  readonly produced: Set<string>;
}

/** One command as the analysis sees it (argv may be an unwrapped tail of the parsed one). */
interface Command {
  readonly argv: readonly Word[];
  readonly redirects: readonly Redirect[];
  readonly pipeFrom: readonly SimpleCommand[] | null;
}

const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'ash', 'mksh', 'fish', 'csh', 'tcsh', 'yash', 'posh', 'rbash']);
const INTERPRETERS = new Set(['python', 'pypy', 'perl', 'ruby', 'node', 'nodejs', 'bun', 'deno', 'php', 'lua', 'luajit', 'osascript', 'rscript', 'pwsh', 'powershell', 'irb', 'jshell', 'tclsh', 'wish', 'expect', 'groovy', 'scala', 'julia']);
const AWKS = new Set(['awk', 'gawk', 'mawk', 'nawk', 'busybox-awk']);
const EDITORS = new Set(['vi', 'vim', 'nvim', 'nano', 'emacs', 'ed', 'ex', 'pico', 'joe', 'micro', 'mcedit', 'kate', 'gedit', 'code', 'subl']);
const HISTORY_VARIABLES = new Set(['HISTFILE', 'HISTSIZE', 'HISTFILESIZE', 'SAVEHIST', 'HISTCONTROL', 'HISTIGNORE']);
const CODE_VARIABLES = new Set(['BASH_ENV', 'ENV', 'PROMPT_COMMAND', 'PS0', 'PS4', 'ZDOTDIR', 'PERL5OPT', 'RUBYOPT', 'PYTHONSTARTUP', 'PYTHONINSPECT', 'GIT_SSH_COMMAND', 'GIT_SSH', 'GIT_EXEC_PATH', 'GIT_PROXY_COMMAND', 'GIT_ASKPASS', 'SSH_ASKPASS', 'SUDO_ASKPASS', 'GIT_EXTERNAL_DIFF', 'GIT_PAGER', 'PAGER', 'MANPAGER', 'EDITOR', 'VISUAL', 'GIT_EDITOR', 'LESSOPEN', 'LESSCLOSE', 'BROWSER', 'JAVA_TOOL_OPTIONS', '_JAVA_OPTIONS', 'JDK_JAVA_OPTIONS', 'DOTNET_STARTUP_HOOKS', 'GIT_CONFIG_PARAMETERS', 'GIT_TEMPLATE_DIR']);
const LOADER_VARIABLES = new Set(['LD_PRELOAD', 'LD_AUDIT', 'DYLD_INSERT_LIBRARIES', 'LD_LIBRARY_PATH', 'DYLD_LIBRARY_PATH', 'DYLD_FRAMEWORK_PATH', 'DYLD_FALLBACK_LIBRARY_PATH']);
const SEARCH_PATH_VARIABLES = new Set(['PATH', 'PYTHONPATH', 'NODE_PATH', 'PERL5LIB', 'RUBYLIB', 'GEM_PATH', 'CLASSPATH', 'GOPATH']);
const SECURITY_SERVICES = /^(?:auditd|rsyslog|syslog|syslog-ng|systemd-journald|journald|firewalld|ufw|apparmor|selinux|falco|osqueryd|auditbeat|filebeat|wazuh-agent|ossec|crowdstrike|falcon-sensor|sentinelone|clamav-daemon|clamd|fail2ban|nftables|iptables|netfilter-persistent|aide|tripwire|snort|suricata|sysmon|elastic-agent|datadog-agent|splunkd|splunkforwarder|amazon-cloudwatch-agent|google-fluentd|td-agent|fluentd|fluent-bit|vector|promtail)(?:\.service)?$/;
const CRITICAL_PROCESSES = /^(?:init|systemd|sshd|auditd|rsyslogd|journald|systemd-journald|dockerd|containerd|kubelet|cron|crond)$/;
const CREDENTIAL_NAME_PATTERN = /(?:^|[*/])(?:id_(?:rsa|dsa|ecdsa|ed25519)\*?|\*?\.pem|\*?\.key|\*?\.p12|\*?\.pfx|\*?\.kdbx|\.env\*?|\*?\.env|credentials\*?|\.netrc|\.git-credentials|\.pgpass|wallet\.dat|shadow|\*?secret\*?|\*?password\*?|\*?passwd\*?|\*?token\*?|\.aws|\.ssh|authorized_keys|\*?\.ovpn|\*?\.jks|\*?\.keystore|\*?\.tfstate|\*?\.kube\*?|config\.json|\*?history)$/i;
const SECRET_SEARCH_TERMS = /(?:password|passwd|secret|api[_-]?key|apikey|access[_-]?key|private[_ -]key|begin (?:rsa|openssh|ec|dsa|pgp)|aws_secret|aws_access|token|credential|bearer|xox[bp]-|ghp_|sk_live|akia)/i;
/** A variable whose name says it holds a secret, as it appears in a word (`$AWS_SECRET_ACCESS_KEY`). */
const SECRET_VARIABLE = /\$\{?[A-Za-z_]*(?:KEY|SECRET|TOKEN|PASSWORD|PASSWD|PASS|CREDENTIALS?|AUTH|PRIVATE)[A-Za-z_0-9]*\}?/;
/** The same, as a bare name (`printenv GITHUB_TOKEN`). */
const SECRET_NAME = /^[A-Za-z_]*(?:KEY|SECRET|TOKEN|PASSWORD|PASSWD|PASS|CREDENTIALS?|AUTH|PRIVATE)[A-Za-z_0-9]*$/;
const SAFE_SINK = /^(?:\/dev\/(?:null|stdout|stderr|tty|fd\/\d+)|&?\d|-)$/;

/** `values` without `t`. */
function withoutTty(values: ReadonlySet<string>): ReadonlySet<string> {
  return new Set([...values].filter((v) => v !== 't'));
}

function word(text: string): Word {
  return plainWord(text);
}

function joinWords(words: readonly Word[]): string {
  return words.map((w) => w.text).join(' ');
}

function anyDynamic(words: readonly Word[]): boolean {
  return words.some((w) => w.dynamic);
}

/** True when a word names a host-side location (`host:path`, `user@host:path`, `rsync://`). */
function isRemoteSpec(text: string): boolean {
  if (text.startsWith('rsync://') || text.startsWith('sftp://') || text.startsWith('scp://')) return true;
  if (text.startsWith('/') || text.startsWith('./') || text.startsWith('~')) return false;
  return /^(?:[^/\s:@]+@)?[a-z0-9][a-z0-9.-]*:/i.test(text) && !/^[a-z]+:\/\//i.test(text);
}

/** Version 3: well-known prefixes of provider keys and key files, searched for on their own. */
const SECRET_PREFIXES_V3 = /(?:^|[^a-z])(?:sk-|sk_test|rk_live|glpat-|gho_|ghs_|github_pat_|aiza|ya29\.|xapp-|npm_|pypi-|hf_|-----begin)/i;

/** Headers that carry the caller's own credential to the service it calls (version 3: sending them is authentication, not exfiltration). */
const AUTH_HEADER = /^\s*(?:authorization|proxy-authorization|x-api-key|api-key|apikey|x-auth-token|x-access-token|private-token|x-goog-api-key|x-github-token|x-gitlab-token|x-vault-token)\s*:/i;

/** Version 4: rules appended after version 3 (command-rules.ts). */
const RESOURCE_HIJACKING = ruleIndex('impact.resource_hijacking');
const PAYMENT_COMMAND = ruleIndex('money.payment_command');
/** Version 4: crypto-mining programs, by name. */
const MINER_PROGRAMS = /^(?:xmrig(?:-[a-z]+)?|xmr-stak(?:-[a-z]+)?|minerd|cpuminer(?:-[a-z]+)?|cgminer|bfgminer|ethminer|t-rex|nbminer|lolminer|gminer|phoenixminer|nanominer|srbminer(?:-multi)?|teamredminer|ccminer|nheqminer|kawpowminer|bzminer|wildrig(?:-multi)?)$/;
/** Version 4: a miner named in an argument (a container image, a path, a download). */
const MINER_WORD = /(?:^|[/:=@])(?:xmrig|xmr-stak|cpuminer|minerd|ethminer|nbminer|lolminer|phoenixminer|srbminer|teamredminer|ccminer|nheqminer|kawpowminer|t-rex-miner)(?:[-_][a-z0-9.]+)*(?:[:@/]|$)/i;
/** Version 4: mining pools (stratum URLs, well-known pool hosts). */
const MINING_POOL = /\bstratum\d?\+(?:tcp|ssl|tls):\/\/|(?:^|[/@.])(?:minexmr|supportxmr|nanopool|2miners|f2pool|hashvault|moneroocean|nicehash|ethermine|unmineable|herominers|c3pool|xmrpool|viabtc)\.(?:com|org|net|pro|stream|eu)(?::\d+)?(?:\/|$)/i;
/** Version 4: variables holding connection strings, which carry their password (DATABASE_URL, SENTRY_DSN, MONGO_URI). */
const CONNECTION_NAME = /^(?:[A-Za-z0-9_]*_)?(?:DATABASE|DB|REDIS|MONGO(?:DB)?|POSTGRES(?:QL)?|PG|MYSQL|MARIADB|AMQP|RABBITMQ|BROKER|SENTRY|ELASTICSEARCH|ES|KAFKA|SMTP|MSSQL|SQLSERVER|ORACLE|CLICKHOUSE)_?(?:URL|URI|DSN)$|^(?:[A-Za-z0-9_]*_)?(?:DSN|CONNECTION_STRING|CONN_STR|CONNSTR|CONNECTIONSTRING)$/i;
const CONNECTION_VARIABLE = /\$\{?((?:[A-Za-z0-9_]*_)?(?:DATABASE|DB|REDIS|MONGO(?:DB)?|POSTGRES(?:QL)?|PG|MYSQL|MARIADB|AMQP|RABBITMQ|BROKER|SENTRY|ELASTICSEARCH|ES|KAFKA|SMTP|MSSQL|SQLSERVER|ORACLE|CLICKHOUSE)_?(?:URL|URI|DSN)|(?:[A-Za-z0-9_]*_)?(?:DSN|CONNECTION_STRING|CONN_STR|CONNSTR|CONNECTIONSTRING))\b/i;
/** Version 4: fields of a pod spec that give a pod the host (kubectl run --overrides, patch, create/apply from arguments). */
const POD_ESCAPE = /["']?\b(?:privileged|hostPID|hostIPC|hostNetwork|allowPrivilegeEscalation)["']?\s*:\s*["']?true\b|["']?\bhostPath["']?\s*:\s*\{[^}]*\bpath["']?\s*:\s*["']?\/["']?\s*[,}]/i;
/** Version 4: stripe resources through which money moves, and the verbs that move it. */
const STRIPE_MONEY_RESOURCE = /^(?:refunds?|payouts?|transfers?|transfer_reversals|charges?|payment_intents?|paymentintents|setup_intents|topups?|application_fees|balance_transactions|invoices?|credit_notes|subscriptions?|checkout\.sessions|payment_links?|treasury\.\S+|issuing\.\S+)$/;
const STRIPE_MONEY_VERB = /^(?:create|update|confirm|capture|pay|cancel|reverse|finalize|void|send|post|delete|approve|fund|mark_uncollectible)$/;
/** Version 4: branch names that are shared history (a forced push to them rewrites what others have). */
const SHARED_BRANCH = /^(?:head|main|master|trunk|develop|development|dev|release(?:[/-].*)?|releases\/.*|prod|production|stable|staging|gh-pages|hotfix(?:[/-].*)?)$/i;

/** Options that take a value, for the wrappers of one shared reading (nohup, setsid, time, ...; version 2's set). */
const WRAPPER_OPTIONS: ReadonlySet<string> = new Set(['c', 'f', 'unit', 'p', 'property', 'u', 'uid', 'gid', 'description', 'on-calendar', 'on-boot']);
/** Version 5: each wrapper's own options that take a value (setsid's -c, -f and -w take none). */
const WRAPPER_OPTIONS_V5: ReadonlyMap<string, ReadonlySet<string>> = new Map<string, ReadonlySet<string>>([
  ...['setsid', 'nohup', 'command', 'builtin', 'unbuffer', 'disown', 'chronic', 'ifne', 'dbus-launch', 'catchsegv', 'tsocks'].map((n): [string, ReadonlySet<string>] => [n, new Set()]),
  ['time', new Set(['f', 'o', 'format', 'output'])],
  ['exec', new Set(['a'])],
  ['caffeinate', new Set(['w', 't'])],
  ['proxychains', new Set(['f'])],
  ['proxychains4', new Set(['f'])],
  ['torsocks', new Set(['u', 'p', 'a', 'P', 'user', 'pass', 'address', 'port'])],
  ['fakeroot', new Set(['l', 's', 'i', 'lib', 'faked'])],
]);
/** Version 5: the ledger's CLI as a script run by node (its bin, its built entry point, the package). */
const LEDGER_SCRIPT = /(?:^|\/)(?:ledger\.[cm]?js|services\/ledger\/(?:dist\/)?(?:src\/)?main\.[cm]?js|@agent-ledger\/[^/\s]+\/\S*\.[cm]?js|services\/ledger\/bin\/\S+)$/;
/** Version 5: ledger subcommands that write authority (grants, keys, approvals, a genesis or root) or submit statements. */
const LEDGER_AUTHORITY = /^(?:grant|approve|cosign|key|keygen|register|revoke|reauthorize|genesis|rotate-root|init|setup|submit|move-to-kafka)$/;
/** Version 6: ledger subcommands that only read (status, checks, verification, the grant and key tables). */
const LEDGER_READS = /^(?:verify-chain|verify-receipt|receipts?|trust-root|status|doctor|schemas|completion|help|version)$/;
/** Version 6: ledger command groups whose named actions only read (`ledger grants trail`, `ledger grant list`, `ledger key list`, `ledger gate bench`). */
const LEDGER_READ_ACTIONS: ReadonlyMap<string, RegExp> = new Map([
  ['grants', /^trail$/],
  ['grant', /^list$/],
  ['key', /^list$/],
  ['gate', /^(?:evaluate|bench)$/],
]);
/** Version 6: namespaces, contexts and clusters that name production. */
const PRODUCTION_NAME = /^(?:prod|production|prd|live)$|(?:^|[-_.:/@])(?:prod|production|prd)(?:[-_.:/@]|\d*$)/i;
/** Version 6: programs that run a line of their standard input as a shell command when it begins with `!` (ed, ex, vi's ex mode, ftp clients, gnuplot). */
const BANG_PROGRAMS: ReadonlySet<string> = new Set(['ed', 'red', 'ex', 'vi', 'vim', 'nvim', 'ftp', 'lftp', 'sftp', 'gnuplot']);
/** Version 6: a line of an editor or client script that runs a shell command (`!cmd`, `w !cmd`, `r !cmd`, `:!cmd`, `.,$!cmd`). */
const BANG_LINE = /^\s*:?\s*[0-9.,$%;'a-z+-]{0,16}?\s*(?:(?:w|write|r|read|e|edit)\s*)?!(.+)$/;
/** Version 6: shell calls in an editor or plotting script (`:call system('...')`, gnuplot `system("...")`). */
const SCRIPT_SYSTEM = /\bsystem\s*\(\s*["']([^"'\n]+)["']/g;
/** Version 6: options of tar, zip and 7z that take a value (the archive(...) reading's set). */
const ARCHIVE_VALUES: ReadonlySet<string> = new Set(['f', 'C', 'file', 'directory', 'd', 'o', 'T', 'files-from', 'X', 'exclude-from', 'exclude', 'x', 'i', 'P', 'password', 'to-command', 'use-compress-program', 'I', 'checkpoint-action', 'checkpoint']);
/** Version 6: find's tests that filter what an action is applied to. */
const FIND_FILTER = /^-(?:i?name|i?path|i?regex|wholename|type|mtime|mmin|atime|ctime|newer|size|empty|user|group|perm)$/;
const FIND_NAME_FILTER = /^-(?:i?name|i?path|i?regex|wholename)$/;

/**
 * Version 6: whether the branch of a find expression that holds the action
 * at `at` tests with `filter`. The branch runs back from the action to the
 * `-o` (or `,`) before it at the same nesting; tests in another branch (a
 * `-name x -prune -o ...` beside it) do not restrict the action.
 */
function findBranchTests(args: readonly Word[], at: number, filter: RegExp): boolean {
  let depth = 0;
  for (let i = at - 1; i >= 0; i--) {
    const t = (args[i] as Word).text;
    if (t === ')' || t === '\\)') depth++;
    else if (t === '(' || t === '\\(') {
      if (depth === 0) return false;
      depth--;
    } else if (depth === 0 && (t === '-o' || t === '-or' || t === ',')) return false;
    else if (filter.test(t)) return true;
  }
  return false;
}

/** Version 5: variables that say where dependencies come from or whether they are checked. */
const DEPENDENCY_VARIABLES: ReadonlySet<string> = new Set(['GOSUMDB', 'GONOSUMDB', 'GONOSUMCHECK', 'GONOSUMVERIFY', 'GOINSECURE', 'GOPROXY', 'GOPRIVATE', 'GOFLAGS', 'PIP_INDEX_URL', 'PIP_EXTRA_INDEX_URL', 'PIP_TRUSTED_HOST', 'PIP_FIND_LINKS', 'UV_INDEX_URL', 'UV_EXTRA_INDEX_URL', 'UV_DEFAULT_INDEX', 'UV_INDEX', 'NPM_CONFIG_REGISTRY', 'YARN_REGISTRY', 'YARN_NPM_REGISTRY_SERVER', 'NPM_CONFIG_STRICT_SSL', 'YARN_ENABLE_STRICT_SSL', 'GIT_SSL_NO_VERIFY', 'CARGO_REGISTRIES_CRATES_IO_INDEX', 'BUNDLE_MIRROR__ALL', 'COMPOSER_DISABLE_TLS']);
/** Official package indexes: a dependency variable naming one of these is not a redirection. */
const OFFICIAL_INDEX = /^https:\/\/(?:proxy\.golang\.org|goproxy\.io|goproxy\.cn|pypi\.org|files\.pythonhosted\.org|pypi\.python\.org|registry\.npmjs\.org|registry\.yarnpkg\.com|registry\.npmjs\.com|index\.crates\.io|github\.com\/rust-lang\/crates\.io-index|rubygems\.org)(?:\/|$)/i;

/** Version 5: true when a dependency variable turns checking off or points at an index that is not an official one over https. */
function dependencyVariableUnsafe(name: string, value: string): boolean {
  const v = value.trim();
  if (v === '') return false;
  switch (name) {
    case 'GOSUMDB':
      return /^off$/i.test(v) || !/^(?:sum\.golang\.org|sum\.golang\.google\.cn)/i.test(v);
    case 'GOINSECURE': case 'PIP_TRUSTED_HOST': case 'GIT_SSL_NO_VERIFY': case 'COMPOSER_DISABLE_TLS':
      return !/^(?:0|false|no)$/i.test(v);
    case 'GONOSUMDB': case 'GONOSUMCHECK': case 'GONOSUMVERIFY': case 'GOPRIVATE':
      // A private organisation's modules (github.com/acme/*) skip the public checksum database by design; everything, or a whole host, does not.
      return /^(?:1|true|on)$/i.test(v) || v.split(',').some((entry) => entry === '*' || /^[^/]+$/.test(entry) || /^[^/]+\/\*$/.test(entry));
    case 'GOFLAGS':
      return /(?:^|\s)-insecure\b/.test(v);
    case 'NPM_CONFIG_STRICT_SSL': case 'YARN_ENABLE_STRICT_SSL':
      return /^(?:false|0|no)$/i.test(v);
    default:
      // An index: each entry of a list (GOPROXY=a,b,direct) must be official over https, `direct` or `off`.
      return v.split(/[,|\s]+/).some((entry) => entry !== '' && !/^(?:direct|off)$/i.test(entry) && !OFFICIAL_INDEX.test(entry));
  }
}

/**
 * Version 5: `sh -c BODY NAME ARG...`: the body with `$1`.. `$9`, `$@`, `$*`
 * replaced by the arguments given (when their text is plain: a path,
 * a word), `$0` by NAME. An argument that is itself unresolved leaves its
 * parameter as it is.
 */
function withPositional(body: Word, params: readonly Word[]): Word {
  const plain = (w: Word | undefined): w is Word => w !== undefined && !w.dynamic && /^[A-Za-z0-9_./~:@%+,=-]+$/.test(w.text);
  const text = body.text.replace(/\$(?:\{(\d)\}|(\d)|([@*]))/g, (whole, braced?: string, bare?: string, all?: string) => {
    if (all !== undefined) {
      const rest = params.slice(1);
      return rest.length > 0 && rest.every(plain) ? rest.map((w) => w.text).join(' ') : whole;
    }
    const param = params[Number(braced ?? bare)];
    return plain(param) ? param.text : whole;
  });
  return text === body.text ? body : { ...body, text };
}

/** The source of a `--mount type=bind,src=/,dst=/host` value. */
function mountSource(value: string): string {
  return /(?:^|,)(?:source|src)=([^,]+)/.exec(value)?.[1] ?? '';
}

/** True when mounting `source` into a container gives it the host (its root, system trees, keys, the runtime's socket, /proc, /sys, /dev). */
function mountGivesHost(source: string): boolean {
  const facts = pathFacts(source);
  return source === '/' || /\/(?:docker|containerd|podman)\.sock$/.test(source) || (facts.classes & (PathClass.root | PathClass.system | PathClass.ssh | PathClass.credential | PathClass.ledger | PathClass.kernel)) !== 0 || source === '~' || source.startsWith('/proc') || source.startsWith('/sys') || source.startsWith('/dev');
}

/** Version 5: names of local privilege-escalation exploits and their sources. */
const EXPLOIT_NAME = /(?:^|[/_.-])(?:exploit|xploit|sploit|cve-?\d{4}-?\d+|dirty-?(?:pipe|cow|cred|sock|frag)|pwnkit|overlayfs|privesc|priv-?esc|rootkit|lpe|getroot|rootme|looney-?tunables|baron-?samedit|sudo-?killer|nimbuspwn|gameoverlay|stackrot|full-?nelson)(?:[/_.-]|\d|$)/i;
/** Version 5: setuid programs and account files, the usual targets of a local exploit. */
const SETUID_TARGET = /^\/(?:usr\/)?s?bin\/(?:su|sudo|sudoedit|passwd|pkexec|mount|umount|chsh|chfn|newgrp|gpasswd|fusermount3?|at|crontab|doas|ping)$|^\/etc\/(?:passwd|shadow|sudoers|crontab)$/;
/** Version 5: pods of the cluster's control plane (static pods carry the node's name after a dash). */
const CONTROL_PLANE_POD = /^(?:(?:pods?|po)\/)?(?:kube-system\/)?(?:etcd|kube-apiserver|kube-controller-manager|kube-scheduler|cloud-controller-manager)(?:-|:|$)/;
/** Version 5: wallet subcommands that send (solana transfer, lncli sendpayment, sui client pay, eth.sendTransaction). */
const CRYPTO_SEND = /^(?:transfer|transfer-sui|pay|pay-sui|pay-all-sui|payto|paytomany|broadcast|send|sendcoins|sendpayment|payinvoice|sendmany|keysend|withdraw|sweep_all|sweep_single|withdraw-stake|withdraw-from-vote-account|submit)$|sendtransaction|sendrawtransaction/i;
/** Version 5: compiler options that take a value. */
const COMPILER_VALUES: ReadonlySet<string> = new Set(['o', 'I', 'L', 'l', 'D', 'U', 'x', 'include', 'MF', 'MT', 'target', 'edition', 'crate-type', 'crate-name', 'ldflags', 'gcflags', 'tags', 'mod', 'C']);
const GPG_VALUES: ReadonlySet<string> = new Set(['r', 'recipient', 'o', 'output', 'passphrase', 'passphrase-file', 'passphrase-fd', 'u', 'local-user', 'homedir', 'cipher-algo', 'compress-algo', 'digest-algo', 's2k-cipher-algo', 's2k-digest-algo', 'pinentry-mode', 'trust-model', 'z', 'default-key']);
/** Version 5: ports and host names of data stores that answer HTTP (Elasticsearch/OpenSearch, CouchDB, Solr, InfluxDB, etcd, Consul, ClickHouse, Qdrant, Neo4j, ArangoDB, Couchbase, Milvus). */
const DATA_STORE_PORTS: ReadonlySet<string> = new Set(['9200', '9300', '5984', '8983', '8086', '2379', '4001', '8500', '8123', '6333', '7474', '8529', '8091', '19530', '8108']);
const DATA_STORE_HOST = /(?:^|[.-])(?:es(?:[.-]|\d)|(?:elastic|elasticsearch|opensearch|couch|couchdb|solr|influx|influxdb|etcd|consul|clickhouse|qdrant|weaviate|milvus|neo4j|arangodb|couchbase|meilisearch|typesense)(?:[.-]|\d|$))/;
/** Version 5: payment providers' APIs through which money moves (host and path, lowercase). */
const PAYMENT_API = /^(?:api\.stripe\.com\/v1\/(?:transfers|payouts|refunds|charges|payment_intents|topups|invoices\/[^/]+\/pay|application_fees|treasury|issuing|transfer_reversals|checkout\/sessions|payment_links)|api(?:-m)?(?:\.sandbox)?\.paypal\.com\/v[12]\/(?:payments|checkout\/orders|billing)|(?:connect|api)\.squareup(?:sandbox)?\.com\/v2\/(?:payments|refunds|transfers)|api\.(?:transferwise|wise)\.com\/v\d\/(?:transfers|profiles\/[^/]+\/transfers|quotes)|(?:[a-z0-9-]+\.)?adyen\.com\/\S*(?:payments|payouts|transfers)|api\.razorpay\.com\/v1\/(?:payouts|payments|refunds|transfers)|api\.gocardless\.com\/(?:payments|refunds|payouts)|api\.coinbase\.com\/v2\/accounts\/[^/]+\/transactions|(?:production|sandbox|development)\.plaid\.com\/transfer|api\.mollie\.com\/v2\/(?:payments|refunds)|api\.checkout\.com\/(?:payments|transfers)|api\.mercury\.com\/api\/v1\/account\/[^/]+\/transactions|api\.revolut\.com\/(?:pay|transfer)|api\.braintreegateway\.com\/)/;
/** Version 5: boolean options of aws (every other long option takes a value). */
const AWS_FLAGS: ReadonlySet<string> = new Set(['--recursive', '--dryrun', '--dry-run', '--no-dry-run', '--quiet', '--no-progress', '--delete', '--follow-symlinks', '--no-follow-symlinks', '--only-show-errors', '--exact-timestamps', '--size-only', '--force', '--no-sign-request', '--no-verify-ssl', '--debug', '--no-paginate', '--no-guess-mime-type', '--ignore-glacier-warnings', '--force-glacier-transfer', '--human-readable', '--summarize', '--no-overwrite', '--no-cli-pager', '--no-cli-auto-prompt', '--cli-auto-prompt', '--with-decryption', '--no-with-decryption', '--include-email', '--wait', '--no-include-deprecated']);
/** Version 5: gsutil's options without a value (its -a, -h, -o, -p, -u, -z, ... take one). */
const GSUTIL_FLAGS: ReadonlySet<string> = new Set(['-m', '-r', '-R', '-d', '-D', '-e', '-n', '-c', '-q', '-I', '-v', '-U', '-P', '-J', '-C', '-l', '-b', '-f', '-ch', '--help']);
/** Version 5: gcloud's and az's options without a value, as far as these readings need. */
const CLOUD_FLAGS: ReadonlySet<string> = new Set(['--quiet', '-q', '--verbose', '--async', '--no-wait', '--yes', '-y', '--help', '--debug', '--only-show-errors', '--recursive', '-r', '--no-user-output-enabled', '--tunnel-through-iap', '--internal-ip', '--dry-run', '--all', '--no-public-access-prevention', '--troubleshoot']);
/** Version 5: package runners' options that take a value (npx -p pkg, -c 'command'). */
const RUNNER_VALUES: ReadonlySet<string> = new Set(['p', 'package', 'c', 'call', 'node-options', 'cache', 'userconfig', 'registry', 'w', 'workspace']);
/** Version 5: options of `ctr run` that take a value. */
const CTR_RUN_VALUES: ReadonlySet<string> = new Set(['mount', 'env', 'env-file', 'label', 'runtime', 'runtime-config-path', 'with-ns', 'u', 'user', 'cwd', 'snapshotter', 'memory-limit', 'cpus', 'cpu-quota', 'cpu-period', 'device', 'cap-add', 'cap-drop', 'seccomp-profile', 'apparmor-profile', 'runc-binary', 'pid-file', 'fifo-dir', 'config', 'c', 'gpus', 'platform', 'hostname', 'cgroup', 'annotation', 'rootfs-propagation', 'sandbox', 'cni-config']);

/** Version 5: the commands of an SSM `--parameters` value (`commands=["a","b"]`, `{"commands":["a"]}`, `commands=a,b`). */
function commandsIn(parameters: string): string[] {
  const at = parameters.search(/["']?commands["']?\s*[=:]/i);
  if (at === -1) return [];
  const rest = parameters.slice(at).replace(/^["']?commands["']?\s*[=:]\s*/i, '');
  const quoted = [...rest.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => (m[1] ?? '').replace(/\\(.)/g, '$1'));
  if (quoted.length > 0) return quoted.slice(0, 64);
  return rest.replace(/^\[|\]$/g, '').split(',').slice(0, 64);
}

/** Version 8: the official npm registry as a whole word. */
const OFFICIAL_NPM_REGISTRY = /^https:\/\/registry\.(?:npmjs\.org|yarnpkg\.com)\/?$/;

class Analysis {
  /** Reading for rules version 3 (analysis-version.ts) rather than 2. */
  readonly v3 = analysis.v3;
  /** Reading for rules version 4 (analysis-version.ts). */
  readonly v4 = analysis.v4;
  /** Version 3: the working directory after the `cd`s read so far (null: where the command starts). */
  cwd: string | null = null;
  /** Version 3: git remotes added earlier in the same command. */
  readonly remotes = new Set<string>();
  /** Version 4: variables assigned a decoded value earlier in the same command. */
  readonly decodedVariables = new Set<string>();
  /** Reading for rules version 5 (analysis-version.ts). */
  readonly v5 = analysis.v5;
  /** Version 5: a socket was opened earlier in the same command (zsh's ztcp, zsocket). */
  socketOpened = false;
  /** Version 5: commands run once per match or item (find -exec, xargs, parallel) were read. */
  perMatch = false;
  /** Version 5: programs compiled earlier in the same command (normal paths of their outputs). */
  readonly compiled = new Set<string>();
  /** Version 5: files encrypted earlier in the same command (normal paths of their inputs). */
  readonly encrypted = new Set<string>();
  /** Version 5: text written into files by here-documents earlier in the same command (normal path to text). */
  readonly written = new Map<string, string>();
  /** Reading for rules version 6 (analysis-version.ts). */
  readonly v6 = analysis.v6;
  /** Version 6: symbolic links made earlier in the same command (normal path of the link to its target as written). */
  readonly links = new Map<string, string>();
  /** Reading for rules version 8 (analysis-version.ts). */
  readonly v8 = analysis.v8;
  /** Reading for rules version 10 (analysis-version.ts). */
  readonly v10 = analysis.v10;
  /** Reading for rules version 12 (analysis-version.ts). */
  readonly v12 = analysis.v12;
  /** Reading for rules version 13 (analysis-version.ts). */
  readonly v13 = analysis.v13;

  constructor(
    readonly findings: Findings,
    readonly script: ScriptFacts,
  ) {}

  /** Version 3: follows `cd`/`pushd`/`popd` so that later relative paths resolve where they will run. */
  changeDirectory(argv: readonly Word[]): void {
    const first = argv[0];
    if (first === undefined || first.dynamic) return;
    if (first.text === 'popd') {
      this.cwd = '$unresolved';
      return;
    }
    if (first.text !== 'cd' && first.text !== 'pushd' && first.text !== 'chdir') return;
    const target = argv.slice(1).find((w) => w.text === '-' || !w.text.startsWith('-'));
    if (target === undefined) {
      this.cwd = '~';
      return;
    }
    const text = target.text;
    if (text === '-' || (target.dynamic && !/^\$\{?HOME\}?(?:\/|$)/.test(text))) this.cwd = '$unresolved';
    else this.cwd = this.resolve(text);
  }

  /** A path as it will be reached from the tracked working directory (version 3); as written otherwise. */
  resolve(raw: string): string {
    const cwd = this.cwd;
    if (cwd === null || raw === '' || raw.includes('://')) return raw;
    const c = raw.charCodeAt(0);
    if (c === 47 /* / */ || c === 126 /* ~ */ || c === 36 /* $ */) return raw;
    return cwd === '/' ? `/${raw}` : `${cwd}/${raw}`;
  }

  /** Parses and reads shell text at nesting `depth`. */
  shell(text: string, depth: number): void {
    if (depth > MAX_SHELL_DEPTH) {
      this.findings.add(R.depth);
      return;
    }
    const parsed = parseShell(text);
    if (parsed.failed) {
      this.findings.add(R.parseFailure);
      return;
    }
    if (parsed.forkBomb) this.findings.add(R.forkBomb);
    for (const name of parsed.functions) if (COMMON_COMMANDS.has(name)) this.findings.add(R.alias);
    for (const cmd of parsed.commands) {
      if (this.v3 && cmd.declaration === null) this.changeDirectory(cmd.argv);
      this.assignments(cmd.assigns, cmd.declaration !== null || cmd.argv.length === 0);
      this.command({ argv: cmd.declaration === null ? cmd.argv : [], redirects: cmd.redirects, pipeFrom: cmd.pipeFrom }, depth);
      if (cmd.declaration !== null) this.declaration(cmd.declaration, cmd.argv.slice(1));
    }
  }

  /** Environment assignments, as a prefix of a command or on their own (`export X=...`, `X=...`). */
  assignments(assigns: readonly Assignment[], persistent: boolean): void {
    for (const { name, value } of assigns) this.variable(name, value, persistent);
  }

  variable(rawName: string, value: Word | null, persistent: boolean): void {
    const name = rawName.toUpperCase();
    const text = value?.text ?? '';
    if (this.v4 && value?.decoded === true) this.decodedVariables.add(rawName);
    if (name.startsWith('LEDGER_')) this.findings.add(R.ledgerTamper);
    if (LOADER_VARIABLES.has(name)) {
      if (name === 'LD_PRELOAD' || name === 'LD_AUDIT' || name === 'DYLD_INSERT_LIBRARIES') {
        if (text !== '') this.findings.add(R.loader);
      } else if (this.searchPathHijacked(text, value)) this.findings.add(R.pathHijack);
      return;
    }
    if (SEARCH_PATH_VARIABLES.has(name)) {
      if (this.searchPathHijacked(text, value)) this.findings.add(R.pathHijack);
      return;
    }
    if (HISTORY_VARIABLES.has(name)) {
      if (name === 'HISTFILE' ? text === '' || text === '/dev/null' || SAFE_SINK.test(text) : name === 'HISTCONTROL' || name === 'HISTIGNORE' ? text.includes('*') : /^0*$/.test(text)) this.findings.add(R.history);
      return;
    }
    if (CODE_VARIABLES.has(name) && text !== '') {
      if ((name === 'EDITOR' || name === 'VISUAL' || name === 'PAGER' || name === 'GIT_PAGER' || name === 'GIT_EDITOR') && /^(?:vi|vim|nvim|nano|emacs|less|more|cat|code(?: -w| --wait)?|subl -w|delta|bat|most)$/.test(text.trim())) return;
      this.findings.add(R.injectionEnv);
      return;
    }
    if (name === 'NODE_OPTIONS' && /(?:^|\s)(?:-r|--require|--import|--loader|--experimental-loader)\b/.test(text)) this.findings.add(R.injectionEnv);
    if (this.v5 && DEPENDENCY_VARIABLES.has(name) && dependencyVariableUnsafe(name, text)) this.findings.add(R.dependencySource);
    if ((name === 'GOPROXY' || name === 'PIP_INDEX_URL' || name === 'PIP_EXTRA_INDEX_URL' || name === 'NPM_CONFIG_REGISTRY' || name === 'YARN_REGISTRY' || name === 'UV_INDEX_URL' || name === 'CARGO_REGISTRIES_CRATES_IO_PROTOCOL') && persistent && text !== '') this.findings.add(R.packageConfig);
  }

  /** A search path whose first entries (before the old value) include a temporary, relative, empty or unresolved directory. */
  searchPathHijacked(text: string, value: Word | null): boolean {
    if (text === '') return false;
    const entries = text.split(':');
    for (const entry of entries) {
      if (/^\$\{?(?:path|pythonpath|node_path|ld_library_path|perl5lib|rubylib|dyld_library_path)\}?$/i.test(entry)) return false;
      if (entry === '' || entry === '.' || (!entry.startsWith('/') && !entry.startsWith('~') && !entry.startsWith('$HOME') && !/^\.\/?node_modules\/\.bin$/.test(entry) && !entry.startsWith('./node_modules'))) return true;
      if (entry.includes('$') && !entry.startsWith('$HOME') && !entry.startsWith('$PWD')) return true;
      const { classes } = pathFacts(entry);
      if ((classes & PathClass.temp) !== 0 || /(?:^|\/)(?:downloads|\.cache|public|uploads)(?:\/|$)/i.test(entry) || entry.startsWith('/dev/shm')) return true;
    }
    return value?.dynamic === true && !/\$\{?PATH\}?/.test(text);
  }

  declaration(variant: string, names: readonly Word[]): void {
    // `export -n X`, `declare -x X` without values, `readonly HISTFILE`: names only.
    for (const w of names) if (w.text.toUpperCase().startsWith('LEDGER_')) this.findings.add(R.ledgerTamper);
    if (variant === 'readonly' && names.some((w) => HISTORY_VARIABLES.has(w.text.toUpperCase()))) this.findings.add(R.history);
  }

  redirects(cmd: Command, depth: number): void {
    for (const r of cmd.redirects) {
      const target = r.target.text;
      if (/^\/dev\/(?:tcp|udp)\//.test(target)) {
        this.findings.add(R.reverseShell);
        continue;
      }
      if (r.kind === 'write') {
        if (!SAFE_SINK.test(target)) this.touch(target, 'write');
      } else if (r.kind === 'read') {
        this.touch(target, 'read');
      }
      if (r.target.procSubst) this.findings.add(R.procSubst);
    }
    void depth;
  }

  touch(raw: string, action: 'read' | 'write' | 'delete' | 'delete_tree'): void {
    const path = this.cwd === null ? raw : this.resolve(raw);
    touchPath(this.findings, path, action);
    // Version 6: a delete through a symbolic link made earlier in the same command deletes what the link points at.
    if (this.v6 && this.links.size > 0 && (action === 'delete' || action === 'delete_tree')) {
      const normal = pathFacts(this.resolve(raw)).normal;
      for (const [link, target] of this.links) {
        if (normal === link) touchPath(this.findings, target, action);
        else if (normal.startsWith(`${link}/`)) touchPath(this.findings, `${target.replace(/\/+$/, '')}${normal.slice(link.length)}`, action);
      }
    }
  }

  /**
   * Version 12: the command a fleet runner sends (salt cmd.run, ansible -m shell/command/raw -a,
   * pdsh/clush/pssh/knife ssh) is read as a command; ansible's file module with state=absent
   * deletes its path as a tree.
   */
  fleet(name: string, args: readonly Word[], depth: number): void {
    const texts = args.map((w) => w.text);
    if (name.startsWith('salt')) {
      const at = texts.findIndex((t) => /^cmd\.(?:run|shell|script|exec_code)(?:_all)?$/.test(t));
      if (at !== -1 && texts[at + 1] !== undefined) this.shell(texts[at + 1] as string, depth + 1);
      return;
    }
    if (name === 'ansible') {
      const m = texts.findIndex((t) => t === '-m' || t === '--module-name');
      const module = m === -1 ? 'command' : (texts[m + 1] ?? 'command');
      const at = texts.findIndex((t) => t === '-a' || t === '--args');
      const moduleArgs = at === -1 ? '' : (texts[at + 1] ?? '');
      if (/^(?:ansible\.builtin\.)?(?:shell|command|raw|script)$/.test(module)) this.shell(moduleArgs, depth + 1);
      else if (/^(?:ansible\.builtin\.)?file$/.test(module) && /\bstate=absent\b/.test(moduleArgs)) {
        const path = /\b(?:path|dest|name)=(\S+)/.exec(moduleArgs)?.[1];
        if (path !== undefined) this.touch(path, 'delete_tree');
      }
      return;
    }
    // pdsh -w hosts CMD, clush -w hosts CMD, pssh -h hosts CMD, knife ssh QUERY CMD: the last operand is the command.
    const operands = readOptions(args, new Set(['w', 'x', 'g', 'h', 'H', 'l', 'u', 'p', 't', 'R', 'f', 'O', 'o', 'i', 'a', 'm', 'P', 'C']), true).operands;
    if (name === 'knife' && (operands[0]?.text !== 'ssh' || operands.length < 3)) return;
    const command = operands[operands.length - 1];
    if (command !== undefined) this.shell(command.text, depth + 1);
  }

  /** Generic reading of arguments: paths are read, URLs reached, `--opt=path` values read. */
  generic(args: readonly Word[]): void {
    for (const w of args) {
      let text = w.text;
      if (text.startsWith('-')) {
        const eq = text.indexOf('=');
        if (eq === -1) continue;
        text = text.slice(eq + 1);
      }
      if (text.includes('://')) {
        for (const url of urlsIn(text)) touchUrl(this.findings, url);
        continue;
      }
      if (text.startsWith('@') && looksLikePath(text.slice(1))) text = text.slice(1);
      if (looksLikePath(text)) this.touch(text, 'read');
      else if (/^(?:169\.254\.169\.254|metadata\.google\.internal|100\.100\.100\.200)(?:[:/]|$)/.test(text)) touchUrl(this.findings, text);
    }
  }

  /** Reads one command (wrappers peeled off), at shell nesting `depth`. */
  command(cmd: Command, depth: number): void {
    this.redirects(cmd, depth);
    let argv = cmd.argv;
    for (let unwraps = 0; argv.length > 0; unwraps++) {
      if (unwraps > MAX_UNWRAP) {
        this.findings.add(R.depth);
        return;
      }
      const first = argv[0] as Word;
      for (const w of argv) if (w.procSubst) this.findings.add(R.procSubst);
      // Version 8: a brace expansion in command position (`{cat,/etc/shadow}`) is the command it expands to; one that cannot be expanded is not read.
      if (this.v8 && first.text.length > 2 && first.text.startsWith('{') && first.text.endsWith('}') && first.text.includes(',')) {
        const inner = first.text.slice(1, -1);
        const pieces = inner.split(',');
        if (/[{}]/.test(inner) || pieces.some((p) => p === '') || pieces.length > 64) {
          this.findings.add(R.indirection);
          return;
        }
        argv = [...pieces.map((p) => ({ ...first, text: p })), ...argv.slice(1)];
        continue;
      }
      if (first.dynamic) {
        this.findings.add(first.fetched ? R.remotePipeShell : first.decoded ? R.decoded : R.indirection);
        if (!first.indirect) return;
      }
      // Version 3: a program named by a glob (`/bin/r?`, `/usr/bin/[r]m`) is whatever file matches at run time.
      if (this.v3 && first.text !== '[' && first.text !== '[[' && /[*?[]/.test(first.text)) this.findings.add(R.indirection);
      // A file made earlier in the same command (downloaded or decoded), now run.
      if (first.text.includes('/') && this.script.produced.has(pathFacts(first.text).normal)) this.findings.add(R.downloadExec);
      if (this.v4) this.readV4(programName(first.text), argv.slice(1));
      if (this.v5) this.readV5(programName(first.text), first, argv.slice(1), cmd, depth);
      if (this.v6) this.readV6(programName(first.text), argv.slice(1), cmd, depth);
      if (this.v8) programFindingsV8(this.findings, programName(first.text), argv.slice(1).map((w) => w.text));
      if (analysis.v9) programFindingsV9(this.findings, programName(first.text), argv.slice(1).map((w) => w.text));
      if (analysis.v10) programFindingsV10(this.findings, programName(first.text), argv.slice(1).map((w) => w.text));
      if (analysis.v11) programFindingsV11(this.findings, programName(first.text), argv.slice(1).map((w) => w.text));
      if (analysis.v12) programFindingsV12(this.findings, programName(first.text), argv.slice(1).map((w) => w.text));
      if (analysis.v13) programFindingsV13(this.findings, programName(first.text), argv.slice(1).map((w) => w.text));
      const next = this.program(programName(first.text), first, argv.slice(1), cmd, depth);
      if (next === null) return;
      argv = next;
    }
  }

  /**
   * Version 4: what is read of every program, at each level of unwrapping,
   * besides its own rules: decoded arguments, miners, connection strings,
   * package uploads by any registry client, pod specs that take the host,
   * payment CLIs.
   */
  readV4(name: string, args: readonly Word[]): void {
    const f = this.findings;
    // A decoded value as an argument (a substitution that decodes, or a variable assigned one): what it names is hidden.
    if (name !== 'echo' && name !== 'printf' && name !== 'export' && name !== 'declare' && name !== 'local' && name !== 'readonly') {
      for (const w of args) {
        if (w.decoded) f.add(R.decoded);
        else if (w.dynamic && this.decodedVariables.size > 0) for (const m of w.text.matchAll(/\$\{?([A-Za-z_][A-Za-z0-9_]*)/g)) if (this.decodedVariables.has(m[1] as string)) f.add(R.decoded);
      }
    }
    if (MINER_PROGRAMS.test(name) || args.some((w) => MINING_POOL.test(w.text))) f.add(RESOURCE_HIJACKING);
    const lower = args.map((w) => w.text.toLowerCase());
    const operands = lower.filter((w) => !w.startsWith('-'));
    const sub = operands[0] ?? '';
    const dryRun = lower.some((w) => w === '--dry-run' || w === '--dryrun');
    switch (name) {
      case 'printenv':
        if (args.some((w) => CONNECTION_NAME.test(w.text))) f.add(R.credentialFile);
        return;
      case 'echo': case 'printf':
        if (args.some((w) => CONNECTION_VARIABLE.test(w.text))) f.add(R.credentialFile);
        return;
      case 'docker': case 'podman': case 'nerdctl': case 'finch': case 'kubectl': case 'oc': case 'helm':
        if (args.some((w) => MINER_WORD.test(w.text))) f.add(RESOURCE_HIJACKING);
        if ((name === 'kubectl' || name === 'oc') && /^(?:run|create|apply|patch|debug|replace|set)$/.test(sub) && (args.some((w) => POD_ESCAPE.test(w.text)) || lower.some((w) => w === '--privileged' || w === '--privileged=true'))) f.add(R.containerEscape);
        if (name === 'helm' && sub === 'push') f.add(R.cloudUpload);
        return;
      // Package uploads by registry clients (a dry run uploads nothing).
      case 'twine':
        if (sub === 'upload' && !dryRun) f.add(R.cloudUpload);
        return;
      case 'gem':
        if (sub === 'push') f.add(R.cloudUpload);
        return;
      case 'poetry': case 'flit': case 'hatch': case 'uv': case 'pdm': case 'vsce': case 'ovsx': case 'jlpm':
        if (sub === 'publish' && !dryRun) f.add(R.cloudUpload);
        return;
      case 'anaconda':
        if (sub === 'upload') f.add(R.cloudUpload);
        return;
      case 'dotnet': case 'nuget':
        if ((name === 'nuget' ? sub : operands[1]) === 'push' && (name === 'nuget' || sub === 'nuget')) f.add(R.cloudUpload);
        return;
      case 'mvn': case 'mvnw':
        if (operands.includes('deploy')) f.add(R.cloudUpload);
        return;
      case 'gradle': case 'gradlew':
        if (operands.some((w) => /^(?:publish|publishtomavencentral|publishplugins|uploadarchives)$/.test(w) || /^publish\w*to(?!mavenlocal)\w*repository$/.test(w))) f.add(R.cloudUpload);
        return;
      case 'python': case 'pypy':
        if (lower[0] === '-m' && lower[1] === 'twine' && lower[2] === 'upload' && !dryRun) f.add(R.cloudUpload);
        return;
      // Payment providers' CLIs: creating or changing what moves money.
      case 'stripe':
        if (STRIPE_MONEY_RESOURCE.test(sub) && STRIPE_MONEY_VERB.test(operands[1] ?? '') || /^(?:post|delete)$/.test(sub) && /^\/?v1\/(?:refunds|payouts|transfers|charges|payment_intents|topups|invoices|subscriptions|treasury)/.test(operands[1] ?? '')) f.add(PAYMENT_COMMAND);
        return;
      default:
    }
  }

  /**
   * Version 5: what is read of every program, at each level of unwrapping,
   * besides its own rules: compiled programs run, zsh's sockets, crypto
   * wallets, database statements that change every row, HTTP calls to data
   * stores and payment APIs, dependency sources, files encrypted then
   * deleted, the cluster's control plane and applied manifests, and cloud
   * calls that publish data, mint keys or run commands remotely.
   */
  readV5(name: string, first: Word, args: readonly Word[], cmd: Command, depth: number): void {
    const f = this.findings;
    if (name === 'cat' || name === 'tee') this.rememberHereDocument(name, args, cmd);
    if ((name === 'cat' || name === 'tee' || name === 'echo' || name === 'printf') && (name === 'tee' || cmd.redirects.some((r) => r.kind === 'write'))) this.writtenContent(name, args, cmd);
    // A program compiled earlier in the same command, now run: on a setuid program or the account files, it is an exploit.
    if (this.compiled.size > 0 && first.text.includes('/') && this.compiled.has(pathFacts(this.resolve(first.text)).normal) && (args.some((w) => SETUID_TARGET.test(w.text)) || (pathFacts(first.text).classes & PathClass.temp) !== 0 && EXPLOIT_NAME.test(first.text))) f.add(R.localExploit);
    // A shell or interpreter whose streams are a socket opened earlier (zsh: ztcp, then zsh >&$REPLY).
    if (this.socketOpened && (SHELLS.has(name) || INTERPRETERS.has(name) || name === 'exec') && cmd.redirects.some((r) => r.kind === 'dup' && r.target.dynamic)) f.add(R.reverseShell);
    switch (name) {
      case 'gcc': case 'cc': case 'clang': case 'g++': case 'c++': case 'clang++': case 'tcc': case 'musl-gcc': case 'rustc': case 'x86_64-linux-gnu-gcc':
        this.compile(args);
        return;
      case 'go': {
        const sub = args[0]?.text ?? '';
        if (sub === 'build') this.compile(args.slice(1));
        if (sub === 'mod' && args[1]?.text === 'edit') {
          for (let i = 2; i < args.length; i++) {
            const text = (args[i] as Word).text;
            const replace = text.startsWith('-replace=') ? text.slice(9) : text === '-replace' ? (args[++i]?.text ?? '') : '';
            const target = replace.slice(replace.indexOf('=') + 1);
            if (replace !== '' && !/^[./]/.test(target) && target.split('@')[0] !== replace.slice(0, replace.indexOf('=')).split('@')[0]) f.add(R.dependencySource);
          }
        }
        return;
      }
      case 'zmodload':
        if (args.some((w) => /^zsh\/net\/(?:tcp|socket)$/.test(w.text))) {
          f.add(R.rawSocket);
          this.socketOpened = true;
        }
        return;
      case 'ztcp': case 'zsocket':
        f.add(R.rawSocket);
        if (!args.some((w) => w.text === '-c')) this.socketOpened = true;
        return;
      // Crypto wallets: a transaction sent is money moved.
      case 'cast':
        if (/^(?:send|publish|s)$/.test(args.find((w) => !w.text.startsWith('-'))?.text ?? '')) f.add(R.cryptoTransfer);
        return;
      case 'solana': case 'spl-token': case 'near': case 'aptos': case 'sui': case 'dfx': case 'electrum': case 'lncli': case 'lightning-cli': case 'monero-wallet-cli': case 'cardano-cli': case 'geth':
        if (args.some((w) => CRYPTO_SEND.test(w.text))) f.add(R.cryptoTransfer);
        return;
      case 'bitcoin-cli': case 'litecoin-cli': case 'dogecoin-cli': case 'elements-cli': case 'dash-cli':
        if (args.some((w) => /^send(?:toaddress|many|from|all|rawtransaction)?$/i.test(w.text))) f.add(R.cryptoTransfer);
        return;
      case 'psql': case 'mysql': case 'mariadb': case 'sqlite3': case 'duckdb': case 'clickhouse-client': case 'cockroach': case 'mongosh': case 'mongo': case 'cqlsh': case 'snowsql': case 'bq':
        this.statements(args, cmd);
        return;
      case 'curl': case 'wget': case 'wget2': case 'http': case 'https': case 'xh': case 'xhs': case 'httpie': case 'curlie':
        this.httpV5(name, args, cmd);
        return;
      case 'sed': case 'gsed': {
        // A dependency manifest edited in place to point a dependency elsewhere.
        const files = args.filter((w) => !w.text.startsWith('-') && DEPENDENCY_MANIFEST.test(w.text.toLowerCase()));
        if (files.length > 0 && args.some((w) => /^-[a-zA-Z]*i|^--in-place/.test(w.text))) for (const file of files) manifestFindings(f, file.text, joinWords(args));
        return;
      }
      case 'npm': case 'pnpm': case 'yarn': case 'bun':
        if (args[0]?.text === 'pkg' && args[1]?.text === 'set' && args.slice(2).some((w) => /^(?:dependencies|devdependencies|optionaldependencies|peerdependencies|overrides|resolutions)\.[^=]+=(?:github:|gitlab:|bitbucket:|git\+|git:\/\/|https?:\/\/|[\w.-]+\/[\w.-]+#)/i.test(w.text))) f.add(R.dependencySource);
        return;
      case 'openssl': case 'gpg': case 'gpg2': case 'age': case 'ccrypt': case 'ccencrypt': case 'aescrypt': case 'mcrypt': case '7z': case '7za': case 'zip':
        this.encryption(name, args);
        return;
      case 'rm': case 'grm': case 'unlink': case 'shred': case 'srm': case 'wipe': {
        if (this.encrypted.size === 0) return;
        for (const w of args) if (!w.text.startsWith('-') && this.encrypted.has(pathFacts(this.resolve(w.text)).normal) && (this.perMatch || w.dynamic)) f.add(R.dataEncrypted);
        return;
      }
      case 'kubectl': case 'oc':
        this.kubectlV5(args, cmd);
        return;
      case 'aws': case 'gsutil': case 'gcloud': case 'az':
        this.cloudV5(name, args, depth);
        return;
      default:
    }
  }

  /** Version 5: `cat > f <<EOF`, `tee f <<EOF`: the text of the files a here-document writes, for a later `kubectl apply -f f`. */
  rememberHereDocument(name: string, args: readonly Word[], cmd: Command): void {
    const body = cmd.redirects.find((r) => r.kind === 'heredoc' || r.kind === 'herestring')?.body;
    if (body === undefined || body === null) return;
    const targets = name === 'tee' ? args.filter((w) => !w.text.startsWith('-')).map((w) => w.text) : cmd.redirects.filter((r) => r.kind === 'write').map((r) => r.target.text);
    for (const target of targets) if (this.written.size < 64) this.written.set(pathFacts(this.resolve(target)).normal, body);
  }

  /** Version 5: text written into a workflow, a manifest or a build script by echo, printf, or a here-document through cat or tee: read as a Write of it is. */
  writtenContent(name: string, args: readonly Word[], cmd: Command): void {
    const content = name === 'echo' || name === 'printf' ? joinWords(args.filter((w) => !/^-[neE]+$/.test(w.text))) : cmd.redirects.find((r) => (r.kind === 'heredoc' || r.kind === 'herestring') && r.body !== null)?.body;
    if (content === undefined || content === null || content === '') return;
    const targets = name === 'tee' ? args.filter((w) => !w.text.startsWith('-')).map((w) => w.text) : cmd.redirects.filter((r) => r.kind === 'write').map((r) => r.target.text);
    for (const target of targets) writtenContentFindings(this.findings, this.resolve(target), [content], analyzeShell, analyzeCode);
  }

  /**
   * Version 6: what is read of every program besides version 5's reading:
   * programs whose standard input runs shell commands, archivers that delete
   * their inputs, symbolic links made for a later delete, package scripts set
   * from the command line, shells into production workloads.
   */
  readV6(name: string, args: readonly Word[], cmd: Command, depth: number): void {
    const f = this.findings;
    if (BANG_PROGRAMS.has(name)) this.bangScript(cmd, depth);
    switch (name) {
      case 'tar': case 'gtar': case 'bsdtar': {
        if (!args.some((w) => w.text === '--remove-files')) return;
        let rest = args;
        // Old-style letters (`tar czf ARCHIVE ...`): the archive is the word after them when they hold f.
        const letters = rest[0]?.text ?? '';
        if (/^[A-Za-z]+$/.test(letters)) rest = rest.slice(letters.includes('f') ? 2 : 1);
        const o = readOptions(rest, ARCHIVE_VALUES);
        const dir = o.values.get('C') ?? o.values.get('directory');
        for (const w of o.operands) this.touch(dir !== undefined && !/^[/~$]/.test(w.text) ? `${dir.text}/${w.text}` : w.text, 'delete_tree');
        return;
      }
      case 'zip': {
        if (!args.some((w) => w.text === '--move' || /^-[A-Za-z]*m[A-Za-z]*$/.test(w.text))) return;
        const o = readOptions(args, new Set(['b', 'n', 't', 'tt', 'x', 'i', 'P', 'password', 'O', 'out', 's', 'sp']));
        const recursive = hasOption(o, 'rR', 'recurse-paths');
        for (const w of o.operands.slice(1)) this.touch(w.text, recursive ? 'delete_tree' : 'delete');
        return;
      }
      case '7z': case '7za': case '7zr': {
        if (args[0]?.text !== 'a' || !args.some((w) => w.text.toLowerCase() === '-sdel')) return;
        const operands = args.slice(1).filter((w) => !w.text.startsWith('-'));
        for (const w of operands.slice(1)) this.touch(w.text, 'delete_tree');
        return;
      }
      case 'ln': {
        const o = readOptions(args, new Set(['t', 'target-directory', 'S', 'suffix']));
        if (!hasOption(o, 's', 'symbolic') || o.values.has('t') || o.values.has('target-directory')) return;
        const target = o.operands[0];
        if (target === undefined || target.dynamic) return;
        const link = o.operands[1]?.text ?? target.text.replace(/\/+$/, '').slice(target.text.replace(/\/+$/, '').lastIndexOf('/') + 1);
        if (this.links.size < 64) this.links.set(pathFacts(this.resolve(link)).normal, target.text);
        return;
      }
      case 'npm': case 'pnpm': case 'yarn': case 'bun': {
        // Scripts set from the command line run later, lifecycle scripts on the next install: read as a script's content is.
        const setScript = args[0]?.text === 'set-script';
        if (!(args[0]?.text === 'pkg' && args[1]?.text === 'set') && !setScript) return;
        const scripts: string[] = [];
        if (setScript && args[2] !== undefined) scripts.push(args[2].text);
        for (const w of args.slice(2)) {
          const m = /^scripts\.[^=]+=([\s\S]+)$/.exec(w.text);
          if (m?.[1] !== undefined) scripts.push(m[1]);
        }
        for (const script of scripts) for (const index of analyzeShell(script)) if (SEVERE_IN_SCRIPTS.has(index)) f.add(index);
        return;
      }
      case 'kubectl': case 'oc': {
        // The subcommand: the first operand that is not the value of a global option (`kubectl -n prod exec ...`).
        let sub = '';
        for (let i = 0; i < args.length && sub === ''; i++) {
          const t = (args[i] as Word).text;
          if (/^(?:-n|--namespace|--context|--cluster|--kubeconfig|-s|--server|--user|--token|--as)$/.test(t)) i++;
          else if (!t.startsWith('-')) sub = t;
        }
        if (sub !== 'exec' && sub !== 'attach' && sub !== 'debug') return;
        let production = false;
        let interactive = false;
        const dash = args.findIndex((w) => w.text === '--');
        const own = dash === -1 ? args : args.slice(0, dash);
        for (let i = 0; i < own.length; i++) {
          const t = (own[i] as Word).text;
          const m = /^(?:-n|--namespace|--context|--cluster)(?:=(.*))?$/.exec(t) ?? /^-n(.+)$/.exec(t);
          if (m !== null) {
            const value = m[1] ?? own[i + 1]?.text ?? '';
            if (PRODUCTION_NAME.test(value)) production = true;
          }
          if (/^-(?:[a-z]*[it][a-z]*)$/.test(t) && !t.startsWith('-n') || /^--(?:stdin|tty)(?:=true)?$/.test(t)) interactive = true;
        }
        const program = dash === -1 ? '' : programName(args[dash + 1]?.text ?? '');
        if (production && (interactive || SHELLS.has(program))) f.add(R.productionShell);
        return;
      }
      default:
        void depth;
    }
  }

  /** Version 6: the commands a program's standard input runs (`!cmd` lines of ed, ex, ftp; `system("...")`), read as shell. */
  bangScript(cmd: Command, depth: number): void {
    const texts: string[] = [];
    for (const r of cmd.redirects) {
      if (r.kind !== 'heredoc' && r.kind !== 'herestring') continue;
      if (r.target.dynamic && r.kind === 'herestring') this.findings.add(r.target.fetched ? R.remotePipeShell : r.target.decoded ? R.decoded : R.eval);
      else if (r.body !== null) texts.push(r.body);
    }
    const upstream = cmd.pipeFrom;
    if (upstream !== null && upstream.length === 1 && /^(?:echo|printf)$/.test(programName(upstream[0]?.argv[0]?.text ?? ''))) {
      const argv = (upstream[0] as SimpleCommand).argv;
      if (anyDynamic(argv)) this.findings.add(R.eval);
      const words = argv.slice(1).filter((w) => !/^-[neE]+$/.test(w.text));
      // printf FORMAT ARG...: the format is applied to each argument (`'%s\n' a b` is two lines); \n escapes end lines.
      const printfFormat = programName(argv[0]?.text ?? '') === 'printf' && words.length > 1 && (words[0] as Word).text.includes('%');
      texts.push((printfFormat ? words.slice(1).map((w) => w.text).join('\n') : joinWords(words)).replace(/\\n/g, '\n'));
    }
    for (const text of texts) {
      const bounded = text.length > 65_536 ? text.slice(0, 65_536) : text;
      for (const line of bounded.split('\n', 1024)) {
        const m = BANG_LINE.exec(line);
        if (m?.[1] !== undefined && m[1].trim() !== '') this.shell(m[1], depth + 1);
      }
      SCRIPT_SYSTEM.lastIndex = 0;
      for (let m = SCRIPT_SYSTEM.exec(bounded); m !== null; m = SCRIPT_SYSTEM.exec(bounded)) this.shell(m[1] ?? '', depth + 1);
    }
  }

  /** Version 6: the ledger's own CLI: reading (status, grant list, grants trail, key list) is allowed; writing authority or speaking as someone else is tampering. */
  ledgerV6(args: readonly Word[]): void {
    const f = this.findings;
    const speaksAs = args.some((w) => w.text === '--as' || w.text.startsWith('--as='));
    const words = args.filter((w) => !w.text.startsWith('-')).map((w) => w.text);
    const sub = words[0] ?? '';
    const action = words[1] ?? '';
    const help = args.some((w) => w.text === '--help' || w.text === '-h' || w.text === '--version' || w.text === '-V');
    if (speaksAs) {
      f.add(R.ledgerCli);
      f.add(R.ledgerTamper);
      return;
    }
    if (help || sub === '' || LEDGER_READS.test(sub) || LEDGER_READ_ACTIONS.get(sub)?.test(action) === true) return;
    f.add(R.ledgerCli);
    if (LEDGER_AUTHORITY.test(sub)) f.add(R.ledgerTamper);
  }

  /** Version 5: a compiler's output (remembered, to know it when it is run) and whether its sources are named as exploits. */
  compile(args: readonly Word[]): void {
    const o = readOptions(args, COMPILER_VALUES);
    const output = o.values.get('o');
    if (o.operands.some((w) => EXPLOIT_NAME.test(w.text.slice(w.text.lastIndexOf('/') + 1))) || (output !== undefined && EXPLOIT_NAME.test(output.text.slice(output.text.lastIndexOf('/') + 1)))) this.findings.add(R.localExploit);
    this.compiled.add(pathFacts(this.resolve(output?.text ?? 'a.out')).normal);
  }

  /** Version 5: statements given to a database client (arguments, here-documents, a literal piped in). */
  statements(args: readonly Word[], cmd: Command): void {
    const f = this.findings;
    // The statements the client is given: -c/--command (psql), -e/--execute (mysql), --query (clickhouse), --eval (mongosh), or its operands.
    const given: string[] = [];
    for (let i = 0; i < args.length; i++) {
      const text = (args[i] as Word).text;
      if (/^(?:-c|--command|-e|--execute|-q|--query|--eval|-cmd)$/.test(text)) given.push(args[++i]?.text ?? '');
      else if (/^--(?:command|execute|query|eval)=/.test(text)) given.push(text.slice(text.indexOf('=') + 1));
    }
    if (given.length === 0) given.push(joinWords(args.filter((w) => !w.text.startsWith('-'))));
    // Version 6: a program a statement runs (COPY ... PROGRAM, \! cmd) is read as a shell command.
    const runShell = this.v6 ? analyzeShell : undefined;
    for (const statement of given) sqlFindings(f, statement, runShell);
    for (const r of cmd.redirects) if ((r.kind === 'heredoc' || r.kind === 'herestring') && r.body !== null) sqlFindings(f, r.body, runShell);
    const upstream = cmd.pipeFrom;
    if (upstream !== null && upstream.length === 1 && /^(?:echo|printf)$/.test(programName(upstream[0]?.argv[0]?.text ?? ''))) sqlFindings(f, joinWords((upstream[0] as SimpleCommand).argv.slice(1)), runShell);
  }

  /** Version 5: files encrypted (their inputs, remembered for a later delete); ccrypt replaces its inputs itself. */
  encryption(name: string, args: readonly Word[]): void {
    const lower = args.map((w) => w.text.toLowerCase());
    const inputs: Word[] = [];
    switch (name) {
      case 'openssl': {
        const sub = lower[0] ?? '';
        const encrypting = (sub === 'enc' || /^-?(?:aes|des|chacha|camellia|aria|bf|cast|rc[24]|sm4|seed)/.test(sub)) && !lower.includes('-d') || (sub === 'smime' || sub === 'cms') && lower.includes('-encrypt');
        if (!encrypting) return;
        const at = lower.indexOf('-in');
        if (at !== -1 && args[at + 1] !== undefined) inputs.push(args[at + 1] as Word);
        break;
      }
      case 'gpg': case 'gpg2': {
        if (!lower.some((w) => /^-[a-z]*[ce][a-z]*$/.test(w) && !w.startsWith('--') || w === '--symmetric' || w === '--encrypt' || w === '--encrypt-files') || lower.some((w) => w === '-d' || w === '--decrypt' || w === '--decrypt-files')) return;
        inputs.push(...readOptions(args, GPG_VALUES).operands);
        break;
      }
      case 'age': {
        if (lower.some((w) => w === '-d' || w === '--decrypt')) return;
        inputs.push(...readOptions(args, new Set(['r', 'recipient', 'R', 'recipients-file', 'i', 'identity', 'o', 'output'])).operands);
        break;
      }
      case 'ccrypt': case 'ccencrypt': case 'aescrypt': case 'mcrypt': {
        if (lower.some((w) => w === '-d' || w === '--decrypt')) return;
        const operands = readOptions(args, new Set(['k', 'keyfile', 'K', 'key', 'p', 'o', 'S', 'suffix', 'E', 'envvar'])).operands;
        // ccrypt and mcrypt replace (or leave beside) the originals themselves: across many files, that is the whole shape.
        if (name !== 'aescrypt' && (this.perMatch || lower.some((w) => w === '-r' || w === '--recursive') || operands.some((w) => w.dynamic))) this.findings.add(R.dataEncrypted);
        inputs.push(...operands);
        break;
      }
      default: {
        // 7z a -pSECRET out.7z files..., zip -e / -P SECRET out.zip files...
        const password = lower.some((w) => /^-p./.test(w) || w === '-e' || w === '-p' || w === '--encrypt' || w === '--password');
        if (!password) return;
        const operands = readOptions(args, new Set(['P', 'password', 'x', 'i'])).operands.filter((w) => !/^[ax]$/.test(w.text) && !/^-p/.test(w.text));
        inputs.push(...operands.slice(1));
      }
    }
    for (const w of inputs) if (this.encrypted.size < 64) this.encrypted.add(pathFacts(this.resolve(w.text)).normal);
  }

  /** Version 5: HTTP calls that destroy a data store's contents, move money through a payment API, or send a crypto transaction. */
  httpV5(name: string, args: readonly Word[], cmd: Command): void {
    const f = this.findings;
    const httpie = name === 'http' || name === 'https' || name === 'xh' || name === 'xhs' || name === 'httpie' || name === 'curlie';
    let method = '';
    let data = false;
    const urls: string[] = [];
    let body = '';
    for (let i = 0; i < args.length; i++) {
      const text = (args[i] as Word).text;
      const next = args[i + 1]?.text ?? '';
      if (/^-X.+/.test(text)) method = text.slice(2);
      else if (text === '-X' || text === '--request' || text === '--method') {
        method = next;
        i++;
      } else if (text.startsWith('--request=') || text.startsWith('--method=')) method = text.slice(text.indexOf('=') + 1);
      else if (/^(?:-d|--data(?:-raw|-binary|-urlencode|-ascii)?|--json|-F|--form|--post-data|--body-data|-T|--upload-file)$/.test(text)) {
        data = true;
        body += ` ${next}`;
        i++;
      } else if (/^(?:-d|--data(?:-raw|-binary|-urlencode|-ascii)?|--json|--post-data|--body-data)=?./.test(text) && !text.startsWith('--data-')) {
        data = true;
        body += ` ${text.replace(/^-d|^--[a-z-]+=/, '')}`;
      } else if (text.startsWith('--url=')) urls.push(text.slice(6));
      else if (text === '--url') {
        urls.push(next);
        i++;
      } else if (text.includes('://') || /^[a-z0-9.-]+\.[a-z]{2,}(?::\d+)?\//i.test(text) || /^(?:localhost|\d+\.\d+\.\d+\.\d+)(?::\d+)?\//.test(text)) urls.push(text);
      else if (httpie && /^(?:DELETE|POST|PUT|PATCH)$/.test(text)) method = text;
      else if (httpie && /^[^=:@-][^=:@]*(?:=|:=)/.test(text)) {
        data = true;
        body += ` ${text}`;
      }
    }
    if (cmd.redirects.some((r) => r.kind === 'heredoc' || r.kind === 'herestring')) for (const r of cmd.redirects) body += ` ${r.body ?? ''}`;
    const verb = (method !== '' ? method : data ? 'POST' : 'GET').toUpperCase();
    for (const url of urls) {
      const m = /^(?:[a-z][a-z0-9+.-]*:\/\/)?(?:[^@/]*@)?([^/:?#]+)(?::(\d+))?([^?#]*)/i.exec(url);
      const host = (m?.[1] ?? '').toLowerCase();
      const port = m?.[2] ?? '';
      const path = (m?.[3] ?? '').toLowerCase();
      if (verb === 'DELETE' && (DATA_STORE_PORTS.has(port) || DATA_STORE_HOST.test(host) || /\/(?:_all|\*)(?:\/|$)|^\/?[^/]*\*/.test(path))) f.add(R.database);
      if (/\/_delete_by_query\b/.test(path) || /\/(?:solr\/[^/]+\/)?update\b/.test(path) && /<delete>|"delete"\s*:|\*:\*/.test(body)) f.add(R.database);
      if (verb !== 'GET' && verb !== 'HEAD' && verb !== 'OPTIONS' && PAYMENT_API.test(`${host}${path}`)) f.add(R.paymentCommand);
    }
    if (/\beth_send(?:raw)?transaction\b|\bsendtransaction\b/i.test(body)) f.add(R.cryptoTransfer);
  }

  /** Version 5: kubectl into the control plane, and manifests applied from standard input or from a file written earlier in the command. */
  kubectlV5(args: readonly Word[], cmd: Command): void {
    const f = this.findings;
    let namespace = '';
    const operands: string[] = [];
    const files: string[] = [];
    for (let i = 0; i < args.length; i++) {
      const text = (args[i] as Word).text;
      if (text === '--') break;
      if (text === '-n' || text === '--namespace') namespace = args[++i]?.text ?? '';
      else if (/^-n./.test(text) && !text.startsWith('--')) namespace = text.slice(text.startsWith('-n=') ? 3 : 2);
      else if (text.startsWith('--namespace=')) namespace = text.slice(12);
      else if (text === '-f' || text === '--filename') files.push(args[++i]?.text ?? '');
      else if (text.startsWith('--filename=') || /^-f./.test(text)) files.push(text.slice(text.startsWith('--') ? 11 : text.startsWith('-f=') ? 3 : 2));
      else if (/^(?:-c|--container|--context|--kubeconfig|-l|--selector|-o|--output|--cluster|--user|-s|--server|--as|--image|--target)$/.test(text)) i++;
      else if (!text.startsWith('-')) operands.push(text);
    }
    const sub = operands[0] ?? '';
    if (/^(?:exec|attach|debug|cp|port-forward)$/.test(sub) && (namespace === 'kube-system' || operands.slice(1).some((t) => CONTROL_PLANE_POD.test(t)))) f.add(R.controlPlane);
    if (/^(?:apply|create|replace)$/.test(sub)) {
      for (const file of files) {
        const text = file === '-' || file === '/dev/stdin' ? this.standardInput(cmd) : this.written.get(pathFacts(this.resolve(file)).normal);
        if (text !== undefined) kubernetesManifestFindings(f, text);
      }
    }
  }

  /** Version 5: the text a command reads on standard input, when the command says it (a here-document, a literal echo, a file written earlier). */
  standardInput(cmd: Command): string | undefined {
    for (const r of cmd.redirects) if ((r.kind === 'heredoc' || r.kind === 'herestring') && r.body !== null) return r.body;
    const source = cmd.pipeFrom !== null && cmd.pipeFrom.length === 1 ? cmd.pipeFrom[0] : undefined;
    if (source === undefined) return undefined;
    const program = programName(source.argv[0]?.text ?? '');
    if (program === 'cat') {
      const here = source.redirects.find((r) => (r.kind === 'heredoc' || r.kind === 'herestring') && r.body !== null);
      if (here !== undefined) return here.body ?? undefined;
      const file = source.argv[1];
      return file === undefined ? undefined : this.written.get(pathFacts(this.resolve(file.text)).normal);
    }
    if (program === 'echo' || program === 'printf') return joinWords(source.argv.slice(1));
    return undefined;
  }

  /** Version 5: cloud calls that make data public, create long-lived keys, copy a bucket into another, or run commands on machines. */
  cloudV5(name: string, args: readonly Word[], depth: number): void {
    const f = this.findings;
    const operands: string[] = [];
    const values = new Map<string, string[]>();
    const flags = name === 'aws' ? AWS_FLAGS : name === 'gsutil' ? GSUTIL_FLAGS : CLOUD_FLAGS;
    for (let i = 0; i < args.length; i++) {
      const text = (args[i] as Word).text;
      if (text === '--') {
        operands.push(...args.slice(i + 1).map((w) => w.text));
        break;
      }
      if (text.startsWith('-') && text.length > 1) {
        const eq = text.indexOf('=');
        const key = (eq === -1 ? text : text.slice(0, eq)).toLowerCase();
        let value = eq === -1 ? '' : text.slice(eq + 1);
        if (eq === -1 && !flags.has(key) && i + 1 < args.length && !(args[i + 1] as Word).text.startsWith('-')) {
          value = (args[++i] as Word).text;
          // az takes several words after one option (--scripts "a" "b").
          while (name === 'az' && i + 1 < args.length && !(args[i + 1] as Word).text.startsWith('-')) value += `\n${(args[++i] as Word).text}`;
        }
        const list = values.get(key) ?? [];
        list.push(value);
        values.set(key, list);
        continue;
      }
      operands.push(text);
    }
    const lowerOperands = operands.map((o) => o.toLowerCase());
    const value = (...keys: string[]): string => keys.flatMap((k) => values.get(k) ?? []).join('\n');
    const everyone = /\ballusers\b|\ballauthenticatedusers\b|\bauthenticatedusers\b|acs\.amazonaws\.com\/groups\/global\/(?:allusers|authenticatedusers)/i;
    const bucketOf = (w: string): string | null => /^(?:s3|gs|az|r2|b2):\/\/([^/]+)/i.exec(w)?.[1]?.toLowerCase() ?? null;
    const crossBucket = (paths: readonly string[]): boolean => {
      const dest = bucketOf(paths[paths.length - 1] ?? '');
      return dest !== null && paths.slice(0, -1).some((p) => bucketOf(p) !== null && bucketOf(p) !== dest);
    };
    if (name === 'aws') {
      const [service, op] = lowerOperands;
      if (service === 's3' && /^(?:cp|mv|sync)$/.test(op ?? '')) {
        const paths = operands.slice(2);
        const dest = paths[paths.length - 1] ?? '';
        if (bucketOf(dest) !== null && paths.slice(0, -1).some((p) => bucketOf(p) === null && p !== '-')) {
          f.add(R.cloudUpload);
          for (const p of paths.slice(0, -1)) if (bucketOf(p) === null) this.touch(p, 'read');
        }
        if (crossBucket(paths)) f.add(R.cloudUpload);
      }
      if (/public-read|authenticated-read/i.test(value('--acl')) || everyone.test(value('--grants', '--grant-read', '--grant-full-control', '--grant-read-acp', '--grant-write'))) f.add(R.publicExposure);
      if (service === 's3api' && (op === 'put-bucket-policy' && /"principal"\s*:\s*(?:"\*"|\{\s*"aws"\s*:\s*(?:"\*"|\[\s*"\*"))/i.test(value('--policy')) || op === 'delete-public-access-block' || op === 'put-public-access-block' && /=false|:\s*false/i.test(value('--public-access-block-configuration')))) f.add(R.publicExposure);
      if (service === 'ec2' && /^(?:modify-snapshot-attribute|modify-image-attribute)$/.test(op ?? '') && (/^add$/i.test(value('--operation-type').trim()) && /(?:^|\n)all$/i.test(value('--group-names', '--user-groups')) || /group\W+all\b/i.test(value('--create-volume-permission', '--launch-permission')))) f.add(R.publicExposure);
      if (service === 'rds' && /^modify-db(?:-cluster)?-snapshot-attribute$/.test(op ?? '') && /(?:^|[\s,"[])all(?:$|[\s,"\]])/i.test(value('--values-to-add'))) f.add(R.publicExposure);
      if ((service === 'lambda' && op === 'add-permission' || service === 'ecr' && op === 'set-repository-policy') && /^\*$|"principal"\s*:\s*"\*"/i.test(value('--principal', '--policy-text').trim())) f.add(R.publicExposure);
      if (service === 'iam' && /^(?:create-access-key|create-service-specific-credential|upload-ssh-public-key|upload-signing-certificate)$/.test(op ?? '')) f.add(R.keyCreation);
      if (service === 'ssm' && (op === 'send-command' || op === 'create-association' || op === 'start-automation-execution' && /runshellscript|runpowershellscript/i.test(value('--document-name')))) {
        f.add(R.remoteCommand);
        for (const command of commandsIn(value('--parameters'))) this.shell(command, depth + 1);
      }
      if (service === 'ecs' && op === 'execute-command') for (const command of values.get('--command') ?? []) this.shell(command, depth + 1);
      return;
    }
    if (name === 'gsutil') {
      const op = lowerOperands[0] ?? '';
      if (/^(?:cp|mv|rsync)$/.test(op) && crossBucket(operands.slice(1))) f.add(R.cloudUpload);
      if (/^(?:cp|mv|rsync)$/.test(op) && /public-read|authenticated-read/i.test(value('-a'))) f.add(R.publicExposure);
      if (/^(?:acl|defacl)$/.test(op) && (everyone.test(value('-u', '-g', '-p')) || lowerOperands[1] === 'set' && /^public-read|^authenticated-read/.test(lowerOperands[2] ?? ''))) f.add(R.publicExposure);
      if (op === 'iam' && lowerOperands[1] === 'ch' && lowerOperands.some((w) => /^-?(?:allusers|allauthenticatedusers):/.test(w))) f.add(R.publicExposure);
      return;
    }
    const joined = lowerOperands.join(' ');
    if (name === 'gcloud') {
      if (/\biam service-accounts keys (?:create|upload)\b/.test(joined)) f.add(R.keyCreation);
      if (/\badd-iam-policy-binding\b/.test(joined) && everyone.test(value('--member'))) f.add(R.publicExposure);
      if (/\bstorage (?:cp|mv|rsync)\b/.test(joined)) {
        const at = lowerOperands.findIndex((w) => /^(?:cp|mv|rsync)$/.test(w));
        if (crossBucket(operands.slice(at + 1))) f.add(R.cloudUpload);
        if (/public-?read|authenticated-?read/i.test(value('--predefined-acl', '--canned-acl', '-a'))) f.add(R.publicExposure);
      }
      if (/\bcompute (?:instances (?:add-metadata|create)|project-info add-metadata|instance-templates create)\b/.test(joined)) {
        const metadata = value('--metadata', '--metadata-from-file');
        if (/(?:^|[,\n])(?:startup-script|shutdown-script|windows-startup-script-\w+|user-data)\s*=/i.test(metadata)) {
          f.add(R.remoteCommand);
          const inline = /(?:^|[,\n])startup-script=([\s\S]*)/i.exec(value('--metadata'))?.[1];
          if (inline !== undefined) this.shell(inline, depth + 1);
        }
      }
      if (/\bcompute ssh\b/.test(joined)) {
        for (const command of values.get('--command') ?? []) this.shell(command, depth + 1);
        const dash = args.findIndex((w) => w.text === '--');
        if (dash !== -1 && dash + 1 < args.length) this.shell(joinWords(args.slice(dash + 1)), depth + 1);
      }
      return;
    }
    // az
    if (/\b(?:vm|vmss) run-command (?:invoke|create)\b/.test(joined)) {
      f.add(R.remoteCommand);
      for (const script of value('--scripts', '--script').split('\n')) if (script.trim() !== '') this.shell(script, depth + 1);
    }
    if (/\bad sp create-for-rbac\b|\bad (?:sp|app) credential reset\b|\bad app credential (?:reset|create)\b|\bstorage account keys renew\b/.test(joined)) f.add(R.keyCreation);
    if (/\bstorage container (?:create|set-permission)\b/.test(joined) && /^(?:blob|container)$/i.test(value('--public-access').trim())) f.add(R.publicExposure);
    if (/\bstorage account (?:create|update)\b/.test(joined) && /^true$/i.test(value('--allow-blob-public-access').trim())) f.add(R.publicExposure);
    if (/\b(?:snapshot|disk) grant-access\b/.test(joined)) f.add(R.publicExposure);
  }

  /** Version 5: `npx PKG ARGS`, `npm exec -- PKG ARGS`, `pnpm dlx`, `yarn dlx`: the program the runner will run, or null. */
  packageRunner(name: string, args: readonly Word[], depth: number): readonly Word[] | null {
    let rest = args;
    if (name === 'npm' || name === 'pnpm' || name === 'yarn') {
      const sub = args.findIndex((w) => !w.text.startsWith('-'));
      if (sub === -1 || !/^(?:exec|x|dlx)$/.test((args[sub] as Word).text)) return null;
      rest = args.slice(sub + 1);
    }
    const o = readOptions(rest, RUNNER_VALUES, true);
    const call = o.values.get('c') ?? o.values.get('call');
    if (call !== undefined) this.commandString(call, depth);
    const spec = o.operands[0];
    if (spec === undefined || spec.dynamic || spec.text.includes('://') || spec.text.startsWith('.') || spec.text.startsWith('/')) return null;
    const text = spec.text.toLowerCase();
    const scoped = /^@([^/]+)\/([^@]+)/.exec(text);
    const program = scoped !== null ? (scoped[1] === 'agent-ledger' ? 'ledger' : (scoped[2] as string)) : (text.split('@')[0] as string);
    if (program === '' || program.includes('/') || program.includes(':')) return null;
    return [word(program), ...o.operands.slice(1)];
  }

  /** Version 5: containerd's ctr, crictl, LXD/Incus and systemd-nspawn: privileged runs and host mounts as docker's; the command they run is read. */
  containerRuntime(name: string, args: readonly Word[]): readonly Word[] | null {
    const f = this.findings;
    if (name === 'systemd-nspawn') {
      f.add(R.mountChroot);
      const o = readOptions(args, new Set(['D', 'directory', 'bind', 'bind-ro', 'M', 'machine', 'u', 'user', 'i', 'image', 'capability', 'E', 'setenv']), true);
      for (const [key, value] of o.allValues) {
        if ((key === 'D' || key === 'directory' || key === 'bind' || key === 'bind-ro') && mountGivesHost(value.text.split(':')[0] ?? '')) f.add(R.containerEscape);
        if (key === 'capability' && /all|sys_admin/i.test(value.text)) f.add(R.containerEscape);
      }
      return o.operands;
    }
    let i = 0;
    while (i < args.length && (args[i] as Word).text.startsWith('-')) i += /^(?:-n|--namespace|-a|--address|--timeout|--connect-timeout|-r|--runtime-endpoint|-i|--image-endpoint|--config|--project|--remote)$/.test((args[i] as Word).text) ? 2 : 1;
    let sub = args[i]?.text ?? '';
    let rest = args.slice(i + 1);
    if (/^(?:c|container|containers|t|task|tasks)$/.test(sub)) {
      sub = `${sub[0] as string}-${rest[0]?.text ?? ''}`;
      rest = rest.slice(1);
    }
    if (name === 'lxc' || name === 'incus') {
      const words = rest.map((w) => w.text.toLowerCase());
      if (sub === 'config' && words[0] === 'set' && words.some((w, k) => /^security\.(?:privileged|nesting)$/.test(w) && /^(?:true|1)$/.test(words[k + 1] ?? '') || /^security\.(?:privileged|nesting)=(?:true|1)$/.test(w))) f.add(R.containerEscape);
      if (sub === 'config' && words[0] === 'device' && words[1] === 'add' && words.some((w) => w.startsWith('source=') && mountGivesHost(w.slice(7)))) f.add(R.containerEscape);
      if ((sub === 'launch' || sub === 'init') && words.some((w) => /security\.privileged=true/.test(w))) f.add(R.containerEscape);
      if (sub === 'exec') {
        const dash = rest.findIndex((w) => w.text === '--');
        return dash === -1 ? rest.slice(1) : rest.slice(dash + 1);
      }
      return null;
    }
    if (sub === 'run' || sub === 'c-create' || sub === 'c-run') {
      const o = readOptions(rest, CTR_RUN_VALUES, true);
      if (hasOption(o, '', 'privileged', 'privileged-without-host-devices')) f.add(R.containerEscape);
      if (hasOption(o, '', 'net-host')) f.add(R.rawSocket);
      for (const [key, value] of o.allValues) {
        const v = value.text.toLowerCase();
        if (key === 'mount' && mountGivesHost(mountSource(v))) f.add(R.containerEscape);
        if (key === 'with-ns' && /^(?:pid|mount|network|ipc|uts):\/proc\/1\//.test(v)) f.add(R.containerEscape);
        if (key === 'cap-add' && /^(?:cap_)?(?:all|sys_admin|sys_ptrace|sys_module|dac_read_search)$/.test(v)) f.add(R.containerEscape);
        if (key === 'device' && /^\/dev\/(?:sd|nvme|vd|xvd|mem|kmem|disk|dm-|mapper)/.test(v)) f.add(R.containerEscape);
      }
      return o.operands.length > 2 ? o.operands.slice(2) : null;
    }
    if (sub === 'exec' || sub === 't-exec') {
      const o = readOptions(rest, new Set(['exec-id', 'cwd', 'u', 'user', 'timeout', 's', 'e', 'env', 'fifo-dir']), true);
      return o.operands.length > 1 ? o.operands.slice(1) : null;
    }
    return null;
  }

  /**
   * Judges one program. Returns the argv of the command it wraps (to be read
   * in turn), or null when done.
   */
  program(name: string, first: Word, args: readonly Word[], cmd: Command, depth: number): readonly Word[] | null {
    const f = this.findings;
    switch (name) {
      // --- wrappers -------------------------------------------------------------------------
      case 'sudo': case 'doas': case 'pkexec': case 'run0': case 'sudoedit': {
        f.add(R.sudo);
        const o = readOptions(args, new Set(['u', 'g', 'p', 'C', 'D', 'h', 'r', 't', 'T', 'U', 'user', 'group', 'prompt', 'chdir', 'host', 'role', 'type', 'other-user', 'close-from', 'command-timeout']), true);
        if (name === 'sudoedit' || o.short.has('e') || o.long.has('edit')) {
          for (const w of o.operands) this.touch(w.text, 'write');
          return null;
        }
        if (o.operands.length === 0 && (hasOption(o, 'si', 'shell', 'login'))) f.add(R.sudo);
        return o.operands;
      }
      case 'su': case 'runuser': case 'sg': case 'ksu': {
        f.add(R.sudo);
        const o = readOptions(args, new Set(['c', 's', 'g', 'G', 'u', 'command', 'shell', 'group', 'user', 'session-command']));
        const command = o.values.get('c') ?? o.values.get('command') ?? o.values.get('session-command');
        if (command !== undefined) this.commandString(command, depth);
        if (name === 'runuser' && o.values.has('u')) return o.operands;
        if (name === 'sg' && o.operands.length >= 2) this.commandString(o.operands[1] as Word, depth);
        return null;
      }
      case 'env': {
        const o = readOptions(args, new Set(['u', 'C', 'S', 'unset', 'chdir', 'split-string', 'P']), true);
        for (const [key, value] of o.allValues) {
          if (key === 'u' || key === 'unset') this.variable(value.text, null, true);
          if (key === 'S' || key === 'split-string') this.commandString(value, depth);
        }
        const rest = [...o.operands];
        while (rest.length > 0 && /^[A-Za-z_][A-Za-z0-9_]*=/.test((rest[0] as Word).text)) {
          const w = rest.shift() as Word;
          const eq = w.text.indexOf('=');
          this.variable(w.text.slice(0, eq), { ...w, text: w.text.slice(eq + 1) }, false);
        }
        if (rest.length === 0) f.add(R.environmentDump);
        return rest;
      }
      case 'nohup': case 'setsid': case 'time': case 'command': case 'builtin': case 'exec': case 'caffeinate': case 'unbuffer': case 'disown': case 'proxychains': case 'proxychains4': case 'torsocks': case 'tsocks': case 'catchsegv': case 'faketime': case 'fakeroot': case 'firejail': case 'rlwrap': case 'sem': case 'chronic': case 'ifne': case 'doppler': case 'dbus-launch': case 'xvfb-run': case 'systemd-run': case 'scl': {
        // Version 5: each wrapper's own options (setsid -f forks; it takes no value).
        const o = readOptions(args, (this.v5 ? WRAPPER_OPTIONS_V5.get(name) : undefined) ?? WRAPPER_OPTIONS, true);
        if (name === 'systemd-run') {
          f.add(R.scheduled);
          if (o.values.has('uid') || o.values.has('p')) f.add(R.sudo);
        }
        if (name === 'command' && hasOption(o, 'vV')) return null;
        return o.operands;
      }
      case 'timeout': {
        const o = readOptions(args, new Set(['s', 'k', 'signal', 'kill-after']), true);
        const rest = args.slice(args.length - (o.operands.length - 0));
        return rest.slice(1).length > 0 ? o.operands.slice(1).length > 0 ? [...o.operands.slice(1)] : [] : [];
      }
      case 'nice': case 'ionice': case 'chrt': case 'taskset': case 'stdbuf': case 'cpulimit': case 'trickle': case 'numactl': case 'prlimit': case 'ulimit': {
        const values = new Set(['n', 'c', 'p', 'i', 'o', 'e', 'l', 'adjustment', 'class', 'classdata', 'input', 'output', 'error', 'limit', 'cpu-list', 'd', 'u']);
        const o = readOptions(args, values, true);
        const rest = [...o.operands];
        if ((name === 'chrt' || name === 'taskset') && rest.length > 0 && /^[0-9a-fx,-]+$/i.test((rest[0] as Word).text)) rest.shift();
        if (name === 'ulimit') return null;
        return rest;
      }
      case 'watch': {
        const o = readOptions(args, new Set(['n', 'd', 'interval', 'differences']), true);
        if (o.operands.length > 0) this.commandString(word(joinWords(o.operands)), depth);
        return null;
      }
      case 'flock': {
        const o = readOptions(args, new Set(['c', 'command', 'w', 'E', 'timeout', 'conflict-exit-code']), true);
        const command = o.values.get('c') ?? o.values.get('command');
        if (command !== undefined) this.commandString(command, depth);
        return o.operands.slice(1);
      }
      case 'strace': case 'ltrace': case 'gdb': case 'valgrind': case 'perf': {
        if (name === 'gdb' && args.some((w) => w.text === '-p' || w.text.startsWith('--pid'))) f.add(R.credentialFile);
        if (name === 'strace' && args.some((w) => w.text === '-p')) f.add(R.credentialFile);
        const o = readOptions(args, new Set(['o', 'e', 'p', 's', 'u', 'x', 'ex', 'batch', 'tool']), true);
        return name === 'perf' ? o.operands.slice(1) : o.operands;
      }
      case 'xargs': case 'parallel': {
        if (this.v5) this.perMatch = true;
        // Version 5: -0 is xargs's --null (a flag), not an operand.
        const options = this.v5 && args.some((w) => w.text === '-0') ? args.map((w) => (w.text === '-0' ? { ...w, text: '--null' } : w)) : args;
        const o = readOptions(options, new Set(['I', 'i', 'L', 'l', 'n', 'P', 's', 'd', 'E', 'e', 'a', 'j', 'replace', 'max-lines', 'max-args', 'max-procs', 'delimiter', 'arg-file', 'eof', 'jobs', 'S']), name === 'xargs');
        const file = o.values.get('a') ?? o.values.get('arg-file');
        if (file !== undefined) this.touch(file.text, 'read');
        let inner = [...o.operands];
        if (name === 'parallel') {
          const sep = inner.findIndex((w) => w.text === ':::' || w.text === '::::');
          if (sep !== -1) inner = inner.slice(0, sep);
        }
        if (inner.length === 0) inner = [word('echo')];
        const placeholder = o.values.get('I') ?? o.values.get('i') ?? o.values.get('replace');
        // Input from a literal echo/printf is known; anything else is not.
        const source = cmd.pipeFrom !== null && cmd.pipeFrom.length === 1 ? cmd.pipeFrom[0] : undefined;
        const literalInput = source !== undefined && /^(?:echo|printf)$/.test(programName(source.argv[0]?.text ?? '')) && !anyDynamic(source.argv) ? source.argv.slice(1).filter((w) => !/^-[neE]+$/.test(w.text)).flatMap((w) => w.text.split(/\s+/).filter((t) => t !== '').map(word)) : null;
        const unknown: Word = { ...word('$(stdin)'), dynamic: true };
        if (literalInput !== null && literalInput.length > 0 && o.values.get('I') === undefined && o.values.get('i') === undefined && o.values.get('replace') === undefined && name === 'xargs') return [...inner, ...literalInput];
        // Version 5: every occurrence of the placeholder is the input, not only the first.
        if (placeholder !== undefined) inner = inner.map((w) => (w.text.includes(placeholder.text || '{}') ? { ...w, text: this.v5 ? w.text.split(placeholder.text || '{}').join('$(stdin)') : w.text.replace(placeholder.text || '{}', '$(stdin)'), dynamic: true } : w));
        else if (name === 'parallel') inner = inner.map((w) => (w.text.includes('{}') ? { ...w, text: w.text.replace('{}', '$(stdin)'), dynamic: true } : w));
        return [...inner, unknown];
      }
      case 'busybox': case 'toybox': case 'box': {
        if (args.length === 0 || (args[0] as Word).text.startsWith('-')) return null;
        return args;
      }
      case 'find': case 'gfind': case 'bfs': case 'fd': case 'fdfind':
        return this.find(name, args, depth);
      case 'ssh': case 'autossh': case 'mosh':
        return this.ssh(args, cmd, depth);
      // Version 12: fleet runners run a command or a module on many hosts; the command is read as one.
      case 'salt': case 'salt-ssh': case 'salt-call': case 'ansible': case 'pdsh': case 'clush': case 'pssh': case 'parallel-ssh': case 'knife':
        if (this.v12) this.fleet(name, args, depth);
        else this.generic(args);
        return null;
      case 'mkcert':
        // Version 12: a development certificate written into the project's own tree is new material, not a credential read.
        if (!(this.v12 && projectCertificate(args.map((w) => w.text)))) this.generic(args);
        return null;
      case 'docker': case 'podman': case 'nerdctl': case 'finch':
        return this.docker(args, depth);
      case 'kubectl': case 'oc': case 'microk8s.kubectl': case 'k3s':
        return this.kubectl(args, depth);
      case 'chroot': {
        f.add(R.mountChroot);
        const o = readOptions(args, new Set(['userspec', 'groups']), true);
        return o.operands.slice(1);
      }
      // Version 5: package runners run the program they name (npx ledger ... is the ledger CLI).
      case 'npx': case 'pnpx': case 'bunx': case 'npm': case 'pnpm': case 'yarn': {
        if (!this.v5) break;
        const inner = this.packageRunner(name, args, depth);
        if (inner === null) break;
        this.judge(name, first, args, cmd, depth);
        return inner;
      }
      // Version 5: container runtimes other than docker's family, read as docker is.
      case 'ctr': case 'crictl': case 'lxc': case 'incus': case 'systemd-nspawn': {
        if (!this.v5) break;
        return this.containerRuntime(name, args);
      }
      case 'nsenter': case 'unshare': case 'ip': {
        if (name === 'ip') {
          if (args[0]?.text === 'netns' && args[1]?.text === 'exec') return args.slice(3);
          if (args.some((w) => /^(?:add|del|delete|flush|set|change|replace)$/.test(w.text))) f.add(R.rawSocket);
          return null;
        }
        f.add(R.mountChroot);
        if (name === 'nsenter' && args.some((w) => /^(?:-t|--target)(?:=?1)?$/.test(w.text) || w.text === '1')) f.add(R.containerEscape);
        const o = readOptions(args, new Set(['t', 'target', 'S', 'G', 'setuid', 'setgid', 'w', 'wd', 'r', 'root', 'propagation', 'map-user', 'map-group']), true);
        return o.operands;
      }
      // --- shells, eval, source, interpreters -------------------------------------------------
      case 'eval': {
        f.add(R.eval);
        if (args.some((w) => w.fetched)) f.add(R.remotePipeShell);
        if (args.some((w) => w.decoded)) f.add(R.decoded);
        if (!anyDynamic(args)) this.shell(joinWords(args), depth + 1);
        return null;
      }
      case 'source': case '.': {
        const target = args[0];
        if (target === undefined) return null;
        if (target.fetched) f.add(R.remotePipeShell);
        else if (target.decoded) f.add(R.decoded);
        else if (target.dynamic) f.add(R.eval);
        else if (target.text === '/dev/stdin' || target.text === '-') this.stdinScript('shell', cmd, depth);
        else {
          if (this.script.produced.has(pathFacts(target.text).normal)) f.add(R.downloadExec);
          this.touch(target.text, 'read');
        }
        return null;
      }
      case 'iex': case 'invoke-expression': {
        if (args.length > 0) this.commandString({ ...word(joinWords(args)), dynamic: anyDynamic(args), fetched: args.some((w) => w.fetched), decoded: args.some((w) => w.decoded) }, depth);
        else this.stdinScript('shell', cmd, depth);
        return null;
      }
      case 'alias': {
        for (const w of args) {
          const eq = w.text.indexOf('=');
          if (eq !== -1 && COMMON_COMMANDS.has(w.text.slice(0, eq))) f.add(R.alias);
          // Version 13: an alias body runs wherever its name is used (in the same command, or later): it is read as a command.
          if (this.v13 && eq !== -1) this.shell(w.text.slice(eq + 1), depth + 1);
        }
        return null;
      }
      case 'unset': {
        for (const w of args) {
          const n = w.text.toUpperCase();
          if (n === 'HISTFILE' || n === 'HISTSIZE' || n === 'HISTFILESIZE') f.add(R.history);
          if (n.startsWith('LEDGER_')) f.add(R.ledgerTamper);
        }
        return null;
      }
      case 'set': case 'shopt': {
        const text = joinWords(args);
        if (/(?:\+o|-u|-o)\s+history/.test(text) || (name === 'set' && /^\+o\s*history/.test(text))) f.add(R.history);
        if (args.length === 0 && name === 'set') f.add(R.environmentDump);
        return null;
      }
      case 'history': {
        if (args.some((w) => /^-[a-z]*[cdwr]/.test(w.text))) f.add(R.history);
        // Version 3: listing one's own history (`history`, `history 20`) is what the user already sees.
        else if (!(this.v3 && args.every((w) => /^\d+$/.test(w.text)))) f.add(R.credentialFile);
        return null;
      }
      case 'printenv': case 'export': case 'declare': case 'typeset': {
        if (name === 'printenv' && args.some((w) => SECRET_NAME.test(w.text))) f.add(R.credentialFile);
        if (args.length === 0 || args.every((w) => /^-[pxa]+$/.test(w.text))) f.add(R.environmentDump);
        for (const w of args) {
          const eq = w.text.indexOf('=');
          if (eq > 0) this.variable(w.text.slice(0, eq), { ...w, text: w.text.slice(eq + 1) }, true);
          else if (w.text.toUpperCase().startsWith('LEDGER_')) f.add(R.ledgerTamper);
        }
        return null;
      }
      default:
        break;
    }
    if (SHELLS.has(name)) return this.shellProgram(name, args, cmd, depth);
    if (INTERPRETERS.has(name)) return this.interpreter(name, args, cmd, depth);
    if (AWKS.has(name)) {
      const o = readOptions(args, new Set(['f', 'v', 'F', 'file', 'assign', 'field-separator']));
      const program = o.values.get('f') === undefined ? o.operands[0] : undefined;
      if (program !== undefined && /\bsystem\s*\(|\|\s*"|"\s*\||\|&|getline/.test(program.text)) inspectCode(f, program.text, (text) => this.shell(text, depth + 1));
      this.generic(program === undefined ? o.operands : o.operands.slice(1));
      if (/>\s*"/.test(program?.text ?? '')) for (const m of (program?.text ?? '').matchAll(/>>?\s*"([^"]+)"/g)) this.touch(m[1] ?? '', 'write');
      return null;
    }
    this.judge(name, first, args, cmd, depth);
    return null;
  }

  /** Reads a command string (`sh -c STRING`, `su -c`, `watch`, `ssh host STRING`). */
  commandString(w: Word, depth: number): void {
    if (w.fetched) this.findings.add(R.remotePipeShell);
    else if (w.decoded) this.findings.add(R.decoded);
    else if (w.dynamic && !w.indirect) {
      this.findings.add(R.eval);
      // The literal parts still run: read what is there.
      this.shell(w.text.replace(/\$\(\.\.\.\)/g, 'x'), depth + 1);
    } else this.shell(w.text, depth + 1);
  }

  /** A shell or interpreter reading its program from standard input. */
  stdinScript(kind: 'shell' | 'code', cmd: Command, depth: number): void {
    const f = this.findings;
    for (const r of cmd.redirects) {
      if (r.kind === 'heredoc' || r.kind === 'herestring') {
        if (r.target.dynamic && r.kind === 'herestring') {
          f.add(r.target.fetched ? R.remotePipeShell : r.target.decoded ? R.decoded : R.eval);
          return;
        }
        if (kind === 'shell') this.shell(r.body ?? '', depth + 1);
        else inspectCode(f, r.body ?? '', (text) => this.shell(text, depth + 1));
        return;
      }
      if (r.kind === 'read') {
        if (this.script.produced.has(pathFacts(r.target.text).normal)) f.add(R.downloadExec);
        return;
      }
    }
    const upstream = cmd.pipeFrom;
    if (upstream === null || upstream.length === 0) return;
    if (upstream.some((c) => isFetchCommand(c.argv) || /^(?:nc|ncat|netcat|socat|telnet|openssl)$/.test(programName(c.argv[0]?.text ?? '')))) {
      const network = upstream.some((c) => /^(?:nc|ncat|netcat|socat|telnet|openssl)$/.test(programName(c.argv[0]?.text ?? '')));
      f.add(network ? R.reverseShell : R.remotePipeShell);
      return;
    }
    if (upstream.some((c) => isDecoderCommand(c.argv) || c.argv.some((w) => w.decoded))) {
      f.add(R.decoded);
      return;
    }
    const literal = upstream.length === 1 && /^(?:echo|printf)$/.test(programName(upstream[0]?.argv[0]?.text ?? '')) && !anyDynamic(upstream[0]?.argv ?? []);
    if (literal) {
      const joined = joinWords((upstream[0]?.argv ?? []).slice(1).filter((w) => !/^-[neE]+$/.test(w.text)));
      // Version 6: the \n escapes of echo -e and printf end lines as the interpreter will read them.
      const text = this.v6 ? joined.replace(/\\n/g, '\n') : joined;
      if (kind === 'shell') this.shell(text, depth + 1);
      else inspectCode(f, text, (t) => this.shell(t, depth + 1));
      return;
    }
    if (upstream.length === 1 && /^(?:cat)$/.test(programName(upstream[0]?.argv[0]?.text ?? '')) && (upstream[0]?.argv.length ?? 0) === 2) {
      const file = upstream[0]?.argv[1];
      if (file !== undefined && this.script.produced.has(pathFacts(file.text).normal)) f.add(R.downloadExec);
      if (file !== undefined && !file.dynamic && (pathFacts(file.text).classes & (PathClass.temp | PathClass.dynamic)) === 0) return;
    }
    f.add(R.pipeToShell);
  }

  shellProgram(name: string, args: readonly Word[], cmd: Command, depth: number): null {
    const o = readOptions(args, new Set(['o', 'O', 'init-file', 'rcfile']), true);
    const f = this.findings;
    if (o.short.has('c')) {
      const command = o.operands[0];
      // Version 5: `sh -c 'body' NAME ARG...` reads the body with $1, $2, "$@" as the arguments given.
      if (command !== undefined) this.commandString(this.v5 && o.operands.length > 1 ? withPositional(command, o.operands.slice(1)) : command, depth);
      return null;
    }
    const script = o.operands[0];
    if (script === undefined || o.short.has('s') || script.text === '/dev/stdin' || script.text === '-') {
      this.stdinScript('shell', cmd, depth);
      if (o.short.has('i') && cmd.redirects.some((r) => /\/dev\/(?:tcp|udp)\//.test(r.target.text))) f.add(R.reverseShell);
      return null;
    }
    if (script.fetched) f.add(R.remotePipeShell);
    else if (script.decoded) f.add(R.decoded);
    else if (script.procSubst) f.add(R.procSubst);
    else if (script.dynamic) f.add(R.indirection);
    else if (this.script.produced.has(pathFacts(script.text).normal)) f.add(R.downloadExec);
    else this.touch(script.text, 'read');
    void name;
    return null;
  }

  interpreter(name: string, args: readonly Word[], cmd: Command, depth: number): readonly Word[] | null {
    const f = this.findings;
    let code: Word | undefined;
    let operands: readonly Word[] = [];
    const codes: Word[] = [];
    switch (name) {
      case 'python': case 'pypy': {
        const o = readOptions(args, new Set(['c', 'm', 'W', 'X', 'Q']), true);
        code = o.values.get('c');
        const module = o.values.get('m');
        if (module !== undefined) {
          const m = module.text;
          if (m === 'pip' || m === 'pip3' || m === 'ensurepip') return [word('pip'), ...o.operands];
          if (m === 'base64' && o.operands.some((w) => w.text === '-d')) f.add(R.decoded);
          if (m === 'smtpd' || m === 'pyftpdlib') f.add(R.rawSocket);
          // Version 3: serving a directory outside the project (home, /) over HTTP publishes it.
          if (this.v3 && (m === 'http.server' || m === 'SimpleHTTPServer')) {
            const served = args.findIndex((w) => w.text === '-d' || w.text === '--directory' || w.text.startsWith('--directory='));
            const dir = served === -1 ? undefined : args[served]?.text.startsWith('--directory=') ? args[served]?.text.slice(12) : args[served + 1]?.text;
            const where = dir ?? this.cwd;
            if (where !== undefined && where !== null && (pathFacts(this.resolve(where)).classes & (PathClass.project | PathClass.temp)) === 0) f.add(R.upload);
          }
          if (m === 'venv' || m === 'pytest' || m === 'unittest' || m === 'build' || m === 'mypy' || m === 'black' || m === 'ruff' || m === 'pylint' || m === 'flake8') return null;
          this.generic(o.operands);
          return null;
        }
        operands = o.operands;
        break;
      }
      case 'node': case 'nodejs': case 'bun': {
        const o = readOptions(args, new Set(['e', 'p', 'eval', 'print', 'r', 'require', 'import', 'loader', 'experimental-loader', 'input-type', 'C', 'conditions']), true);
        code = o.values.get('e') ?? o.values.get('eval') ?? o.values.get('p') ?? o.values.get('print');
        operands = o.operands;
        if (name === 'bun' && (operands[0]?.text === 'install' || operands[0]?.text === 'add' || operands[0]?.text === 'x')) return [word('npm'), ...operands];
        if (name === 'bun' && (operands[0]?.text === 'run' || operands[0]?.text === 'test' || operands[0]?.text === 'build')) return null;
        break;
      }
      case 'deno': {
        if (args[0]?.text === 'eval') code = args[1];
        else {
          this.generic(args.slice(1));
          return null;
        }
        break;
      }
      case 'perl': case 'ruby': case 'lua': case 'luajit': case 'php': case 'osascript': case 'rscript': case 'tclsh': case 'expect': case 'julia': {
        const letter = name === 'php' ? 'r' : name === 'rscript' ? 'e' : 'e';
        const o = readOptions(args, new Set([letter, 'E', 'M', 'I', 'l', 'r', 'x', 'd', 'C', 'c', 'f', 'i', 'n', 'z']), true);
        for (const [key, value] of o.allValues) if (key === letter || key === 'E' || (name === 'expect' && key === 'c')) codes.push(value);
        if ((name === 'perl' || name === 'ruby') && o.allValues.some(([k, v]) => (k === 'M' || k === 'r') && /socket/i.test(v.text))) f.add(R.rawSocket);
        if ((name === 'perl' || name === 'ruby') && o.short.has('i') && o.allValues.length > 0) for (const w of o.operands) this.touch(w.text, 'write');
        // Version 3: php's built-in server with a document root outside the project publishes it.
        if (this.v3 && name === 'php' && args.some((w) => w.text === '-S')) {
          const root = args.findIndex((w) => w.text === '-t');
          const where = root === -1 ? this.cwd : args[root + 1]?.text;
          if (where !== undefined && where !== null && (pathFacts(this.resolve(where)).classes & (PathClass.project | PathClass.temp)) === 0) f.add(R.upload);
        }
        code = codes[0];
        operands = o.operands;
        break;
      }
      case 'pwsh': case 'powershell': {
        const lower = args.map((w) => w.text.toLowerCase());
        const enc = lower.findIndex((t) => /^-(?:e|ec|enc|encodedcommand)$/.test(t));
        if (enc !== -1) {
          f.add(R.decoded);
          return null;
        }
        const c = lower.findIndex((t) => /^-(?:c|command)$/.test(t));
        if (c !== -1) code = args[c + 1];
        break;
      }
      default: {
        // Version 6: the other interpreters (wish, irb, jshell, groovy, scala) read their program from standard input too.
        if (this.v6) {
          const script = readOptions(args, new Set(['e', 'c', 'f']), true).operands[0];
          if (script === undefined || script.text === '-' || script.text === '/dev/stdin') this.stdinScript('code', cmd, depth);
        }
        this.generic(args);
        return null;
      }
    }
    const all = code === undefined ? codes : [code, ...codes.slice(1)];
    // Version 5: the ledger's own CLI run through node (node services/ledger/bin/ledger.js grant ...).
    if (this.v5 && all.length === 0 && operands[0] !== undefined && LEDGER_SCRIPT.test(operands[0].text)) return [word('ledger'), ...operands.slice(1)];
    if (all.length === 0) {
      const script = operands[0];
      if (script === undefined || script.text === '-' || script.text === '/dev/stdin') this.stdinScript('code', cmd, depth);
      else if (script.fetched) f.add(R.remotePipeShell);
      else if (script.decoded) f.add(R.decoded);
      else if (script.procSubst) f.add(R.procSubst);
      else if (this.script.produced.has(pathFacts(script.text).normal)) f.add(R.downloadExec);
      this.generic(operands);
      return null;
    }
    for (const c of all) {
      if (c.fetched) f.add(R.remotePipeShell);
      else if (c.decoded) f.add(R.decoded);
      else if (c.dynamic && !c.indirect) f.add(R.eval);
      const text = name === 'osascript' ? c.text.replace(/do shell script\s+/gi, 'system(') : c.text;
      if (depth + 1 > MAX_SHELL_DEPTH) f.add(R.depth);
      else inspectCode(f, text, (t) => this.shell(t, depth + 1));
    }
    this.generic(operands);
    return null;
  }

  find(name: string, args: readonly Word[], depth: number): readonly Word[] | null {
    const f = this.findings;
    const roots: Word[] = [];
    let i = 0;
    if (name === 'fd' || name === 'fdfind') {
      const o = readOptions(args, new Set(['x', 'X', 'exec', 'exec-batch', 'e', 'extension', 't', 'type', 'd', 'max-depth', 'E', 'exclude']));
      const pattern = o.operands[0];
      const root = o.operands[1] ?? word('.');
      if (pattern !== undefined && CREDENTIAL_NAME_PATTERN.test(pattern.text) && (pathFacts(root.text).classes & PathClass.project) === 0) f.add(R.credentialSearch);
      const exec = args.findIndex((w) => w.text === '-x' || w.text === '-X' || w.text === '--exec' || w.text === '--exec-batch');
      if (exec !== -1) return args.slice(exec + 1).map((w) => (w.text === '{}' ? root : w));
      return null;
    }
    while (i < args.length && !(args[i] as Word).text.startsWith('-') && (args[i] as Word).text !== '(' && (args[i] as Word).text !== '!') roots.push(args[i++] as Word);
    if (roots.length === 0) roots.push(word('.'));
    const rootOutsideProject = roots.some((r) => (pathFacts(r.text).classes & PathClass.project) === 0);
    let inner: Word[] | null = null;
    for (; i < args.length; i++) {
      const t = (args[i] as Word).text;
      if (t === '-delete') {
        // A filtered delete (-name, -type, -mtime, ...) removes what matches, not the tree.
        // Version 6: only the tests of the delete's own branch filter it.
        const filtered = this.v6 ? findBranchTests(args, i, FIND_FILTER) : args.some((w) => /^-(?:i?name|i?path|i?regex|wholename|type|mtime|mmin|atime|ctime|newer|size|empty|user|group|perm)$/.test(w.text));
        for (const r of roots) {
          const facts = pathFacts(r.text);
          if (!filtered) this.touch(r.text, 'delete_tree');
          else if ((facts.classes & (PathClass.project | PathClass.temp)) === 0 || (facts.classes & PathClass.dynamic) !== 0 || facts.normal.startsWith('..')) {
            this.touch(r.text, 'delete');
            f.add(R.recursiveDelete);
          }
        }
      }
      else if ((t === '-name' || t === '-iname' || t === '-path' || t === '-ipath' || t === '-regex' || t === '-wholename') && i + 1 < args.length) {
        const pattern = (args[++i] as Word).text;
        if (CREDENTIAL_NAME_PATTERN.test(pattern) && rootOutsideProject) f.add(R.credentialSearch);
        else if (CREDENTIAL_NAME_PATTERN.test(pattern) && /id_|\.pem|\.key|wallet|credentials|\.aws|\.ssh|secret|password|token/.test(pattern)) f.add(R.credentialSearch);
      } else if ((t === '-perm') && i + 1 < args.length) {
        const mode = (args[++i] as Word).text;
        if (/[-/]?(?:[4267]000|u=s|g=s|u\+s)/.test(mode) && rootOutsideProject) f.add(R.credentialSearch);
      } else if ((t === '-fprint' || t === '-fprintf' || t === '-fls' || t === '-fprint0') && i + 1 < args.length) this.touch((args[++i] as Word).text, 'write');
      else if (t === '-exec' || t === '-execdir' || t === '-ok' || t === '-okdir') {
        const start = i + 1;
        let end = start;
        while (end < args.length && (args[end] as Word).text !== ';' && (args[end] as Word).text !== '+' && (args[end] as Word).text !== '\\;') end++;
        const body = args.slice(start, end);
        // Version 3: with a name or path filter under a project root, {} is a match inside the root, not the root itself.
        // Version 6: only the tests of the action's own branch (not a `-prune` branch beside it).
        const named = this.v6 ? findBranchTests(args, i, FIND_NAME_FILTER) : this.v3 && args.some((w) => /^-(?:i?name|i?path|i?regex|wholename)$/.test(w.text));
        // Version 3: a deleting program run on every match deletes under the root, as -delete does (rm -f without -r included).
        const deletes = this.v3 && body.length > 0 && /^(?:rm|grm|unlink|shred|srm|wipe|truncate)$/.test(programName((body[0] as Word).text));
        const filtered = this.v6 ? findBranchTests(args, i, FIND_FILTER) : args.some((w) => /^-(?:i?name|i?path|i?regex|wholename|type|mtime|mmin|atime|ctime|newer|size|empty|user|group|perm)$/.test(w.text));
        for (const r of roots) {
          const facts = pathFacts(this.resolve(r.text));
          if (deletes) {
            if (!filtered) this.touch(r.text, 'delete_tree');
            else if ((facts.classes & (PathClass.project | PathClass.temp)) === 0 || (facts.classes & PathClass.dynamic) !== 0 || facts.normal.startsWith('..')) {
              this.touch(r.text, 'delete');
              f.add(R.recursiveDelete);
            }
          }
          const match = named && (facts.classes & PathClass.project) !== 0 && (facts.classes & PathClass.dynamic) === 0 ? `${r.text}/found` : r.text;
          const substituted = body.map((w) => (w.text.includes('{}') ? { ...w, text: w.text.replace('{}', match) } : w));
          // Version 5: every -exec runs per match, in order (encrypt, then delete): each is read now, in that order.
          if (this.v5) {
            this.perMatch = true;
            this.command({ argv: substituted, redirects: [], pipeFrom: null }, depth);
          } else if (inner === null) inner = substituted;
          else this.command({ argv: substituted, redirects: [], pipeFrom: null }, depth);
        }
        i = end;
      }
    }
    // Version 5: files encrypted per match and then deleted by find itself.
    if (this.v5 && this.encrypted.size > 0 && args.some((w) => w.text === '-delete')) f.add(R.dataEncrypted);
    return inner;
  }

  ssh(args: readonly Word[], cmd: Command, depth: number): null {
    const f = this.findings;
    const o = readOptions(args, new Set(['b', 'c', 'D', 'E', 'e', 'F', 'I', 'i', 'J', 'L', 'l', 'm', 'O', 'o', 'p', 'Q', 'R', 'S', 'W', 'w', 'B']), true);
    if (hasOption(o, 'RDw') || o.values.has('W')) f.add(R.rawSocket);
    for (const [key, value] of o.allValues) {
      if (key === 'o' && /^(?:proxycommand|localcommand|permitlocalcommand)\s*[= ]/i.test(value.text)) {
        f.add(R.injectionEnv);
        const eq = value.text.search(/[= ]/);
        this.shell(value.text.slice(eq + 1), depth + 1);
      }
      if (key === 'F') this.touch(value.text, 'read');
    }
    const remote = o.operands.slice(1);
    if (remote.length > 0) this.commandString({ ...word(joinWords(remote)), dynamic: anyDynamic(remote), fetched: remote.some((w) => w.fetched), decoded: remote.some((w) => w.decoded) }, depth);
    if (cmd.pipeFrom !== null || cmd.redirects.some((r) => r.kind === 'read')) {
      const reads = cmd.redirects.filter((r) => r.kind === 'read');
      if (reads.length > 0 || (cmd.pipeFrom ?? []).some((c) => c.argv.length > 0 && !/^(?:echo|printf|yes|true)$/.test(programName(c.argv[0]?.text ?? '')))) f.add(R.upload);
    }
    return null;
  }

  docker(args: readonly Word[], depth: number): readonly Word[] | null {
    const f = this.findings;
    const withValue = new Set(['v', 'volume', 'mount', 'e', 'env', 'u', 'user', 'w', 'workdir', 'name', 'p', 'publish', 'network', 'net', 'pid', 'ipc', 'uts', 'userns', 'cap-add', 'cap-drop', 'security-opt', 'device', 'entrypoint', 'env-file', 'label', 'l', 'h', 'hostname', 'platform', 'restart', 'm', 'memory', 'cpus', 'c', 'cgroupns', 'log-driver', 'add-host', 'dns', 'f', 'filter', 'format', 'H', 'host', 'context', 'config', 't', 'tag', 'file', 'build-arg', 'target', 'mount-type', 'tmpfs', 'gpus', 'runtime', 'ulimit', 'group-add', 'stop-signal', 'cidfile', 'detach-keys', 'pull', 'health-cmd', 'privileged-mode']);
    let i = 0;
    while (i < args.length && (args[i] as Word).text.startsWith('-')) i += /^(?:-H|--host|--context|--config|-c|--log-level|-l)$/.test((args[i] as Word).text) ? 2 : 1;
    let sub = args[i]?.text ?? '';
    let rest = args.slice(i + 1);
    if (sub === 'container' || sub === 'image' || sub === 'system' || sub === 'volume' || sub === 'network' || sub === 'builder' || sub === 'compose') {
      const group = sub;
      sub = rest[0]?.text ?? '';
      rest = rest.slice(1);
      if (group === 'system' && sub === 'prune') f.add(R.container);
      if (group === 'volume' && (sub === 'rm' || sub === 'prune')) f.add(R.container);
      if (group === 'image' && sub === 'prune') f.add(R.container);
      if (group === 'compose' && sub === 'down' && rest.some((w) => w.text === '-v' || w.text === '--volumes')) f.add(R.container);
      if (group === 'compose') return null;
    }
    switch (sub) {
      case 'run': case 'create': case 'exec': {
        // Version 4: for these, -t is the tty flag (`docker run -it`), not build's --tag.
        const o = readOptions(rest, this.v4 ? withoutTty(withValue) : withValue, true);
        if (hasOption(o, '', 'privileged')) f.add(R.containerEscape);
        for (const [key, value] of o.allValues) {
          const v = value.text.toLowerCase();
          if ((key === 'pid' || key === 'ipc' || key === 'uts' || key === 'userns' || key === 'cgroupns') && v === 'host') f.add(R.containerEscape);
          if ((key === 'net' || key === 'network') && v === 'host') f.add(R.rawSocket);
          if (key === 'cap-add' && /^(?:all|sys_admin|sys_ptrace|sys_module|dac_read_search|dac_override|sys_rawio|net_admin|bpf|perfmon|setuid|setgid|sys_boot|mknod)$/.test(v.replace(/^cap_/, ''))) f.add(R.containerEscape);
          if (key === 'security-opt' && /unconfined|label[:=]disable|no-new-privileges[:=]false/.test(v)) f.add(R.containerEscape);
          if (key === 'device' && /^\/dev\/(?:sd|nvme|vd|xvd|mem|kmem|disk|dm-|mapper|fuse)/.test(v)) f.add(R.containerEscape);
          if (key === 'v' || key === 'volume' || key === 'mount') {
            const source = key === 'mount' ? mountSource(v) : v.split(':')[0] ?? '';
            if (mountGivesHost(source)) f.add(R.containerEscape);
          }
          if (key === 'env-file') this.touch(value.text, 'read');
          if (key === 'e' || key === 'env') {
            const eq = value.text.indexOf('=');
            if (eq > 0 && value.text.slice(0, eq).toUpperCase().startsWith('LD_PRELOAD')) f.add(R.loader);
          }
        }
        if (o.operands.length <= 1) return null;
        return o.operands.slice(1);
      }
      case 'kill': case 'rm': case 'rmi': case 'prune': {
        if (sub === 'kill' || hasOption(readOptions(rest), 'f', 'force')) f.add(R.container);
        if (rest.some((w) => /ledger/i.test(w.text))) f.add(R.ledgerTamper);
        return null;
      }
      case 'stop': case 'pause': {
        if (rest.some((w) => /ledger/i.test(w.text))) f.add(R.ledgerTamper);
        return null;
      }
      case 'cp': {
        for (const w of rest) if (!w.text.includes(':') && !w.text.startsWith('-')) this.touch(w.text, 'read');
        return null;
      }
      case 'login': {
        if (rest.some((w) => w.text === '-p' || w.text.startsWith('--password'))) f.add(R.credentialStore);
        return null;
      }
      case 'build': {
        this.generic(rest.filter((w) => !w.text.startsWith('-')));
        return null;
      }
      default:
        void depth;
        return null;
    }
  }

  kubectl(args: readonly Word[], depth: number): readonly Word[] | null {
    const f = this.findings;
    const o = readOptions(args, new Set(['n', 'namespace', 'context', 'kubeconfig', 'c', 'container', 'l', 'selector', 'o', 'output', 'f', 'filename', 'replicas', 'cluster', 'user', 's', 'server', 'token', 'as', 'grace-period', 'timeout', 'i']));
    const [sub, ...rest] = o.operands.map((w) => w.text);
    const kubeconfig = o.values.get('kubeconfig');
    if (kubeconfig !== undefined) this.touch(kubeconfig.text, 'read');
    if (o.values.has('token')) f.add(R.credentialStore);
    switch (sub) {
      case 'delete': case 'drain': case 'cordon': case 'replace':
        if (sub !== 'replace' || hasOption(o, '', 'force')) f.add(R.cluster);
        return null;
      case 'scale': {
        const replicas = o.values.get('replicas')?.text;
        if (replicas === '0') f.add(R.cluster);
        return null;
      }
      case 'exec': case 'debug': case 'attach': {
        const dash = args.findIndex((w) => w.text === '--');
        if (sub === 'debug' && args.some((w) => w.text.startsWith('node/'))) f.add(R.containerEscape);
        if (dash !== -1) return args.slice(dash + 1);
        return null;
      }
      case 'get': case 'describe': case 'edit': {
        const kind = (rest[0] ?? '').toLowerCase();
        if (/^secrets?(?:\/|$)/.test(kind) || kind.split(',').some((k) => /^secrets?$/.test(k))) f.add(R.credentialStore);
        return null;
      }
      case 'config': {
        if (rest[0] === 'view' && (hasOption(o, '', 'raw') || args.some((w) => w.text === '--raw'))) f.add(R.credentialStore);
        return null;
      }
      case 'create': case 'apply': case 'patch': case 'set': {
        if (rest.some((w) => /^(?:clusterrolebinding|rolebinding)$/i.test(w)) && args.some((w) => /cluster-admin/i.test(w.text))) f.add(R.accounts);
        if (rest[0] === 'token') f.add(R.credentialStore);
        this.generic(o.values.get('f') !== undefined ? [o.values.get('f') as Word] : []);
        return null;
      }
      case 'cp': {
        for (const w of rest) if (!w.includes(':')) this.touch(w, 'read');
        return null;
      }
      case 'port-forward': case 'proxy':
        // Version 11: a port-forward without --address listens on loopback only (kubectl's default): nothing is opened to the network.
        if (!(analysis.v11 && sub === 'port-forward' && !args.some((w) => /^--address(?:=|$)/.test(w.text)))) f.add(R.rawSocket);
        return null;
      default:
        void depth;
        return null;
    }
  }

  /** Programs that wrap nothing: the rule table proper. */
  judge(name: string, first: Word, args: readonly Word[], cmd: Command, depth: number): void {
    const f = this.findings;
    switch (name) {
      // --- deletion ---------------------------------------------------------------------------
      case 'rm': case 'grm': case 'unlink': case 'rmdir': case 'trash': case 'trash-put': {
        const o = readOptions(args);
        const recursive = hasOption(o, 'rR', 'recursive', 'dir') && name !== 'unlink';
        if (o.long.has('no-preserve-root')) f.add(R.rootDelete);
        const targets = o.operands.length === 0 && cmd.pipeFrom !== null ? [{ ...word('$(stdin)'), dynamic: true }] : o.operands;
        for (const t of targets) this.touch(t.dynamic && !t.indirect && !t.text.startsWith('$HOME') ? '$unresolved' : t.text, recursive ? 'delete_tree' : 'delete');
        for (const t of targets) if (pathFacts(t.text).classes & PathClass.ledger) f.add(R.ledgerTamper);
        return;
      }
      case 'shred': case 'srm': case 'wipe': case 'scrub': case 'secure-delete': case 'sfill': case 'sdmem': case 'sswap': {
        f.add(R.secureDelete);
        const o = readOptions(args, new Set(['n', 's', 'iterations', 'size', 'random-source']));
        for (const t of o.operands) {
          this.touch(t.text, hasOption(o, 'rR', 'recursive') ? 'delete_tree' : 'delete');
          if (/^\/dev\/(?:sd|nvme|hd|vd|xvd|mmcblk|disk|md|dm-|mapper)/.test(t.text)) f.add(R.disk);
        }
        return;
      }
      case 'truncate': {
        const o = readOptions(args, new Set(['s', 'r', 'size', 'reference']));
        for (const t of o.operands) {
          this.touch(t.text, 'write');
          if ((pathFacts(t.text).classes & (PathClass.project | PathClass.temp)) === 0) this.touch(t.text, 'delete');
        }
        return;
      }
      case 'mkfs': case 'mke2fs': case 'mkswap': case 'mkntfs': case 'mkdosfs': case 'wipefs': case 'blkdiscard': case 'newfs': case 'mkfs.ext4': case 'mkfs.ext3': case 'mkfs.ext2': case 'mkfs.xfs': case 'mkfs.btrfs': case 'mkfs.vfat': case 'mkfs.fat': case 'mkfs.ntfs': case 'mkfs.exfat':
        f.add(R.disk);
        return;
      case 'fdisk': case 'sfdisk': case 'parted': case 'gdisk': case 'sgdisk': case 'cfdisk': case 'diskutil': case 'hdparm': case 'badblocks': case 'cryptsetup': case 'lvremove': case 'vgremove': case 'pvremove': case 'zpool': case 'zfs': {
        const o = readOptions(args);
        const listing = hasOption(o, 'l', 'list') || args.some((w) => /^(?:list|info|status|print|get|iostat)$/.test(w.text));
        if (!listing) f.add(/^(?:diskutil|zpool|zfs|hdparm)$/.test(name) && !args.some((w) => /^(?:erase\w*|zerodisk|destroy|secureerase|partitiondisk|--security-erase|--trim-sector-ranges|reformat)$/i.test(w.text)) ? R.systemDelete : R.disk);
        return;
      }
      case 'dd': {
        for (const w of args) {
          if (w.text.startsWith('of=')) this.touch(w.text.slice(3), 'write');
          if (w.text.startsWith('if=')) {
            this.touch(w.text.slice(3), 'read');
            if (/^\/dev\/(?:sd|nvme|hd|vd|xvd|mmcblk|disk|md|dm-|mapper|mem|kmem)/.test(w.text.slice(3))) f.add(R.credentialFile);
          }
        }
        return;
      }
      case 'mv': case 'gmv': {
        const o = readOptions(args, new Set(['t', 'S', 'target-directory', 'suffix']));
        const target = o.values.get('t') ?? o.values.get('target-directory') ?? o.operands[o.operands.length - 1];
        const sources = o.values.has('t') || o.values.has('target-directory') ? o.operands : o.operands.slice(0, -1);
        for (const s of sources) {
          const facts = pathFacts(s.text);
          this.touch(s.text, 'delete');
          if ((facts.classes & PathClass.root) !== 0) f.add(R.rootDelete);
          if ((facts.classes & PathClass.ledger) !== 0) f.add(R.ledgerTamper);
        }
        if (target !== undefined) {
          if (target.text === '/dev/null') f.add(R.systemDelete);
          this.touch(target.text, 'write');
        }
        return;
      }
      case 'cp': case 'gcp': case 'install': case 'ln': case 'link': case 'rsync': case 'ditto': case 'scp': case 'sftp': case 'rclone': case 'pscp': {
        this.copy(name, args, cmd);
        return;
      }
      case 'tee': case 'sponge': {
        const o = readOptions(args);
        for (const t of o.operands) if (!SAFE_SINK.test(t.text)) this.touch(t.text, 'write');
        return;
      }
      case 'touch': case 'mkdir': case 'mkfifo': case 'mknod': case 'setfacl': case 'chgrp': case 'chflags': {
        const o = readOptions(args, new Set(['m', 'mode', 'd', 'date', 'r', 'reference', 't', 'M', 'x', 'X', 'set-file', 'modify-file']));
        const operands = name === 'chgrp' ? o.operands.slice(1) : o.operands;
        for (const t of operands) this.touch(t.text, 'write');
        if (this.v3 && name === 'chgrp' && hasOption(o, 'R', 'recursive') && operands.some((t) => (pathFacts(this.resolve(t.text)).classes & PathClass.root) !== 0)) f.add(R.systemDelete);
        // Version 3: copying another file's times (touch -r), or setting them outside the project, forges timestamps.
        if (this.v3 && name === 'touch' && (o.values.has('r') || o.values.has('reference') || (o.values.has('d') || o.values.has('date') || o.values.has('t')) && operands.some((t) => (pathFacts(this.resolve(t.text)).classes & PathClass.project) === 0))) f.add(R.attributes);
        if (name === 'mkfifo' && cmd.pipeFrom !== null) f.add(R.rawSocket);
        return;
      }
      case 'chattr': {
        f.add(R.attributes);
        for (const t of args) if (!/^[-+=]/.test(t.text)) this.touch(t.text, 'write');
        return;
      }
      case 'chmod': {
        this.chmod(args);
        return;
      }
      case 'chown': case 'lchown': {
        const o = readOptions(args, new Set(['reference', 'from']));
        const owner = o.operands[0]?.text ?? '';
        if (hasOption(o, 'R', 'recursive') && /^(?:root|0)(?::(?:root|0|wheel)?)?$/.test(owner)) f.add(R.chownRoot);
        if (this.v3 && hasOption(o, 'R', 'recursive') && o.operands.slice(1).some((t) => (pathFacts(this.resolve(t.text)).classes & PathClass.root) !== 0)) f.add(R.systemDelete);
        for (const t of o.operands.slice(1)) this.touch(t.text, 'write');
        return;
      }
      case 'setcap': {
        const caps = args.map((w) => w.text.toLowerCase()).join(' ');
        f.add(/cap_(?:setuid|setgid|sys_admin|dac_override|dac_read_search|sys_ptrace|sys_module|chown|fowner|net_admin|net_raw|bpf|all)|=ep|all[+=]/.test(caps) || !caps.includes('-r') ? R.capabilities : R.attributes);
        for (const t of args) if (t.text.startsWith('/')) this.touch(t.text, 'write');
        return;
      }
      case 'mount': case 'umount': case 'losetup': case 'fusermount': case 'sshfs': case 'bindfs': {
        const o = readOptions(args, new Set(['t', 'o', 'L', 'U', 'types', 'options']));
        if (name === 'mount' && o.operands.length === 0 && !hasOption(o, 'a', 'all', 'bind', 'rbind', 'move')) return;
        f.add(R.mountChroot);
        if (hasOption(o, '', 'bind', 'rbind') && o.operands.some((w) => w.text === '/' || (pathFacts(w.text).classes & PathClass.root) !== 0)) f.add(R.containerEscape);
        return;
      }
      case 'sysctl': {
        const o = readOptions(args);
        if (hasOption(o, 'wp', 'write', 'load', 'system') || o.operands.some((w) => w.text.includes('='))) f.add(R.kernel);
        return;
      }
      case 'insmod': case 'rmmod': case 'kmod': case 'kextload': case 'kextunload': case 'depmod':
        f.add(R.kernel);
        return;
      case 'modprobe': {
        f.add(R.kernel);
        return;
      }
      case 'useradd': case 'userdel': case 'usermod': case 'groupadd': case 'groupdel': case 'groupmod': case 'passwd': case 'chpasswd': case 'adduser': case 'deluser': case 'addgroup': case 'delgroup': case 'gpasswd': case 'vipw': case 'vigr': case 'chsh': case 'chfn': case 'pwconv': case 'newusers': case 'dscl': case 'sysadminctl': case 'pw': {
        f.add(R.accounts);
        if (args.some((w) => /^(?:sudo|wheel|admin|root|docker|adm|lxd|disk|shadow)$/.test(w.text)) || args.some((w) => /(?:^|,)(?:sudo|wheel|admin|root|docker)(?:,|$)/.test(w.text))) f.add(R.sudoersPam);
        return;
      }
      case 'visudo': {
        f.add(R.sudoersPam);
        return;
      }
      case 'crontab': {
        const o = readOptions(args, new Set(['u']));
        if (o.short.has('r')) {
          f.add(R.crontabRemove);
          return;
        }
        if (o.short.has('l') && !o.short.has('e')) return;
        f.add(R.scheduled);
        for (const t of o.operands) this.touch(t.text, 'read');
        return;
      }
      case 'at': case 'batch': case 'atq': case 'atrm': {
        if (name === 'atq' || args.some((w) => w.text === '-l')) return;
        f.add(R.scheduled);
        this.stdinScript('shell', cmd, depth);
        return;
      }
      case 'systemctl': case 'service': case 'rc-service': case 'rc-update': case 'update-rc.d': case 'chkconfig': case 'launchctl': case 'initctl': case 'sv': case 'supervisorctl': case 'pm2': case 'insserv': {
        this.services(name, args);
        return;
      }
      case 'shutdown': case 'reboot': case 'halt': case 'poweroff':
        f.add(R.shutdown);
        return;
      case 'init': case 'telinit':
        if (args.some((w) => w.text === '0' || w.text === '6')) f.add(R.shutdown);
        return;
      case 'kill': case 'pkill': case 'killall': case 'killall5': case 'skill': case 'slay': {
        this.kill(name, args);
        return;
      }
      case 'journalctl': {
        if (args.some((w) => w.text.startsWith('--vacuum') || w.text === '--rotate' || w.text === '--flush' && false)) f.add(R.logging);
        return;
      }
      case 'auditctl': {
        const text = joinWords(args);
        if (/(?:^|\s)-D\b|(?:^|\s)-d\b|(?:^|\s)-e\s*0\b/.test(text)) f.add(R.logging);
        return;
      }
      case 'logrotate': case 'logger':
        return;
      case 'iptables': case 'ip6tables': case 'iptables-legacy': case 'iptables-nft': case 'ufw': case 'nft': case 'setenforce': case 'aa-disable': case 'aa-complain': case 'aa-teardown': case 'apparmor_parser': case 'firewall-cmd': case 'pfctl': case 'spctl': case 'csrutil': case 'defaults': case 'tmutil': case 'ebtables': case 'auditpol': {
        this.security(name, args);
        return;
      }
      // --- network --------------------------------------------------------------------------------
      case 'curl': case 'wget': case 'wget2': case 'iwr': case 'irm': case 'invoke-webrequest': case 'invoke-restmethod': case 'http': case 'https': case 'xh': case 'xhs': case 'httpie': case 'aria2c': case 'lwp-request': case 'lynx': case 'links': case 'elinks': case 'fetch': case 'curlie': case 'grpcurl': {
        this.http(name, args, cmd);
        return;
      }
      case 'nc': case 'ncat': case 'netcat': case 'socat': case 'telnet': case 'cryptcat': case 'pwncat': case 'sbd': case 'openssl': case 'tftp': case 'ftp': case 'lftp': case 'smbclient': case 'ngrok': case 'cloudflared': case 'frpc': case 'chisel': case 'bore': case 'localtunnel': case 'lt': case 'iodine': case 'dnscat': case 'dnscat2': {
        this.socket(name, args, cmd);
        return;
      }
      case 'dig': case 'nslookup': case 'host': case 'drill': case 'ping': case 'traceroute': {
        if (anyDynamic(args) || (cmd.pipeFrom !== null && false)) f.add(R.upload);
        return;
      }
      case 'ssh-copy-id':
        f.add(R.ssh);
        return;
      case 'ssh-keygen': {
        const o = readOptions(args, new Set(['f', 't', 'b', 'C', 'N', 'P', 'R', 'F', 'Y', 'n', 'I', 's', 'O', 'a', 'm', 'E']));
        const file = o.values.get('f');
        if (file !== undefined) {
          if (o.short.has('y') || o.short.has('l') || o.short.has('e') || o.short.has('p')) this.touch(file.text, 'read');
          else if ((pathFacts(file.text).classes & PathClass.ssh) !== 0 && !o.short.has('R')) this.touch(file.text, 'write');
        }
        return;
      }
      case 'ssh-add':
        for (const w of args) if (!w.text.startsWith('-')) this.touch(w.text, 'read');
        return;
      // --- cloud --------------------------------------------------------------------------------
      case 'aws': case 'gsutil': case 'gcloud': case 'az': case 'azcopy': case 'doctl': case 'oci': case 'b2': case 's3cmd': case 'mc': case 'heroku': case 'vercel': case 'flyctl': case 'fly': case 'wrangler': {
        this.cloud(name, args);
        return;
      }
      case 'terraform': case 'tofu': case 'pulumi': case 'cdk': case 'serverless': case 'sls': {
        if (args.some((w) => w.text === 'destroy' || w.text === '-destroy' || w.text === 'remove')) f.add(R.cluster);
        if (args.some((w) => w.text === 'state') && args.some((w) => w.text === 'rm' || w.text === 'pull')) f.add(R.cluster);
        return;
      }
      case 'helm': {
        if (args.some((w) => w.text === 'uninstall' || w.text === 'delete' || w.text === 'del')) f.add(R.cluster);
        if (args.some((w) => w.text === 'install' || w.text === 'upgrade') && args.some((w) => /^https?:\/\//.test(w.text) || w.text === '--repo')) f.add(R.remoteInstall);
        return;
      }
      case 'dropdb': case 'dropuser': case 'mysqladmin': case 'redis-cli': case 'mongo': case 'mongosh': case 'psql': case 'mysql': case 'mariadb': case 'sqlite3': case 'cqlsh': case 'influx': case 'etcdctl': case 'consul': {
        this.database(name, args);
        return;
      }
      // --- credentials ----------------------------------------------------------------------------
      case 'security': case 'secret-tool': case 'pass': case 'gopass': case 'keyctl': case 'vault': case 'op': case 'bw': case 'lpass': case 'keepassxc-cli': case 'kwallet-query': case 'gnome-keyring-daemon': case 'chamber': case 'sops': case 'berglas': case 'doppler-secrets': case 'aws-vault': case 'gh': case 'glab': case 'git-credential': case 'docker-credential-desktop': case 'docker-credential-osxkeychain': case 'docker-credential-pass': case 'docker-credential-secretservice': case 'gpg': case 'gpg2': case 'mimipenguin': case 'lazagne': case 'gcore': case 'procdump': case 'trufflehog': case 'gitleaks': case 'npm-token': {
        this.secrets(name, args);
        return;
      }
      case 'grep': case 'egrep': case 'fgrep': case 'rg': case 'ag': case 'ack': case 'git-grep': case 'zgrep': {
        this.grep(args, cmd);
        return;
      }
      case 'strings': case 'hexdump': case 'xxd': case 'od': {
        if (name === 'xxd' && args.some((w) => w.text === '-r')) {
          const out = args.filter((w) => !w.text.startsWith('-'));
          if (out.length >= 2) this.script.produced.add(pathFacts((out[out.length - 1] as Word).text).normal);
        }
        for (const w of args) if (!w.text.startsWith('-')) this.touch(w.text, 'read');
        if (args.some((w) => /^\/dev\/(?:mem|kmem)$|^\/proc\/kcore$/.test(w.text))) f.add(R.credentialFile);
        return;
      }
      case 'base64': case 'base32': case 'uudecode': {
        const o = readOptions(args, new Set(['o', 'output', 'w', 'wrap', 'i', 'input']));
        const out = o.values.get('o') ?? o.values.get('output');
        if (out !== undefined) this.script.produced.add(pathFacts(out.text).normal);
        for (const r of cmd.redirects) if (r.kind === 'write' && isDecoderCommand([first, ...args])) this.script.produced.add(pathFacts(r.target.text).normal);
        for (const t of o.operands) this.touch(t.text, 'read');
        const input = o.values.get('i') ?? o.values.get('input');
        if (input !== undefined) this.touch(input.text, 'read');
        return;
      }
      // --- supply chain -----------------------------------------------------------------------------
      case 'pip': case 'pip3': case 'pipx': case 'uv': case 'poetry': case 'pdm': case 'conda': case 'mamba': case 'easy_install': {
        this.pip(name, args);
        return;
      }
      case 'npm': case 'pnpm': case 'yarn': case 'npx': case 'pnpx': case 'bunx': case 'cnpm': {
        this.npm(name, args);
        return;
      }
      case 'cargo': case 'go': case 'gem': case 'bundle': case 'composer': case 'brew': case 'apt': case 'apt-get': case 'yum': case 'dnf': case 'zypper': case 'apk': case 'pacman': case 'snap': case 'flatpak': case 'dpkg': case 'rpm': case 'port': case 'nix-env': case 'add-apt-repository': case 'apt-key': case 'dotnet': case 'nuget': case 'mvn': case 'gradle': case 'deno-install': case 'gcloud-components': case 'sdk': case 'asdf': case 'mise': case 'krew': case 'code-insiders': {
        this.packages(name, args);
        return;
      }
      case 'git': {
        this.git(args);
        return;
      }
      case 'sed': case 'gsed': {
        const o = readOptions(args, new Set(['e', 'f', 'expression', 'file', 'l', 'line-length', 's', 'separate']));
        const inPlace = [...o.short].some((l) => l === 'i') || o.long.has('in-place') || args.some((w) => /^-[a-zA-Z]*i/.test(w.text) || w.text.startsWith('--in-place'));
        const files = o.values.has('e') || o.values.has('expression') || o.values.has('f') ? o.operands : o.operands.slice(1);
        for (const t of files) this.touch(t.text, inPlace ? 'write' : 'read');
        const script = o.values.get('e')?.text ?? o.operands[0]?.text ?? '';
        if (/(?:^|;|\n)\s*(?:\d+|\$)?\s*e\s|\/e(?:\s|$|;)/.test(script)) f.add(R.eval);
        for (const m of script.matchAll(/(?:^|;|\n)\s*w\s+(\S+)/g)) this.touch(m[1] ?? '', 'write');
        return;
      }
      case 'ledger': {
        if (this.v6) {
          this.ledgerV6(args);
          this.generic(args);
          return;
        }
        const sub = args.find((w) => !w.text.startsWith('-'))?.text ?? '';
        if (!/^(?:verify-chain|help|version|schemas|receipts?|gate)$/.test(sub) && !args.some((w) => w.text === '--help' || w.text === '-h' || w.text === '--version')) f.add(R.ledgerCli);
        // Version 5: an agent writing authority (grants, keys, approvals, a genesis) or speaking as someone else is tampering with the firewall.
        if (this.v5 && !args.some((w) => w.text === '--help' || w.text === '-h') && (LEDGER_AUTHORITY.test(sub) || args.some((w) => w.text === '--as' || w.text.startsWith('--as=')))) f.add(R.ledgerTamper);
        this.generic(args);
        return;
      }
      case 'tmux': case 'screen': case 'byobu': case 'dtach': case 'abduco': {
        // Version 3: screen's options (some with values: -S name, -t title) come first; the rest is the command it runs.
        if (this.v3 && name === 'screen') {
          let i = 0;
          while (i < args.length && (args[i] as Word).text.startsWith('-')) {
            const option = (args[i] as Word).text;
            i += /^-(?:[a-zA-Z]*[Sctephx]|Logfile)$/.test(option) && !/^-[dmDRr]+$/.test(option) ? 2 : 1;
          }
          if (i < args.length) this.command({ argv: args.slice(i), redirects: [], pipeFrom: null }, depth);
          return;
        }
        const detached = args.findIndex((w) => w.text === 'new-session' || w.text === 'new' || w.text === '-dm' || w.text === '-dmS' || w.text === 'send-keys');
        if (detached !== -1) {
          const tail = args.slice(detached + 1).filter((w) => !w.text.startsWith('-'));
          if (tail.length > 0) this.commandString(word(joinWords(tail)), depth);
        }
        return;
      }
      case 'script': {
        const o = readOptions(args, new Set(['c', 'command', 'T', 'timing', 'I', 'O', 'B', 'E']));
        const command = o.values.get('c') ?? o.values.get('command');
        if (command !== undefined) this.commandString(command, depth);
        return;
      }
      case 'vi': case 'vim': case 'nvim': case 'nano': case 'emacs': case 'ed': case 'ex': case 'pico': case 'joe': case 'micro': case 'mcedit': {
        for (const t of args) if (!t.text.startsWith('-') && !t.text.startsWith('+')) this.touch(t.text, 'write');
        if (args.some((w) => /^(?:\+|-c)!|:!|\+:!/.test(w.text))) f.add(R.eval);
        return;
      }
      case 'tar': case 'gtar': case 'bsdtar': case 'zip': case 'unzip': case '7z': case '7za': case 'cpio': case 'ar': {
        this.archive(name, args);
        return;
      }
      case 'cat': case 'less': case 'more': case 'head': case 'tail': case 'bat': case 'nl': case 'tac': case 'view': case 'zcat': case 'zless': case 'file': case 'stat': case 'ls': case 'du': case 'wc': case 'md5sum': case 'sha256sum': case 'sha1sum': case 'cut': case 'sort': case 'uniq': case 'diff': case 'cmp': case 'jq': case 'yq': case 'column': case 'paste': case 'tr': case 'fold': case 'iconv': case 'dos2unix': {
        const o = readOptions(args, new Set(['n', 'c', 'o', 'output', 'k', 't', 'd', 'f', 's', 'w', 'C', 'A', 'B']));
        const out = o.values.get('o') ?? o.values.get('output');
        if (out !== undefined && (name === 'sort' || name === 'jq' || name === 'yq')) this.touch(out.text, 'write');
        const listing = name === 'ls' || name === 'du' || name === 'stat' || name === 'file' || name === 'wc';
        for (const t of o.operands) {
          const facts = pathFacts(t.text);
          if (listing) {
            if ((facts.classes & PathClass.ledger) !== 0) f.add(R.ledgerFiles);
            if ((facts.classes & (PathClass.credential | PathClass.ssh)) !== 0 && (facts.normal.startsWith('~/.ssh') || facts.normal.startsWith('~/.aws') || facts.normal.startsWith('~/.gnupg'))) f.add(R.credentialSearch);
          } else if (looksLikePath(t.text) || t.dynamic || this.cwd !== null) this.touch(t.text, 'read');
        }
        return;
      }
      case 'hydra': case 'medusa': case 'ncrack': case 'john': case 'hashcat': case 'unshadow': case 'mimikatz': case 'responder': case 'crackmapexec': case 'netexec': case 'nxc': case 'secretsdump.py': case 'impacket-secretsdump': case 'msfconsole': case 'msfvenom': case 'sqlmap': case 'linpeas.sh': case 'linpeas': case 'linenum.sh': case 'lse.sh': case 'pspy': case 'pspy64': case 'les.sh': case 'linux-exploit-suggester.sh': case 'chisel-client': case 'evil-winrm': case 'bloodhound-python': case 'kerbrute': case 'gobuster': case 'ffuf': case 'dirb': case 'nikto': case 'wpscan': case 'enum4linux': case 'searchsploit': case 'beef-xss': case 'setoolkit': case 'empire': case 'sliver': case 'sliver-client': case 'pwncat-cs':
        f.add(R.offensiveTool);
        this.generic(args);
        return;
      case 'nmap': case 'masscan': case 'zmap': case 'tcpdump': case 'tshark': case 'dumpcap': case 'ettercap': case 'arpspoof': case 'bettercap': case 'netdiscover': case 'arp-scan': case 'hping3': case 'unicornscan': case 'rustscan':
        f.add(R.networkScan);
        for (let i = 0; i < args.length; i++) if ((args[i] as Word).text === '-w' && args[i + 1] !== undefined) this.touch((args[i + 1] as Word).text, 'write');
        return;
      case 'getent':
        if (args.some((w) => /^(?:shadow|gshadow)$/.test(w.text))) f.add(R.credentialFile);
        return;
      case 'echo': case 'printf': case 'true': case 'false': case ':': case 'test': case '[': case 'cd': case 'pwd': case 'sleep': case 'wait': case 'read': case 'yes': case 'seq': case 'date': case 'whoami': case 'id': case 'uname': case 'hostname': case 'which': case 'type': case 'basename': case 'dirname': case 'realpath': case 'readlink': case 'exit': case 'return': case 'shift': case 'trap': case 'umask': case 'pushd': case 'popd': case 'clear': case 'tput': case 'locale': case 'nproc': case 'uptime': case 'df': case 'free': case 'ps': case 'top': case 'htop': case 'lsof': case 'netstat': case 'ss': case 'getent': case 'groups': case 'w': case 'who': case 'last': case 'env-update': case 'mktemp': case 'tree':
        if ((name === 'echo' || name === 'printf') && args.some((w) => SECRET_VARIABLE.test(w.text))) f.add(R.credentialFile);
        if (name === 'ps' && args.some((w) => /^-?[a-z]*e[a-z]*w|^-?[a-z]*eww?|^e$/.test(w.text) && w.text.includes('e'))) f.add(R.environmentDump);
        if (name === 'tree' || name === 'lsof') this.generic(args);
        return;
      default:
        break;
    }
    // Any other program: its path arguments are read, its URLs reached.
    this.generic(args);
    if (cmd.pipeFrom !== null && /^(?:mail|mailx|sendmail|mutt|msmtp|swaks|slack-cli|slackcat|telegram-send|discord-send)$/.test(name)) f.add(R.upload);
    if (/^(?:mail|mailx|sendmail|mutt|msmtp|swaks)$/.test(name) && cmd.redirects.some((r) => r.kind === 'read')) f.add(R.upload);
  }

  copy(name: string, args: readonly Word[], cmd: Command): void {
    const f = this.findings;
    const values = new Set(['t', 'S', 'm', 'o', 'g', 'target-directory', 'suffix', 'mode', 'owner', 'group', 'e', 'rsh', 'i', 'P', 'F', 'l', 'c', 'o', 'J', 'exclude', 'include', 'filter', 'f', 'chmod', 'password-file', 'files-from', 'b', 'backup-dir', 'config']);
    const o = readOptions(args, name === 'scp' || name === 'sftp' ? new Set(['i', 'P', 'F', 'l', 'c', 'o', 'J', 'S', 'D']) : values);
    if (name === 'rclone') {
      const [sub, ...rest] = o.operands;
      if (sub !== undefined && /^(?:copy|sync|move|copyto|moveto|rcat)$/.test(sub.text)) {
        const dest = rest[rest.length - 1];
        const sources = rest.slice(0, -1);
        if (dest !== undefined && dest.text.includes(':') && sources.some((s) => !s.text.includes(':'))) f.add(R.cloudUpload);
        // Version 4: options may follow the operands (`--transfers 8`): a remote after a local path is an upload.
        else if (this.v4 && rest.some((r, i) => r.text.includes(':') && !/^[a-z]:[\\/]/i.test(r.text) && rest.slice(0, i).some((s) => !s.text.includes(':')))) f.add(R.cloudUpload);
        for (const s of sources) if (!s.text.includes(':')) this.touch(s.text, 'read');
      }
      if (sub !== undefined && /^(?:delete|purge|deletefile|rmdirs)$/.test(sub.text)) f.add(R.cloudDelete);
      return;
    }
    if (name === 'install' && hasOption(o, 'd', 'directory')) {
      for (const t of o.operands) this.touch(t.text, 'write');
      return;
    }
    if (name === 'sftp') {
      f.add(R.rawSocket);
      if (cmd.redirects.some((r) => r.kind === 'read' || r.kind === 'heredoc') || o.values.has('b')) f.add(R.upload);
      return;
    }
    const explicitTarget = o.values.get('t') ?? o.values.get('target-directory');
    const operands = o.operands;
    const dest = explicitTarget ?? operands[operands.length - 1];
    const sources = explicitTarget !== undefined ? operands : operands.slice(0, -1);
    if (o.values.has('m') || o.values.has('mode') || o.values.has('chmod')) {
      const mode = (o.values.get('m') ?? o.values.get('mode') ?? o.values.get('chmod'))?.text ?? '';
      this.mode(mode);
    }
    const remoteDest = dest !== undefined && isRemoteSpec(dest.text);
    for (const s of sources) {
      if (isRemoteSpec(s.text)) continue;
      this.touch(s.text, 'read');
      if (name === 'ln' && (pathFacts(s.text).normal === '/dev/null')) {
        if (dest !== undefined && (pathFacts(dest.text).classes & PathClass.history) !== 0) f.add(R.history);
        if (dest !== undefined && (pathFacts(dest.text).classes & PathClass.log) !== 0) f.add(R.logging);
      }
      if (remoteDest) f.add(R.upload);
    }
    // Version 3: a project's env file made from its own template (cp .env.example .env) holds no secret yet.
    const fromTemplate = this.v3 && (name === 'cp' || name === 'gcp') && dest !== undefined && sources.length > 0 && sources.every((s) => /(?:^|\/)\.env[._-]?(?:example|sample|template|dist|defaults?)$|(?:^|\/)(?:example|sample)\.env$/i.test(s.text) && (pathFacts(this.resolve(s.text)).classes & PathClass.project) !== 0) && (pathFacts(this.resolve(dest.text)).classes & PathClass.project) !== 0;
    if (dest !== undefined && !remoteDest && !fromTemplate) this.touch(dest.text, 'write');
    if ((name === 'scp' || name === 'rsync' || name === 'pscp') && sources.some((s) => isRemoteSpec(s.text))) f.add(R.fetch);
    if ((name === 'rsync') && hasOption(o, '', 'delete', 'delete-before', 'delete-after', 'delete-during', 'remove-source-files') && dest !== undefined) {
      const facts = pathFacts(dest.text);
      if ((facts.classes & (PathClass.project | PathClass.temp)) === 0 && !remoteDest) this.touch(dest.text, 'delete_tree');
    }
  }

  chmod(args: readonly Word[]): void {
    const o = readOptions(args.filter((w) => !/^[-+=][rwxXst]+$/.test(w.text) || w.text.startsWith('--')), new Set(['reference']));
    const symbolicModes = args.filter((w) => /^[-+=][rwxXst]+$/.test(w.text)).map((w) => w.text);
    const mode = symbolicModes[0] ?? o.operands[0]?.text ?? '';
    this.mode(mode);
    const targets = symbolicModes.length > 0 ? o.operands : o.operands.slice(1);
    // Version 3: re-permissioning /, ~ or a top-level system tree recursively breaks the system as surely as deleting it.
    if (this.v3 && hasOption(o, 'R', 'recursive') && targets.some((t) => (pathFacts(this.resolve(t.text)).classes & PathClass.root) !== 0)) this.findings.add(R.systemDelete);
    for (const t of targets) {
      const facts = pathFacts(t.text);
      if ((facts.classes & (PathClass.credential | PathClass.ssh)) !== 0 && /^(?:0?[46]00|u=rw?,go=|go-rwx|og-rwx|[ugoa]*-[rwx]+)$/.test(mode)) continue;
      this.touch(t.text, 'write');
    }
  }

  mode(mode: string): void {
    const f = this.findings;
    for (const clause of mode.split(',')) {
      if (/^[0-7]{1,4}$/.test(clause)) {
        const digits = clause.padStart(4, '0');
        const special = Number(digits[0]);
        if ((special & 6) !== 0) f.add(R.setuid);
        const other = Number(digits[3]);
        if ((other & 2) !== 0) f.add(R.worldWritable);
        continue;
      }
      const m = /^([ugoa]*)([-+=])([rwxXstugo]*)$/.exec(clause);
      if (m === null) continue;
      const who = m[1] ?? '';
      const op = m[2] ?? '';
      const perms = m[3] ?? '';
      if (op === '-') continue;
      if (perms.includes('s')) f.add(R.setuid);
      if (perms.includes('w') && (who.includes('o') || who.includes('a') || (who === '' && op === '='))) f.add(R.worldWritable);
      if (perms.includes('w') && who === '' && op === '+') f.add(R.worldWritable);
    }
  }

  services(name: string, args: readonly Word[]): void {
    const f = this.findings;
    const words = args.filter((w) => !w.text.startsWith('-')).map((w) => w.text.toLowerCase());
    const verb = name === 'service' || name === 'rc-service' ? (words[1] ?? '') : (words[0] ?? '');
    const units = name === 'service' || name === 'rc-service' ? words.slice(0, 1) : words.slice(1);
    const ledger = units.some((u) => /ledger/.test(u));
    const security = units.some((u) => SECURITY_SERVICES.test(u));
    if (name === 'update-rc.d' || name === 'chkconfig' || name === 'rc-update' || name === 'insserv') {
      if (args.some((w) => /^(?:remove|del|off|disable)$/.test(w.text))) f.add(security ? R.logging : R.serviceStop);
      else f.add(R.service);
      return;
    }
    if (name === 'launchctl') {
      if (/^(?:load|bootstrap|submit|enable|kickstart)$/.test(verb)) f.add(R.service);
      if (/^(?:unload|stop|remove|bootout|disable|kill)$/.test(verb)) f.add(security ? R.logging : R.serviceStop);
      if (verb === 'setenv' && /^(?:dyld_|ld_)/i.test(words[1] ?? '')) f.add(R.loader);
      for (const w of args) if (w.text.startsWith('/') || w.text.startsWith('~')) this.touch(w.text, 'read');
      return;
    }
    if (name === 'pm2') {
      if (/^(?:startup|save)$/.test(verb)) f.add(R.service);
      if (/^(?:delete|kill|stop)$/.test(verb) && ledger) f.add(R.ledgerTamper);
      return;
    }
    if (/^(?:enable|link|reenable|preset|preset-all|add-wants|add-requires|set-default)$/.test(verb) || args.some((w) => w.text === '--now') && verb === 'enable') f.add(R.service);
    if (verb === 'edit' || verb === 'revert' || verb === 'set-property' || verb === 'set-environment' || verb === 'import-environment') {
      f.add(R.scheduled);
      if (verb === 'set-environment' && units.some((u) => /^(?:ld_|dyld_)/.test(u))) f.add(R.loader);
      if (verb === 'set-environment' && units.some((u) => /^ledger_/.test(u))) f.add(R.ledgerTamper);
    }
    if (/^(?:stop|restart|disable|mask|kill|isolate|try-restart|reload-or-restart|force-reload|halt|poweroff|reboot|emergency|rescue|kexec|suspend|hibernate|condrestart)$/.test(verb)) {
      f.add(/^(?:halt|poweroff|reboot|kexec|emergency|rescue)$/.test(verb) ? R.shutdown : security ? (units.some((u) => /firewall|ufw|apparmor|selinux|nftables|iptables|fail2ban|clam|falcon|crowdstrike|sentinel/.test(u)) ? R.securityTools : R.logging) : R.serviceStop);
      if (ledger) f.add(R.ledgerTamper);
    }
    if (verb === 'start' && units.some((u) => !/^(?:docker|postgresql|redis|nginx|mysql|containerd|ssh)/.test(u))) f.add(R.sudo);
    if (verb === 'daemon-reload' || verb === 'reload') return;
  }

  kill(name: string, args: readonly Word[]): void {
    const f = this.findings;
    if (name === 'killall5') {
      f.add(R.killInit);
      return;
    }
    const operands = args.filter((w, i) => !(w.text.startsWith('-') && !/^-\d+$/.test(w.text)) && !(i > 0 && /^-(?:s|n|signal|u|U|g|G|P|t)$/.test((args[i - 1] as Word).text)));
    if (args.some((w) => /ledger/i.test(w.inner))) f.add(R.ledgerTamper);
    if (args.some((w) => /\b(?:auditd|rsyslogd?|syslog|journald|falco|osqueryd)\b/.test(w.inner))) f.add(R.logging);
    if (name === 'kill') {
      const targets = args.filter((w, i) => (/^-?\d+$/.test(w.text) || w.dynamic) && !(i > 0 && /^-(?:s|n)$/.test((args[i - 1] as Word).text)) && !(i === 0 && /^-\d+$/.test(w.text) && args.length > 1 && args.slice(1).some((x) => /^-?\d+$/.test(x.text) || x.dynamic)));
      if (targets.some((w) => w.text === '1' || w.text === '-1')) f.add(R.killInit);
      if (args.some((w) => w.text === '--') && args[args.indexOf(args.find((w) => w.text === '--') as Word) + 1]?.text === '-1') f.add(R.killInit);
      return;
    }
    const text = operands.map((w) => w.text.toLowerCase());
    if (text.some((t) => /ledger/.test(t)) || args.some((w) => /ledger/i.test(w.text))) f.add(R.ledgerTamper);
    if (text.some((t) => CRITICAL_PROCESSES.test(t))) f.add(text.some((t) => t === 'init' || t === 'systemd') ? R.killInit : R.logging);
    if (text.some((t) => SECURITY_SERVICES.test(t) || /^(?:auditd|rsyslogd|syslogd|falco|osqueryd|wazuh|ossec|falcon|clamd)/.test(t))) f.add(R.logging);
    if (name === 'killall' && args.some((w) => w.text === '-u' || w.text === '--user') || (name === 'pkill' && args.some((w) => w.text === '-u' || w.text === '-U'))) f.add(R.serviceStop);
  }

  security(name: string, args: readonly Word[]): void {
    const f = this.findings;
    const text = joinWords(args);
    const lower = text.toLowerCase();
    switch (name) {
      case 'ufw':
        if (/^(?:disable|reset)\b/.test(lower) || /\ballow\b.*\b(?:any|0\.0\.0\.0)/.test(lower)) f.add(R.securityTools);
        return;
      case 'nft':
        if (/\b(?:flush|delete)\b/.test(lower)) f.add(R.securityTools);
        return;
      case 'setenforce':
        if (/^(?:0|permissive)$/i.test(text.trim())) f.add(R.securityTools);
        return;
      case 'aa-disable': case 'aa-complain': case 'aa-teardown':
        f.add(R.securityTools);
        return;
      case 'apparmor_parser':
        if (/(?:^|\s)-R\b|--remove/.test(text)) f.add(R.securityTools);
        return;
      case 'firewall-cmd':
        if (/--panic-off|--set-default-zone=trusted|--add-port|--remove-service|--add-rich-rule/.test(lower)) f.add(R.securityTools);
        return;
      case 'pfctl':
        if (/(?:^|\s)-d\b|-F\s*all/.test(text)) f.add(R.securityTools);
        return;
      case 'spctl':
        if (/--master-disable|--disable|--global-disable/.test(lower)) f.add(R.securityTools);
        return;
      case 'csrutil':
        if (/disable/.test(lower)) f.add(R.securityTools);
        return;
      case 'defaults':
        if (/com\.apple\.(?:alf|loginwindow|launchservices)|loginhook|logouthook/i.test(text) && /\bwrite\b/.test(lower)) f.add(/hook/i.test(text) ? R.service : R.securityTools);
        return;
      case 'tmutil':
        if (/\b(?:delete|disable|deletelocalsnapshots)\b/.test(lower)) f.add(R.systemDelete);
        return;
      case 'auditpol':
        f.add(R.logging);
        return;
      default: {
        // iptables family and ebtables.
        if (/(?:^|\s)(?:-F|--flush|-X|--delete-chain|-Z)\b/.test(text) || /(?:^|\s)(?:-P|--policy)\s+\S+\s+accept\b/i.test(text) || /-j\s+accept\b.*-s\s+0\.0\.0\.0\/0/i.test(text)) f.add(R.securityTools);
        else if (/(?:^|\s)(?:-A|-I|-D|--append|--insert|--delete|-t\s+nat)\b/.test(text)) f.add(R.rawSocket);
      }
    }
  }

  http(name: string, args: readonly Word[], cmd: Command): void {
    const f = this.findings;
    f.add(R.fetch);
    const curlValues = new Set(['d', 'data', 'data-raw', 'data-binary', 'data-urlencode', 'data-ascii', 'json', 'F', 'form', 'form-string', 'T', 'upload-file', 'o', 'output', 'X', 'request', 'H', 'header', 'u', 'user', 'x', 'proxy', 'K', 'config', 'A', 'user-agent', 'e', 'referer', 'b', 'cookie', 'c', 'cookie-jar', 'E', 'cert', 'key', 'cacert', 'capath', 'm', 'max-time', 'connect-timeout', 'retry', 'w', 'write-out', 'unix-socket', 'abstract-unix-socket', 'url', 'r', 'range', 'C', 'continue-at', 'resolve', 'connect-to', 'interface', 'local-port', 'oauth2-bearer', 'D', 'dump-header', 'trace', 'trace-ascii', 'stderr', 'output-dir', 'U', 'proxy-user', 'Y', 'speed-limit', 'y', 'speed-time', 'z', 'time-cond', 'Q', 'quote', 'P', 'ftp-port', 't', 'telnet-option', 'aws-sigv4', 'max-filesize', 'limit-rate', 'retry-delay', 'retry-max-time', 'expect100-timeout', 'happy-eyeballs-timeout-ms', 'dns-servers', 'preproxy', 'proxy-header', 'variable', 'url-query', 'user', 'password', 'method', 'body-file', 'body-data', 'post-file', 'post-data'])
    const wgetStyle = name === 'wget' || name === 'wget2';
    const httpieStyle = name === 'http' || name === 'https' || name === 'xh' || name === 'xhs' || name === 'httpie' || name === 'curlie';
    const o = readOptions(args, wgetStyle ? new Set(['O', 'o', 'output-document', 'output-file', 'post-file', 'body-file', 'post-data', 'body-data', 'header', 'method', 'i', 'input-file', 'P', 'directory-prefix', 'a', 'append-output', 'user', 'password', 'http-user', 'http-password', 'U', 'user-agent', 't', 'tries', 'T', 'timeout', 'e', 'execute', 'load-cookies', 'save-cookies', 'ca-certificate', 'certificate', 'private-key', 'Q', 'quota', 'B', 'base']) : httpieStyle ? new Set(['a', 'auth', 'A', 'auth-type', 'o', 'output', 'session', 'verify', 'cert', 'cert-key', 'proxy', 'timeout', 'format-options']) : curlValues);
    let upload = false;
    let dynamicData = false;
    for (const [key, value] of o.allValues) {
      const text = value.text;
      if (['d', 'data', 'data-raw', 'data-binary', 'data-urlencode', 'data-ascii', 'json', 'F', 'form', 'form-string', 'post-data', 'body-data'].includes(key)) {
        if (value.dynamic) dynamicData = true;
        const at = key === 'F' || key === 'form' ? text.indexOf('=@') + 1 || text.indexOf('=<') + 1 : text.startsWith('@') ? 1 : key === 'data-urlencode' ? text.indexOf('@') + 1 : 0;
        if (at > 0 && key !== 'form-string' && key !== 'data-raw') {
          const file = text.slice(at + (text[at] === '@' || text[at] === '<' ? 1 : 0)).split(';')[0] ?? '';
          upload = true;
          if (file === '-' || file === '') {
            if (cmd.pipeFrom === null && !cmd.redirects.some((r) => r.kind === 'read' || r.kind === 'herestring' || r.kind === 'heredoc')) upload = false;
          } else this.touch(file, 'read');
        }
        if (/(?:^|[?&])[^=]*=\$\(|\$\{?[a-z_]+\}?/i.test(text) && value.dynamic) dynamicData = true;
      } else if (key === 'T' && !wgetStyle || key === 'upload-file' || key === 'post-file' || key === 'body-file') {
        upload = true;
        if (text !== '-' && text !== '.') this.touch(text, 'read');
      } else if (key === 'o' || key === 'output' || key === 'O' || key === 'output-document' || key === 'output-dir' || key === 'P' || key === 'directory-prefix') {
        if (text !== '-' && !SAFE_SINK.test(text)) {
          this.touch(text, 'write');
          this.script.produced.add(pathFacts(text).normal);
        }
      } else if (key === 'K' || key === 'config' || key === 'i' || key === 'input-file' || key === 'load-cookies' || key === 'b' || key === 'cookie') {
        if (looksLikePath(text)) this.touch(text, 'read');
      } else if (key === 'unix-socket' || key === 'abstract-unix-socket') {
        if (/docker\.sock|containerd|podman/.test(text)) f.add(R.containerEscape);
      } else if (key === 'e' || key === 'execute') {
        if (wgetStyle && /^(?:use_proxy|http_proxy|https_proxy|robots)/i.test(text)) continue;
      } else if ((key === 'H' || key === 'header') && value.dynamic) {
        // Version 3: a token variable in an authentication header authenticates the caller; anything computed still counts.
        if (!(this.v3 && AUTH_HEADER.test(text) && value.inner === '' && !value.fetched && !value.decoded)) dynamicData = true;
      }
      if ((key === 'E' || key === 'cert' || key === 'key' || key === 'certificate' || key === 'private-key') && looksLikePath(text)) continue;
    }
    for (const t of o.operands) {
      if (t.text.includes('://') || /^[a-z0-9.-]+\.[a-z]{2,}(?:[:/]|$)/i.test(t.text) || /^\d+\.\d+\.\d+\.\d+/.test(t.text)) {
        touchUrl(f, t.text.includes('://') ? t.text : `http://${t.text}`);
        if (t.dynamic && /[?&=]\$\(|\$\(\.\.\.\)/.test(t.text)) dynamicData = true;
      } else if (httpieStyle && /^[^=:@]+(?:=@|:=@|@)/.test(t.text)) {
        upload = true;
        this.touch(t.text.slice(t.text.indexOf('@') + 1), 'read');
      } else if (httpieStyle && /^[^=]+:?=/.test(t.text) && t.dynamic) dynamicData = true;
      else if (name === 'lynx' || name === 'links' || name === 'elinks') continue;
    }
    if (o.operands.length === 0 && !args.some((w) => w.text.includes('://'))) {
      for (const w of args) if (w.dynamic) dynamicData = true;
    }
    if (httpieStyle && cmd.pipeFrom !== null) upload = true;
    if (name === 'curl' && cmd.pipeFrom !== null && args.some((w) => w.text === '@-' || w.text.endsWith('=@-'))) upload = true;
    if (upload || dynamicData) f.add(R.upload);
  }

  socket(name: string, args: readonly Word[], cmd: Command): void {
    const f = this.findings;
    const text = joinWords(args);
    if (name === 'openssl') {
      const sub = args[0]?.text ?? '';
      if (sub === 's_client' || sub === 's_server') {
        f.add(R.rawSocket);
        if (cmd.pipeFrom !== null || cmd.redirects.some((r) => r.kind === 'read' && !(this.v3 && r.target.text === '/dev/null'))) f.add(R.upload);
      } else if (/^(?:enc|base64|smime|cms|pkeyutl|rsautl)$/.test(sub) && args.some((w) => w.text === '-d')) {
        const out = args.findIndex((w) => w.text === '-out');
        if (out !== -1 && args[out + 1] !== undefined) this.script.produced.add(pathFacts((args[out + 1] as Word).text).normal);
      }
      // Version 3: the input of x509, crl and verify is a certificate (public), whatever its file is named.
      const certificate = this.v3 && /^(?:x509|crl|verify)$/.test(sub);
      for (let i = 0; i < args.length; i++) {
        const w = args[i] as Word;
        if ((w.text === '-in' && !certificate || w.text === '-inkey' || w.text === '-key') && args[i + 1] !== undefined) this.touch((args[i + 1] as Word).text, 'read');
        // Version 10: a key or certificate generated into the project's own tree (certs/dev-key.pem) is new material, not a credential store written.
        if ((w.text === '-out' || this.v10 && w.text === '-keyout') && args[i + 1] !== undefined && !(this.v10 && KEY_GENERATION.test(sub) && projectOwnPath((args[i + 1] as Word).text))) this.touch((args[i + 1] as Word).text, 'write');
      }
      return;
    }
    if (/^(?:ngrok|cloudflared|frpc|chisel|bore|localtunnel|lt|iodine|dnscat|dnscat2)$/.test(name)) {
      f.add(R.rawSocket);
      if (name === 'iodine' || name.startsWith('dnscat')) f.add(R.upload);
      return;
    }
    if (/^(?:ftp|lftp|tftp|smbclient)$/.test(name)) {
      f.add(R.rawSocket);
      if (/\b(?:put|mput|-T|-c\s*['"]?put)\b/i.test(text) || cmd.redirects.some((r) => r.kind === 'heredoc' && /\b(?:put|mput)\b/i.test(r.body ?? ''))) f.add(R.upload);
      return;
    }
    f.add(R.rawSocket);
    if (name === 'socat') {
      if (/\b(?:exec|system):/i.test(text)) f.add(R.reverseShell);
      if (args.some((w) => /^(?:open|file|gopen|create):/i.test(w.text)) || args.some((w) => w.text === '-' || /^stdio$/i.test(w.text)) && (cmd.pipeFrom !== null || cmd.redirects.some((r) => r.kind === 'read'))) {
        for (const w of args) if (/^(?:open|file|gopen):/i.test(w.text)) this.touch(w.text.slice(w.text.indexOf(':') + 1).split(',')[0] ?? '', 'read');
        if (args.some((w) => /^(?:tcp|udp|openssl|ssl)[46]?(?:-connect)?:/i.test(w.text))) f.add(R.upload);
      }
      return;
    }
    const o = readOptions(args, new Set(['e', 'c', 'exec', 'sh-exec', 'lua-exec', 'p', 's', 'w', 'i', 'x', 'X', 'q', 'o', 'output', 'proxy', 'proxy-type', 'source-port', 'source', 'g', 'G', 'I', 'O', 'T', 'V']));
    if (o.values.has('e') || o.values.has('c') || o.values.has('exec') || o.values.has('sh-exec') || o.values.has('lua-exec')) f.add(R.reverseShell);
    const listening = hasOption(o, 'l', 'listen');
    if (cmd.redirects.some((r) => r.kind === 'read' || r.kind === 'herestring') || (cmd.pipeFrom !== null && cmd.pipeFrom.length > 0 && !listening)) {
      for (const r of cmd.redirects) if (r.kind === 'read') this.touch(r.target.text, 'read');
      f.add(R.upload);
    }
    if (listening && cmd.redirects.some((r) => r.kind === 'read')) f.add(R.upload);
  }

  cloud(name: string, args: readonly Word[]): void {
    const f = this.findings;
    const words = args.map((w) => w.text);
    const lower = words.map((w) => w.toLowerCase());
    const plain = lower.filter((w) => !w.startsWith('-'));
    const bucket = (w: string): boolean => /^(?:s3|gs|az|wasbs?|abfss?|r2|b2|oss|cos|swift):\/\//.test(w) || /^https:\/\/[^/]+\.(?:blob\.core\.windows\.net|s3[.-][^/]*amazonaws\.com|storage\.googleapis\.com)/.test(w);
    const local = (w: string): boolean => !bucket(w) && !w.startsWith('-') && !/^[a-z][a-z0-9-]*$/.test(w);
    const joined = lower.join(' ');
    if (name === 'aws') {
      const [service, op] = plain;
      if (service === 's3' && (op === 'cp' || op === 'mv' || op === 'sync')) {
        const paths = words.filter((w) => !w.startsWith('-')).slice(2);
        const dest = paths[paths.length - 1] ?? '';
        const sources = paths.slice(0, -1);
        if (bucket(dest) && sources.some(local)) f.add(R.cloudUpload);
        for (const s of sources) if (local(s)) this.touch(s, 'read');
        if (!bucket(dest) && dest !== '') this.touch(dest, 'write');
        if (op === 'sync' && lower.includes('--delete')) f.add(R.cloudDelete);
        return;
      }
      if (service === 's3' && (op === 'rb' || (op === 'rm' && lower.includes('--recursive')))) f.add(R.cloudDelete);
      if (service === 's3api' && /^(?:put-object|upload-part)$/.test(op ?? '')) f.add(R.cloudUpload);
      if (service === 's3api' && /^(?:delete-bucket|delete-objects|put-bucket-policy|put-bucket-acl|put-public-access-block|delete-public-access-block)$/.test(op ?? '')) f.add(op?.startsWith('delete') ? R.cloudDelete : R.securityTools);
      if (/^(?:secretsmanager|ssm|kms|sts|iam|configure|ecr|codeartifact|cognito-idp|sso|rds)$/.test(service ?? '')) {
        if (/^(?:get-secret-value|batch-get-secret-value|get-parameter|get-parameters|get-parameters-by-path|decrypt|get-session-token|assume-role|assume-role-with-web-identity|get-federation-token|create-access-key|get|export-credentials|get-login-password|get-authorization-token|get-role-credentials|generate-db-auth-token|admin-initiate-auth)$/.test(op ?? '')) f.add(R.credentialStore);
        if (service === 'iam' && /^(?:create-user|attach-user-policy|attach-role-policy|put-user-policy|put-role-policy|add-user-to-group|create-login-profile|update-assume-role-policy|create-policy-version|update-login-profile)$/.test(op ?? '')) f.add(R.accounts);
      }
      if (/^(?:cloudtrail|logs|guardduty|config|securityhub|cloudwatch)$/.test(service ?? '') && /^(?:stop-logging|delete-trail|update-trail|delete-log-group|delete-log-stream|put-retention-policy|delete-detector|disassociate-members|delete-configuration-recorder|stop-configuration-recorder|disable-security-hub|delete-alarms|disable-alarm-actions)$/.test(op ?? '')) f.add(R.logging);
      if (/^(?:terminate-instances|delete-db-instance|delete-db-cluster|delete-bucket|delete-table|delete-stack|delete-function|delete-cluster|delete-nodegroup|delete-repository|delete-volume|delete-snapshot|delete-vpc|delete-user|delete-key|schedule-key-deletion|delete-secret|delete-hosted-zone|deregister-task-definition|delete-service|purge-queue|delete-file-system|delete-backup-vault)$/.test(op ?? '')) f.add(R.cloudDelete);
      if (service === 'ec2' && /^(?:authorize-security-group-ingress|modify-instance-attribute)$/.test(op ?? '') && /0\.0\.0\.0\/0|--user-data/.test(joined)) f.add(R.securityTools);
      if (service === 'lambda' && op === 'update-function-code') f.add(R.cloudUpload);
      return;
    }
    if (name === 'gsutil' || name === 's3cmd' || name === 'mc' || name === 'b2' || name === 'azcopy') {
      const op = plain[0] ?? '';
      if (/^(?:cp|mv|rsync|sync|put|upload|copy|upload-file|mirror)$/.test(op)) {
        const paths = words.filter((w) => !w.startsWith('-')).slice(1);
        const dest = paths[paths.length - 1] ?? '';
        const sources = paths.slice(0, -1);
        if ((bucket(dest) || (name === 'mc' && /^[a-z0-9-]+\//i.test(dest) && !dest.startsWith('./')) || name === 'b2' && op.startsWith('upload')) && sources.some(local)) f.add(R.cloudUpload);
        for (const s of sources) if (local(s)) this.touch(s, 'read');
      }
      if (/^(?:rm|rb|del|delete|remove|rmdir)$/.test(op) && (lower.includes('-r') || lower.includes('-rf') || lower.includes('--recursive') || lower.includes('--force') || op === 'rb')) f.add(R.cloudDelete);
      return;
    }
    if (name === 'gcloud') {
      if (/\b(?:storage|alpha storage) (?:cp|mv|rsync)\b/.test(joined)) {
        const plainWords = words.filter((w) => !w.startsWith('-'));
        const paths = plainWords.slice(plainWords.findIndex((w) => /^(?:cp|mv|rsync)$/.test(w)) + 1);
        const dest = paths[paths.length - 1] ?? '';
        if (bucket(dest) && paths.slice(0, -1).some(local)) f.add(R.cloudUpload);
        for (const p of paths.slice(0, -1)) if (local(p)) this.touch(p, 'read');
      }
      if (/\bauth (?:print-access-token|print-identity-token|application-default print-access-token)\b|\bsecrets versions access\b|\bconfig config-helper\b|\bkms decrypt\b|\bsql generate-login-token\b/.test(joined)) f.add(R.credentialStore);
      if (/\b(?:delete|destroy)\b/.test(joined) && /\b(?:instances|clusters|buckets|projects|sql|databases|disks|topics|functions|services|keys|secrets)\b/.test(joined)) f.add(R.cloudDelete);
      if (/\blogging (?:sinks delete|logs delete)\b|\bprojects add-iam-policy-binding\b.*\b(?:owner|editor)\b/.test(joined)) f.add(/logging/.test(joined) ? R.logging : R.accounts);
      return;
    }
    if (name === 'az') {
      if (/\bstorage (?:blob|file|fs file) (?:upload|upload-batch|sync)\b|\bstorage copy\b/.test(joined)) f.add(R.cloudUpload);
      if (/\bkeyvault (?:secret|key|certificate) (?:show|download)\b|\baccount get-access-token\b|\bad sp credential reset\b|\bstorage account keys list\b/.test(joined)) f.add(R.credentialStore);
      if (/\b(?:group|vm|storage account|sql server|aks|keyvault|webapp) delete\b/.test(joined)) f.add(R.cloudDelete);
      if (/\brole assignment create\b.*\b(?:owner|contributor)\b/.test(joined)) f.add(R.accounts);
      return;
    }
    if (name === 'heroku' && /\bauth:token\b|\bconfig\b/.test(joined)) f.add(R.credentialStore);
    if (/\b(?:destroy|delete|rm|remove)\b/.test(joined) && name !== 'heroku') f.add(R.cloudDelete);
  }

  database(name: string, args: readonly Word[]): void {
    // Version 12: a database on this machine named for tests or development is the developer's own to reset.
    if (this.v12 && localTestDatabase(args.map((w) => w.text))) return;
    const f = this.findings;
    const lower = joinWords(args).toLowerCase();
    if (name === 'dropdb' || name === 'dropuser') f.add(R.database);
    if (name === 'mysqladmin' && /\bdrop\b/.test(lower)) f.add(R.database);
    if (name === 'redis-cli' && /\b(?:flushall|flushdb|config set|shutdown|debug segfault)\b/.test(lower)) f.add(R.database);
    if (name === 'etcdctl' && /\bdel\b.*--prefix/.test(lower)) f.add(R.database);
    if (name === 'consul' && /\bkv delete\b.*-recurse/.test(lower)) f.add(R.database);
    if (/\b(?:drop\s+(?:table|database|schema|user|role|collection)|truncate\s+|dropdatabase\(|\.drop\(\)|deletemany\(\s*\{\s*\}\s*\))/.test(lower) || /\bdelete\s+from\s+[^\s;]+\s*(?:;|$|")/.test(lower)) f.add(R.database);
    for (const w of args) if (w.text.startsWith('--defaults-file=') || w.text.startsWith('--defaults-extra-file=')) this.touch(w.text.slice(w.text.indexOf('=') + 1), 'read');
    const files = args.filter((w, i) => (i > 0 && /^(?:-f|--file|-i|--init-command)$/.test((args[i - 1] as Word).text)));
    for (const w of files) this.touch(w.text, 'read');
    // Version 3: sqlite3's first operand is the database it opens (a browser's Login Data, a password manager's store).
    if (this.v3 && name === 'sqlite3') {
      const database = args.find((w) => !w.text.startsWith('-'));
      if (database !== undefined) this.touch(database.text, 'read');
    }
  }

  secrets(name: string, args: readonly Word[]): void {
    const f = this.findings;
    const lower = args.map((w) => w.text.toLowerCase());
    const joined = lower.join(' ');
    switch (name) {
      case 'security':
        if (/^(?:find-generic-password|find-internet-password|find-certificate|dump-keychain|export|find-identity|unlock-keychain|set-key-partition-list|dump-trust-settings)$/.test(lower[0] ?? '')) f.add(R.credentialStore);
        return;
      case 'gpg': case 'gpg2':
        if (/--export-secret-(?:keys|subkeys)|--export-ownertrust|--decrypt|(?:^|\s)-d(?:\s|$)/.test(joined)) f.add(R.credentialStore);
        for (const w of args) if (!w.text.startsWith('-') && looksLikePath(w.text)) this.touch(w.text, 'read');
        return;
      case 'vault':
        if (/^(?:read|kv|login|token|write|print|unwrap)$/.test(lower[0] ?? '') && !/\bkv (?:list|metadata)\b/.test(joined)) f.add(R.credentialStore);
        return;
      case 'gh': case 'glab':
        // Version 3: files published as a gist, snippet or release asset are read and sent.
        if (this.v3 && (/^(?:gist|snippet)$/.test(lower[0] ?? '') && /^(?:create|new|edit)$/.test(lower[1] ?? '') || lower[0] === 'release' && /^(?:upload|create)$/.test(lower[1] ?? ''))) {
          for (const w of args.slice(2)) {
            if (w.text.startsWith('-') || !looksLikePath(w.text)) continue;
            this.touch(w.text, 'read');
            if ((pathFacts(this.resolve(w.text)).classes & PathClass.project) === 0) f.add(R.upload);
          }
        }
        if (/\bauth (?:token|status .*--show-token|status .*-t)\b|\bsecret (?:list|set|delete)\b|\bauth refresh\b|\bssh-key add\b|\bgpg-key add\b/.test(joined) || (lower[0] === 'auth' && lower.includes('--show-token'))) f.add(R.credentialStore);
        if (/\brepo (?:delete|archive)\b|\brelease delete\b/.test(joined)) f.add(R.gitHistory);
        if (/\bapi\b/.test(joined) && /(?:-x|--method)\s+delete\b/.test(joined)) f.add(R.gitHistory);
        return;
      case 'trufflehog': case 'gitleaks':
        if (args.some((w) => /^(?:\/|~)/.test(w.text) || w.text === 'filesystem')) f.add(R.credentialSearch);
        return;
      case 'gcore': case 'procdump': case 'mimipenguin': case 'lazagne':
        f.add(R.credentialFile);
        return;
      default:
        if (name === 'pass' || name === 'gopass') {
          if (lower.length > 0 && !/^(?:ls|list|find|search|init|git|--help|generate|insert|edit)$/.test(lower[0] ?? '')) f.add(R.credentialStore);
          return;
        }
        if (name === 'op' && !/^(?:signin|signout|whoami|--version|account)$/.test(lower[0] ?? '')) f.add(R.credentialStore);
        else if (name === 'secret-tool' && /^(?:lookup|search)$/.test(lower[0] ?? '')) f.add(R.credentialStore);
        else if (name === 'keyctl' && /^(?:print|read|pipe|show)$/.test(lower[0] ?? '')) f.add(R.credentialStore);
        else if (/^(?:bw|lpass|keepassxc-cli|kwallet-query|chamber|sops|berglas|aws-vault|git-credential|npm-token)$/.test(name) && !/^(?:--help|list|ls|status|sync|lock|version)$/.test(lower[0] ?? '')) f.add(R.credentialStore);
        else if (name.startsWith('docker-credential')) f.add(R.credentialStore);
    }
  }

  grep(args: readonly Word[], cmd: Command): void {
    const f = this.findings;
    const upstream = cmd.pipeFrom ?? [];
    const dumps = upstream.some((c) => /^(?:env|printenv|set|export|declare|history|ps|cat|strings)$/.test(programName(c.argv[0]?.text ?? '')) && (programName(c.argv[0]?.text ?? '') !== 'cat' || c.argv.slice(1).some((w) => (pathFacts(w.text).classes & PathClass.project) === 0)));
    const o = readOptions(args, new Set(['e', 'f', 'm', 'A', 'B', 'C', 'regexp', 'file', 'max-count', 'include', 'exclude', 'exclude-dir', 'g', 'glob', 't', 'type', 'T']));
    const patterns = [...(o.values.has('e') ? [o.values.get('e') as Word] : []), ...(o.values.has('regexp') ? [o.values.get('regexp') as Word] : [])];
    const files = patterns.length > 0 ? o.operands : o.operands.slice(1);
    const pattern = patterns[0]?.text ?? o.operands[0]?.text ?? '';
    const recursive = hasOption(o, 'rR', 'recursive', 'dereference-recursive') || o.operands.length === 0;
    let outside = false;
    for (const w of files) {
      this.touch(w.text, 'read');
      const facts = pathFacts(w.text);
      if ((facts.classes & PathClass.project) === 0) outside = true;
    }
    if (dumps && files.length === 0) outside = true;
    if ((SECRET_SEARCH_TERMS.test(pattern) || this.v3 && SECRET_PREFIXES_V3.test(pattern)) && outside) f.add(R.credentialSearch);
  }

  pip(name: string, args: readonly Word[]): void {
    const f = this.findings;
    const lower = args.map((w) => w.text.toLowerCase());
    const sub = lower.find((w) => !w.startsWith('-')) ?? '';
    if (name === 'uv' && sub === 'pip') return this.pip('pip', args.slice(lower.indexOf('pip') + 1));
    if ((name === 'pip' || name === 'pip3' || name === 'easy_install') && sub === 'config' && lower.includes('set')) {
      f.add(R.packageConfig);
      return;
    }
    if (!/^(?:install|add|download|inject|run|tool|sync|lock|update|upgrade)$/.test(sub) && name !== 'easy_install') return;
    const o = readOptions(args, new Set(['i', 'index-url', 'extra-index-url', 'f', 'find-links', 'trusted-host', 'r', 'requirement', 'c', 'constraint', 't', 'target', 'e', 'editable', 'prefix', 'root', 'index', 'default-index', 'source', 'c', 'channel']));
    for (const [key, value] of o.allValues) {
      const v = value.text.toLowerCase();
      if ((key === 'i' || key === 'index-url' || key === 'extra-index-url' || key === 'index' || key === 'default-index' || key === 'source') && !/^https:\/\/(?:pypi\.org|files\.pythonhosted\.org|pypi\.python\.org)\b/.test(v)) f.add(R.remoteInstall);
      if (key === 'f' || key === 'find-links') if (/^[a-z]+:\/\//.test(v)) f.add(R.remoteInstall);
      if (key === 'trusted-host') f.add(R.remoteInstall);
      if ((key === 'e' || key === 'editable') && /^(?:git\+|https?:|hg\+|svn\+|bzr\+)/.test(v)) f.add(R.remoteInstall);
      if ((key === 'c' || key === 'channel') && (name === 'conda' || name === 'mamba') && !/^(?:conda-forge|defaults|bioconda|pytorch|nvidia|anaconda)$/.test(v)) f.add(R.remoteInstall);
      if (key === 'r' || key === 'requirement' || key === 'constraint') this.touch(value.text, 'read');
    }
    for (const w of o.operands) {
      const v = w.text.toLowerCase();
      if (/^(?:git\+|hg\+|svn\+|bzr\+|https?:\/\/|ftp:\/\/|file:\/\/)/.test(v) || /@\s*(?:git\+|https?:)/.test(v) || /\.(?:whl|tar\.gz|zip|tgz|egg)$/.test(v) && v.includes('://')) f.add(R.remoteInstall);
      if (/^(?:\/tmp\/|\/var\/tmp\/|\/dev\/shm\/)/.test(v) && /\.(?:whl|tar\.gz|zip|tgz|egg)$/.test(v)) f.add(R.remoteInstall);
    }
  }

  npm(name: string, args: readonly Word[]): void {
    const f = this.findings;
    const lower = args.map((w) => w.text.toLowerCase());
    const sub = lower.find((w) => !w.startsWith('-')) ?? '';
    if (sub === 'config' || sub === 'c' || sub === 'set') {
      if (lower.includes('set') || sub === 'set') {
        const keys = lower.filter((w) => /registry|ignore-scripts|script-shell|node-options|cafile|strict-ssl|proxy|_auth|_authtoken|npmrcpath|globalconfig|userconfig/.test(w) && !OFFICIAL_NPM_REGISTRY.test(w));
        // Version 8: the registry set back to the official one is no redirection.
        const official = this.v8 && keys.length === 1 && /^registry(?:=https:\/\/registry\.(?:npmjs\.org|yarnpkg\.com)\/?)?$/.test(keys[0] as string) && ((keys[0] as string).includes('=') || lower.some((w) => OFFICIAL_NPM_REGISTRY.test(w)));
        if (keys.length > 0 && !official) f.add(R.packageConfig);
      }
      if (lower.includes('get') || lower.includes('list') || lower.includes('ls')) if (lower.some((w) => /_auth|token/.test(w))) f.add(R.credentialStore);
      return;
    }
    if (sub === 'token' || (sub === 'whoami' && false)) {
      f.add(R.credentialStore);
      return;
    }
    if (name === 'npm' && sub === 'publish' || name === 'yarn' && sub === 'publish' || name === 'pnpm' && sub === 'publish') {
      // Version 3: a dry run packs and lists, and uploads nothing.
      if (this.v3 && lower.includes('--dry-run')) return;
      f.add(R.cloudUpload);
      return;
    }
    const installs = /^(?:install|i|add|ci|update|up|upgrade|exec|x|dlx|create|init|global|link)$/.test(sub) || name === 'npx' || name === 'pnpx' || name === 'bunx';
    if (!installs) return;
    const o = readOptions(args, new Set(['registry', 'prefix', 'C', 'w', 'workspace', 'p', 'package', 'userconfig', 'globalconfig', 'cache']));
    for (const [key, value] of o.allValues) {
      if (key === 'registry' && !/^https:\/\/registry\.(?:npmjs\.org|yarnpkg\.com|npmjs\.com)\/?$/.test(value.text.toLowerCase())) f.add(R.remoteInstall);
      if (key === 'userconfig' || key === 'globalconfig') f.add(R.packageConfig);
      if (key === 'p' || key === 'package') this.npmSpec(value.text);
    }
    const specs = name === 'npx' || name === 'pnpx' || name === 'bunx' ? o.operands.slice(0, 1) : o.operands.slice(1);
    for (const w of specs) this.npmSpec(w.text);
  }

  npmSpec(spec: string): void {
    const v = spec.toLowerCase();
    if (/^(?:git\+|git:|github:|gitlab:|bitbucket:|gist:|https?:\/\/|file:\/\/)/.test(v) || /^[a-z0-9_.-]+\/[a-z0-9_.-]+(?:#.*)?$/.test(v) || /\.tgz$/.test(v) && (v.includes('://') || v.startsWith('/tmp/')) || /@(?:git\+|https?:|github:)/.test(v)) this.findings.add(R.remoteInstall);
  }

  packages(name: string, args: readonly Word[]): void {
    const f = this.findings;
    const lower = args.map((w) => w.text.toLowerCase());
    const joined = lower.join(' ');
    const sub = lower.find((w) => !w.startsWith('-')) ?? '';
    switch (name) {
      case 'cargo':
        if (sub === 'install' && lower.some((w) => w === '--git' || w.startsWith('--git=') || w === '--index' || w.startsWith('--index=') || w === '--registry' || w.startsWith('--registry='))) f.add(R.remoteInstall);
        if (sub === 'publish' && !(this.v3 && lower.includes('--dry-run'))) f.add(R.cloudUpload);
        return;
      case 'go':
        if ((sub === 'install' || sub === 'get' || sub === 'run') && lower.some((w) => /^(?:https?|git):\/\//.test(w))) f.add(R.remoteInstall);
        if (sub === 'env' && lower.includes('-w') && lower.some((w) => /^(?:goproxy|gonosumdb|gonosumcheck|goinsecure|goprivate|gosumdb|goflags)=/.test(w))) f.add(R.packageConfig);
        return;
      case 'gem': case 'bundle':
        if ((sub === 'install' || sub === 'add') && lower.some((w) => w === '--source' || w.startsWith('--source=') || w === '-s' || w === '--git' || /^https?:\/\//.test(w))) f.add(R.remoteInstall);
        if (sub === 'sources' && lower.some((w) => w === '--add' || w === '-a')) f.add(R.packageConfig);
        if (sub === 'config' && lower.includes('set') && /mirror|source|path/.test(joined)) f.add(R.packageConfig);
        return;
      case 'composer':
        if (/\bconfig\b.*\brepositories\b/.test(joined)) f.add(R.packageConfig);
        return;
      case 'brew':
        if ((sub === 'install' || sub === 'reinstall') && lower.some((w) => /^https?:\/\//.test(w) || w.endsWith('.rb'))) f.add(R.remoteInstall);
        if (sub === 'tap' && lower.some((w) => /^https?:\/\/|\.git$/.test(w))) f.add(R.remoteInstall);
        return;
      case 'add-apt-repository': case 'apt-key':
        f.add(R.packageConfig);
        return;
      case 'dpkg': case 'rpm':
        if (lower.some((w) => /^-[a-z]*i|^--install$|^-u$|^-uvh$/.test(w))) {
          if (lower.some((w) => /^(?:https?|ftp):\/\//.test(w) || w.startsWith('/tmp/') || w.startsWith('/dev/shm/'))) f.add(R.remoteInstall);
          else f.add(R.sudo);
        }
        if (name === 'rpm' && lower.includes('--import')) f.add(R.packageConfig);
        return;
      case 'apt': case 'apt-get': case 'yum': case 'dnf': case 'zypper': case 'apk': case 'pacman': case 'snap': case 'flatpak': case 'port': case 'nix-env':
        if (lower.some((w) => /^(?:https?|ftp):\/\//.test(w) || /\.(?:deb|rpm|apk|pkg\.tar\.\w+)$/.test(w) && (w.includes('://') || w.startsWith('/tmp/')))) f.add(R.remoteInstall);
        if (lower.some((w) => w === '--allow-unauthenticated' || w === '--nogpgcheck' || w === '--no-gpg-checks' || w === '--dangerous' || w === '--allow-untrusted' || w === '--classic' && false || w === '--devmode' || w === '--allow-insecure-repositories')) f.add(R.remoteInstall);
        if ((name === 'yum' || name === 'dnf') && /config-manager.*--add-repo|--add-repo/.test(joined)) f.add(R.packageConfig);
        if (name === 'apk' && lower.some((w) => w === '--repository' || w === '-x' || w === '--allow-untrusted')) f.add(R.remoteInstall);
        if (name === 'flatpak' && sub === 'remote-add') f.add(R.packageConfig);
        if (name === 'snap' && lower.includes('--dangerous')) f.add(R.remoteInstall);
        if (/^(?:remove|purge|autoremove|erase)$/.test(sub) && lower.some((w) => /^(?:openssh-server|sudo|systemd|libc6|coreutils|bash|auditd|rsyslog|apparmor|ufw|firewalld|ledger)/.test(w))) f.add(R.systemDelete);
        return;
      case 'dotnet': case 'nuget':
        if (/\bnuget add source\b|\bsources add\b/.test(joined)) f.add(R.packageConfig);
        if (lower.some((w) => w === '--source' || w === '-s') && (sub === 'add' || sub === 'install' || sub === 'tool')) f.add(R.remoteInstall);
        return;
      case 'mvn': case 'gradle':
        if (lower.some((w) => /^-d(?:repourl|remoterepositories)=/.test(w) || /^-dmaven\.repo\.remote=/.test(w))) f.add(R.remoteInstall);
        for (const w of args) if (w.text === '-s' || w.text === '--settings') f.add(R.packageConfig);
        return;
      default:
        if (lower.some((w) => /^(?:git\+|https?:\/\/)/.test(w)) && /\b(?:install|add|plugin)\b/.test(joined)) f.add(R.remoteInstall);
    }
  }

  git(args: readonly Word[]): void {
    const f = this.findings;
    const global = new Set(['C', 'c', 'git-dir', 'work-tree', 'namespace', 'exec-path', 'config-env', 'super-prefix']);
    let i = 0;
    while (i < args.length && (args[i] as Word).text.startsWith('-')) {
      const t = (args[i] as Word).text;
      const name = t.replace(/^-+/, '').split('=')[0] ?? '';
      if (name === 'c' && args[i + 1] !== undefined) this.gitConfigValue((args[i + 1] as Word).text);
      if (t.startsWith('--exec-path=') || t === '--exec-path' && args[i + 1] !== undefined) f.add(R.gitConfig);
      if (t.startsWith('--config-env')) f.add(R.gitConfig);
      i += global.has(name) && !t.includes('=') ? 2 : 1;
    }
    const sub = args[i]?.text ?? '';
    const rest = args.slice(i + 1);
    const lower = rest.map((w) => w.text.toLowerCase());
    const gitValues = new Set(['m', 'message', 'o', 'push-option', 'u', 'set-upstream-to', 'b', 'B', 'c', 'C', 'f', 'file', 'branch', 'exec', 'x', 'template', 'upload-pack', 'receive-pack', 'config', 'depth', 'origin', 'separate-git-dir', 'filter', 'reference', 'strategy', 's', 'S', 'X']);
    // Version 4: push's -u is --set-upstream (no value): `git push -u --force origin main` is a forced push.
    if (this.v4 && sub === 'push') gitValues.delete('u');
    const o = readOptions(rest, gitValues);
    switch (sub) {
      case 'push': {
        // Version 3: pushing to a URL, or to a remote added earlier in the same command, sends the repository to a new place.
        const to = o.operands[0]?.text;
        if (this.v3 && to !== undefined && (to.includes('://') || /^[^/\s:]+@[^/\s:]+:/.test(to) || this.remotes.has(to))) f.add(R.upload);
        // Version 4: a push with lease of named branches none of which is shared history (main, release/*, ...) is the everyday rebase of one's own branch.
        const ownLease = this.v4 && hasOption(o, '', 'force-with-lease') && !hasOption(o, 'fd', 'force', 'delete', 'mirror', 'prune', 'all', 'tags') && o.operands.length >= 2 && o.operands.slice(1).every((w) => !w.dynamic && !w.text.startsWith('+') && !w.text.startsWith(':') && /^[A-Za-z0-9._/-]+(?::[A-Za-z0-9._/-]+)?$/.test(w.text) && !SHARED_BRANCH.test(w.text.slice(w.text.indexOf(':') + 1).replace(/^refs\/heads\//, '')));
        if (!ownLease && (hasOption(o, 'fd', 'force', 'force-with-lease', 'force-if-includes', 'delete', 'mirror', 'prune') || o.operands.some((w) => w.text.startsWith('+') || /^:[^\s]+$/.test(w.text)))) f.add(R.gitHistory);
        if (o.values.has('receive-pack') || o.values.has('exec')) f.add(R.gitConfig);
        return;
      }
      case 'reset':
        if (o.long.has('hard') || o.long.has('merge') && false) f.add(R.gitHistory);
        return;
      case 'clean':
        if (hasOption(o, 'f', 'force')) f.add(R.gitHistory);
        return;
      case 'branch':
        if (o.short.has('D') || (o.short.has('d') && o.short.has('f')) || (o.long.has('delete') && o.long.has('force'))) f.add(R.gitHistory);
        // Version 8: a safe delete (-d, --delete) is refused by git for a branch not merged: no history is lost.
        else if ((o.short.has('d') || o.long.has('delete')) && !this.v8) f.add(R.gitHistory);
        return;
      case 'tag':
        if (o.short.has('d') || o.long.has('delete')) f.add(R.gitHistory);
        return;
      case 'filter-branch': case 'filter-repo': case 'replace':
        f.add(R.gitHistory);
        return;
      case 'reflog':
        if (lower.includes('expire') || lower.includes('delete')) f.add(R.gitHistory);
        return;
      case 'gc':
        if (lower.some((w) => w.startsWith('--prune=now') || w === '--prune=all')) f.add(R.gitHistory);
        return;
      case 'checkout': case 'restore': case 'switch':
        if ((sub === 'checkout' && (o.operands.some((w) => w.text === '.') && rest.some((w) => w.text === '--') || o.short.has('f') || o.long.has('force'))) || (sub === 'restore' && o.operands.some((w) => w.text === '.'))) f.add(R.gitHistory);
        return;
      case 'stash':
        if (lower[0] === 'clear' || lower[0] === 'drop') f.add(R.gitHistory);
        return;
      case 'update-ref':
        if (o.short.has('d')) f.add(R.gitHistory);
        return;
      case 'config': {
        const key = o.operands[0]?.text.toLowerCase() ?? '';
        const value = o.operands.slice(1).map((w) => w.text).join(' ');
        if (o.operands.length >= 2 || lower.includes('--add') || lower.includes('--replace-all')) this.gitConfigValue(`${key}=${value}`);
        if (/^credential\./.test(key) || /(?:^|\.)(?:password|token)$/.test(key)) if (o.operands.length === 1 || lower.includes('--get')) f.add(R.credentialStore);
        if (lower.includes('--get-all') && /credential|token|password/.test(key)) f.add(R.credentialStore);
        const file = o.values.get('f') ?? o.values.get('file');
        if (file !== undefined && o.operands.length >= 2) this.touch(file.text, 'write');
        return;
      }
      case 'credential': case 'credential-store': case 'credential-cache':
        if (lower.includes('fill') || lower.includes('get')) f.add(R.credentialStore);
        return;
      case 'clone': case 'fetch': case 'pull': case 'submodule': case 'remote': case 'ls-remote': {
        if (this.v3 && sub === 'remote' && (lower[0] === 'add' || lower[0] === 'set-url')) {
          const name = rest.slice(1).find((w) => !w.text.startsWith('-'));
          if (name !== undefined) this.remotes.add(name.text);
        }
        if (o.values.has('upload-pack') || o.values.has('u') && sub === 'clone' || o.values.has('template') || o.values.has('config') && /hookspath|fsmonitor|sshcommand|pager|editor|askpass|\.command/i.test(o.values.get('config')?.text ?? '')) f.add(R.gitConfig);
        if (rest.some((w) => /^ext::|^fd::/i.test(w.text))) f.add(R.gitConfig);
        return;
      }
      case 'hook': case 'daemon': case 'instaweb':
        f.add(R.rawSocket);
        return;
      case 'rm': {
        // Version 6: git rm read with its own options (-f takes no value: `git rm -rf .` deletes the tree); --cached leaves the files.
        if (this.v6) {
          const own = readOptions(rest, new Set(['pathspec-from-file']));
          if (own.long.has('cached')) return;
          if (hasOption(own, 'r')) for (const w of own.operands) this.touch(w.text === '*' ? '.' : w.text, 'delete_tree');
          return;
        }
        if (o.short.has('r') && o.operands.some((w) => w.text === '.' || w.text === '*')) f.add(R.recursiveDelete);
        return;
      }
      default:
        if (sub.startsWith('!')) f.add(R.eval);
        this.generic(rest.filter((w) => !w.text.startsWith('-') && (w.text.startsWith('/') || w.text.startsWith('~'))));
    }
  }

  gitConfigValue(setting: string): void {
    const eq = setting.indexOf('=');
    const key = (eq === -1 ? setting : setting.slice(0, eq)).toLowerCase();
    const value = eq === -1 ? '' : setting.slice(eq + 1);
    if (/^core\.(?:hookspath|sshcommand|pager|editor|fsmonitor|askpass|gitproxy|attributesfile)$/.test(key) || /^(?:sequence|diff\.[^.]+|merge\.[^.]+|filter\.[^.]+|gpg)\.(?:editor|command|textconv|driver|clean|smudge|process|program)$/.test(key) || key === 'uploadpack.packobjectshook' || key === 'credential.helper' && /^!|\//.test(value) || /^alias\./.test(key) && value.startsWith('!') || /^url\..*\.insteadof$/.test(key) || key === 'init.templatedir' || key === 'include.path' || key.startsWith('includeif.') || key === 'protocol.ext.allow') this.findings.add(R.gitConfig);
    if (key === 'credential.helper' && /\bstore\b/.test(value)) this.findings.add(R.credentialWrite);
    if (/^(?:http\.sslverify|http\.proxy)$/.test(key) && /false|\/\//.test(value)) this.findings.add(R.packageConfig);
  }

  archive(name: string, args: readonly Word[]): void {
    const f = this.findings;
    const o = readOptions(args, new Set(['f', 'C', 'file', 'directory', 'd', 'o', 'T', 'files-from', 'X', 'exclude-from', 'exclude', 'x', 'i', 'P', 'password', 'to-command', 'use-compress-program', 'I', 'checkpoint-action', 'checkpoint']));
    const extract = name === 'unzip' || (name === 'tar' || name === 'gtar' || name === 'bsdtar') && hasOption(o, 'x', 'extract', 'get') || (name === '7z' || name === '7za') && (args[0]?.text === 'x' || args[0]?.text === 'e');
    const dir = o.values.get('C') ?? o.values.get('directory') ?? o.values.get('d');
    if (extract) {
      if (dir !== undefined) this.touch(`${dir.text}/x`, 'write');
      if (hasOption(o, 'P', 'absolute-names')) f.add(R.systemWrite);
    } else {
      const archive = o.values.get('f') ?? o.values.get('file');
      if (archive !== undefined && !SAFE_SINK.test(archive.text)) this.touch(archive.text, 'write');
      for (const w of o.operands) this.touch(w.text, 'read');
      if (dir !== undefined) this.touch(dir.text, 'read');
    }
    for (const [key, value] of o.allValues) if (key === 'to-command' || key === 'use-compress-program' || key === 'I' || key === 'checkpoint-action' && value.text.startsWith('exec')) this.shell(key === 'checkpoint-action' ? value.text.slice(5) : value.text, 1);
    if (this.v3) {
      // Version 3: an archiver's exec hooks (tar --checkpoint-action=exec, zip -TT) are a way to run a program, not archiving.
      if (o.allValues.some(([key, value]) => key === 'checkpoint-action' && value.text.startsWith('exec') || key === 'to-command')) f.add(R.eval);
      if (name === 'zip') {
        const hook = args.findIndex((w) => w.text === '-TT' || w.text === '--unzip-command' || w.text.startsWith('--unzip-command='));
        if (hook !== -1) {
          f.add(R.eval);
          const command = args[hook]?.text.startsWith('--unzip-command=') ? args[hook]?.text.slice(16) : args[hook + 1]?.text;
          if (command !== undefined) this.shell(command, 1);
        }
      }
    }
  }
}

/** Names of common commands: a function or alias with one of these names shadows what the user expects to run. */
/** Version 10: openssl subcommands that generate keys, requests and certificates. */
const KEY_GENERATION = /^(?:req|genrsa|genpkey|ecparam|x509|gendsa|dhparam)$/;

/** Version 10: a path inside the project's own tree, outside any dot directory (`certs/dev-key.pem`, not `.ssh/id_rsa` nor `../x`). */
function projectOwnPath(raw: string): boolean {
  const facts = pathFacts(raw);
  return (facts.classes & PathClass.project) !== 0 && !/(?:^|\/)\.[^/.]/.test(facts.normal) && !facts.normal.startsWith('..');
}

const COMMON_COMMANDS: ReadonlySet<string> = new Set(['sudo', 'su', 'ls', 'cd', 'cat', 'ssh', 'scp', 'git', 'curl', 'wget', 'ps', 'kill', 'rm', 'cp', 'mv', 'echo', 'python', 'python3', 'node', 'npm', 'pip', 'docker', 'kubectl', 'which', 'passwd', 'gpg', 'openssl', 'ledger', 'command', 'type', 'exit', 'history', 'clear', 'vim', 'vi', 'nano', 'grep', 'find', 'id', 'whoami', 'apt', 'apt-get', 'make', 'bash', 'sh']);

/** Memos of the readings of versions 2 to 5 (one per version: their answers differ). */
const shellMemos: readonly BoundedCache<readonly number[]>[] = Array.from({ length: ANALYSIS_SLOTS }, () => new BoundedCache<readonly number[]>(16_384, 8192));

function analyzeUncached(text: string): readonly number[] {
  const findings = new Findings();
  new Analysis(findings, { produced: new Set() }).shell(text, 0);
  // Version 9: what a line says beyond its words (statements in application code's literals and here-strings, hook bypass).
  if (analysis.v9) lineFindingsV9(findings, text);
  if (analysis.v11) lineFindingsV11(findings, text);
  if (analysis.v12) lineFindingsV12(findings, text);
  if (analysis.v13) lineFindingsV13(findings, text);
  return Object.freeze(findings.list.slice());
}

/**
 * The rules (version 2, 3 or 4, as analysis-version.ts says) that fire on a
 * shell command (indexes into COMMAND_RULES). Identical commands are read
 * once (a bounded memo per version).
 */
export function analyzeShell(text: string): readonly number[] {
  return (shellMemos[analysisSlot()] as BoundedCache<readonly number[]>).get(text, analyzeUncached);
}

/** Reads inline code (a code tool's `code` argument) the way `python -c` is read. */
export function analyzeCode(text: string): readonly number[] {
  const findings = new Findings();
  const analysis = new Analysis(findings, { produced: new Set() });
  inspectCode(findings, text, (shell) => analysis.shell(shell, 1));
  return findings.list;
}
