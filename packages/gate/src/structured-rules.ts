import { BoundedCache } from './bounded-cache.js';
import { STRING_FACTS_MAX_LENGTH, factsOf, nameFactsOf } from './string-facts.js';
import { R, type Findings } from './findings.js';
import { PathClass, looksLikePath, pathFacts } from './path-model.js';
import { holdsSecret } from './secret-shapes.js';

/**
 * Rules version 6: what structured tool calls (MCP servers, function-calling
 * tools) do that their names and fields say, where no shell command is there
 * to read. Tools that give authority over code hosting or relax its
 * protection; infrastructure tools destroying with auto-approve; sending
 * tools that attach data files or mail many recipients; secrets carried in a
 * fetched URL. Read from the tool's name (its words, remembered per name)
 * and its arguments (untrusted: bounded walks, nothing kept past the call).
 */

/** Facts of a tool's whole name, as bits (remembered per name). */
const ToolFact = {
  /** Adds people, teams, keys or permissions to something (`add_collaborator`, `invite_member`, `set_permission`). */
  authority: 1 << 0,
  /** Branch protection, rulesets, required reviews or checks. */
  protection: 1 << 1,
  /** Removes or turns off what it names (`delete_branch_protection`, `disable_ruleset`). */
  removes: 1 << 2,
  /** An infrastructure-as-code tool (terraform, tofu, pulumi, cdk, cloudformation, ...). */
  infrastructure: 1 << 3,
  /** Its name says it destroys or tears down. */
  destroys: 1 << 4,
  /** Its name says it sends in bulk (campaigns, newsletters, mass mail). */
  bulk: 1 << 5,
} as const;

const AUTHORITY_NAME = /(?:^|_)(?:add|invite|set|update|grant|create|put|edit|change|assign)_(?:[a-z]+_)?(?:collaborators?|members?|membership|maintainers?|owners?|admins?|permissions?|roles?|deploy_keys?|access)(?:_|$)|(?:^|_)(?:collaborators?|membership|deploy_keys?)_(?:add|invite|create|update|set)(?:_|$)/;
const PROTECTION_NAME = /(?:^|_)(?:branch_protections?|protected_branch(?:es)?|protections?|rulesets?|branch_rules?|required_(?:reviews|pull_request_reviews|status_checks|signatures)|status_checks|code_owners|admin_enforcement|push_rules?|approval_rules?|merge_request_approvals?)(?:_|$)/;
const REMOVES_NAME = /(?:^|_)(?:delete|remove|disable|unprotect|drop|clear|reset)(?:_|$)/;
const INFRASTRUCTURE_NAME = /(?:^|_)(?:terraform|tofu|opentofu|terragrunt|tfc|tfe|spacelift|env0|atlantis|pulumi|cdk|cdktf|cloudformation|cfn|crossplane|serverless|sls|infra|infrastructure|iac|stack|stacks)(?:_|$)/;
const DESTROYS_NAME = /(?:^|_)(?:destroy|teardown|tear_down|nuke|decommission|deprovision)(?:_|$)/;
const BULK_NAME = /(?:^|_)(?:bulk|batch|campaign|campaigns|newsletter|mass|blast|mailing|broadcast|send_to_all)(?:_|$)/;

/** A tool name in word form: MCP separators, camelCase and punctuation to `_`, lowercased. */
function wordsOf(tool: string): string {
  return tool.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase().replace(/[^a-z0-9]+/g, '_');
}

function toolFactsOf(tool: string): number {
  const words = wordsOf(tool);
  return (
    (AUTHORITY_NAME.test(words) ? ToolFact.authority : 0) |
    (PROTECTION_NAME.test(words) ? ToolFact.protection : 0) |
    (REMOVES_NAME.test(words) ? ToolFact.removes : 0) |
    (INFRASTRUCTURE_NAME.test(words) ? ToolFact.infrastructure : 0) |
    (DESTROYS_NAME.test(words) ? ToolFact.destroys : 0) |
    (BULK_NAME.test(words) ? ToolFact.bulk : 0)
  );
}
const toolFactsMemo = new BoundedCache<number>(65_536, 256);

/** An argument name in compact form (`auto_approve`, `autoApprove` -> `autoapprove`). */
function compactKey(key: string): string {
  return key.toLowerCase().replace(/[^a-z0-9]/g, '');
}

/** Permission values that give no write: read, pull, triage, guest, reporter (GitLab 10, 20). */
const LOW_PERMISSION = /^(?:read|pull|triage|guest|reporter|viewer|none|read_only|readonly|10|20)$/i;
const PERMISSION_KEY = /^(?:permission|permissions|role|rolename|accesslevel|access|level|privilege)$/;
/** Settings of branch protection that protect when on: off (null, false, 0, empty) relaxes them. */
const PROTECTIVE_SETTING = /review|enforceadmins|statuscheck|restriction|signature|linearhistory|codeowner|conversationresolution|dismiss|approv|lock/;
/** Settings that relax protection when on. */
const RELAXING_SETTING = /^(?:allowforcepush(?:es)?|allowdeletions?|bypass\w*|allowbypass\w*|skip\w*)$/;
const DESTROY_KEY = /^(?:destroy|isdestroy|teardown|forcedestroy|deleteall|purge)$/;
/** Argument names whose value names the operation (`plan_mode: "destroy"`, `operation: "destroy"`). */
const OPERATION_KEY = /^(?:mode|planmode|operation|action|command|subcommand|op)$/;
const AUTO_APPROVE_KEY = /^(?:autoapprove|autoapply|approve|yes|skipconfirm(?:ation)?|skipapproval|skipreview|noconfirm|noninteractive|force|confirm)$/;

/** What an argument name says, as bits (remembered per name: names repeat call after call). */
const KeyFact = {
  permission: 1 << 0,
  destroy: 1 << 1,
  autoApprove: 1 << 2,
  operation: 1 << 3,
  attachment: 1 << 4,
  audience: 1 << 5,
  sender: 1 << 6,
} as const;

function keyFactsOf(name: string): number {
  const key = compactKey(name);
  return (
    (PERMISSION_KEY.test(key) ? KeyFact.permission : 0) |
    (DESTROY_KEY.test(key) ? KeyFact.destroy : 0) |
    (AUTO_APPROVE_KEY.test(key) ? KeyFact.autoApprove : 0) |
    (OPERATION_KEY.test(key) ? KeyFact.operation : 0) |
    (ATTACHMENT_KEY.test(key) ? KeyFact.attachment : 0) |
    (AUDIENCE_KEY.test(key) ? KeyFact.audience : 0) |
    (SENDER_KEY.test(key) ? KeyFact.sender : 0)
  );
}
/** {@link keyFactsOf}, remembered in the name's entry of string-facts.ts (names repeat call after call). */
function keyFacts(name: string): number {
  const facts = nameFactsOf(name);
  if (facts.structured === -1) facts.structured = keyFactsOf(name);
  return facts.structured;
}

/** Nodes a walk of one call may still visit (synchronous, never re-entered). */
let budget = 0;

/** True when a value is "off": null, false, 0, an empty string, array or object. */
function isOff(value: unknown): boolean {
  if (value === null || value === false || value === 0 || value === '' || value === 'false') return true;
  if (Array.isArray(value)) return value.length === 0;
  return typeof value === 'object' && value !== null && Object.keys(value).length === 0;
}

/** True when a protection call's settings turn a protective setting off or a relaxing one on (bounded walk). */
function relaxes(value: unknown, depth: number): boolean {
  if (depth > 6 || typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  for (const name in value) {
    if (!Object.hasOwn(value, name) || --budget < 0) continue;
    const key = compactKey(name);
    const member = (value as Record<string, unknown>)[name];
    if (PROTECTIVE_SETTING.test(key) && !/count$/.test(key) && isOff(member)) return true;
    if (/requiredapprovingreviewcount$|approvalsrequired$/.test(key) && (member === 0 || member === '0')) return true;
    if (RELAXING_SETTING.test(key) && (member === true || member === 'true' || (typeof member === 'object' && member !== null && !isOff(member)))) return true;
    if (relaxes(member, depth + 1)) return true;
  }
  return false;
}

/** What the call's own arguments say, as bits: 1 destroy (a flag on or the operation named), 2 auto-approve on, 4 a permission named, 8 that permission gives write or more. */
function ownArguments(args: Record<string, unknown>): number {
  let bits = 0;
  for (const name in args) {
    if (!Object.hasOwn(args, name)) continue;
    const value = args[name];
    const on = value === true || value === 'true' || value === 'yes' || value === 1;
    const named = typeof value === 'string' || typeof value === 'number';
    if (!on && !named) continue;
    const facts = keyFacts(name);
    if (facts === 0) continue;
    if (on && (facts & KeyFact.destroy) !== 0) bits |= 1;
    if (on && (facts & KeyFact.autoApprove) !== 0) bits |= 2;
    if (typeof value === 'string' && (facts & KeyFact.operation) !== 0 && /^\s*-?destroy\s*$/i.test(value)) bits |= 1;
    if (named && (facts & KeyFact.permission) !== 0) bits = (bits | 4) & ~8 | (LOW_PERMISSION.test(String(value).trim()) ? 0 : 8);
  }
  return bits;
}

/** Recipient addresses that stand for a list or for everyone (`all-customers@`, `everyone@`, `...@lists.example`). */
const LIST_ADDRESS = /^(?:all|everyone|everybody|all[-_.][\w.+-]*|[\w.+-]*[-_.]all|customers|clients|users|subscribers|members|staff|employees|company|announce(?:ments?)?|newsletter|marketing|mailing-?list)@|@(?:lists?|groups|googlegroups|mailman|listserv)\./i;
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}\.[a-z]{2,}$/i;
/** Argument names of who sends (not recipients). */
const SENDER_KEY = /^(?:from|sender|replyto|fromemail|fromaddress|frommail|author)$/;
/** Argument names that select an audience rather than people. */
const AUDIENCE_KEY = /^(?:listid|listids|segment|segments|segmentid|segmentids|audience|audienceid|contactlist|contactlists|sendtoall|allcontacts|allusers|allsubscribers|broadcast)$/;
/** Recipients at which a send is bulk. */
const BULK_RECIPIENTS = 20;

/** Argument names of attached files. */
const ATTACHMENT_KEY = /^(?:attachments?|attach|attachedfiles?|files?|filepaths?|attachmentpaths?|documents?|paths?|filename|path)$/;
/** Files that hold data or secrets by their kind or name (exports, dumps, spreadsheets, databases, archives, keys). */
const DATA_FILE = /\.(?:csv|tsv|xlsx?|xlsm|ods|sql|db|sqlite3?|mdb|dump|bak|parquet|avro|jsonl|ndjson|pem|key|p12|pfx|kdbx|env|tar|tgz|gz|zip|7z|rar)$|(?:^|[/_.-])(?:customers?|clients?|users?|employees?|payroll|salar(?:y|ies)|patients?|accounts?|contacts|leads|members|export|exports|dump|backup|secrets?|credentials?|passwords?|keys?|tokens?)(?:[/_.-]|$)/i;

/** What the walk of a sending call found. */
let recipients = 0;
let audience = false;
let attachment = false;
let urlSecret = false;

function visitSent(value: unknown, depth: number, underAttachment: boolean): void {
  if (depth > 8 || --budget < 0) return;
  if (typeof value === 'string') {
    if (underAttachment && !attachment) {
      const path = value.trim();
      if (path !== '' && path.indexOf('://') === -1 && !/\s/.test(path) && looksLikePath(path) && (DATA_FILE.test(path) || (pathFacts(path).classes & (PathClass.credential | PathClass.ssh | PathClass.ledger)) !== 0)) attachment = true;
    }
    if (value.length < 320 && value.indexOf('@') !== -1) {
      for (const part of value.split(/[,;]\s*/, 64)) {
        const address = part.replace(/^.*<([^>]*)>.*$/, '$1').trim();
        if (!EMAIL.test(address)) continue;
        recipients++;
        if (LIST_ADDRESS.test(address)) audience = true;
      }
    }
    if (value.indexOf('://') !== -1 && urlHoldsSecret(value)) urlSecret = true;
    return;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) visitSent(value[i], depth + 1, underAttachment);
    return;
  }
  if (typeof value === 'object' && value !== null) {
    for (const name in value) {
      if (!Object.hasOwn(value, name)) continue;
      const member = (value as Record<string, unknown>)[name];
      const facts = keyFacts(name);
      if ((facts & KeyFact.audience) !== 0 && !isOff(member)) audience = true;
      // Who sends is not who receives.
      if ((facts & KeyFact.sender) !== 0) continue;
      visitSent(member, depth + 1, underAttachment || (facts & KeyFact.attachment) !== 0);
    }
  }
}

/**
 * Version 6: the findings of a structured call by a tool the registry does
 * not know (`verbs`: the bits of its words, sending is 8).
 */
export function structuredCallFindings(findings: Findings, tool: string, verbs: number, args: Record<string, unknown>): void {
  const facts = toolFactsMemo.get(tool, toolFactsOf);
  budget = 1024;
  const own = ownArguments(args);
  // A collaborator or member added with no permission named gets the host's default (write on GitHub).
  if ((facts & ToolFact.authority) !== 0 && ((own & 4) === 0 || (own & 8) !== 0)) findings.add(R.repositoryAuthority);
  if ((facts & ToolFact.protection) !== 0 && ((facts & ToolFact.removes) !== 0 || relaxes(args, 0))) findings.add(R.repositoryAuthority);
  const destroy = (facts & ToolFact.destroys) !== 0 || (own & 1) !== 0;
  if (destroy && ((facts & ToolFact.infrastructure) !== 0 || (own & 2) !== 0)) findings.add(R.infrastructureDestroy);
  if ((verbs & 8) !== 0) {
    recipients = 0;
    audience = false;
    attachment = false;
    urlSecret = false;
    visitSent(args, 0, false);
    if (attachment) findings.add(R.fileAttachment);
    if (audience || recipients >= BULK_RECIPIENTS || (facts & ToolFact.bulk) !== 0) findings.add(R.bulkMessage);
    // A secret in a URL the message carries (percent-encoded too).
    if (urlSecret) findings.add(R.secretInMessage);
  }
}

/** Percent-decoded text (`%3D` to `=`, `+` to a space), or the text itself when it does not decode. */
function percentDecoded(text: string): string {
  if (text.indexOf('%') === -1) return text;
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

/** A URL's query and fragment as text a secret's shape can be read in (percent-encoding undone). */
function urlCarriesSecret(url: string): boolean {
  return holdsSecret(url) || (url.indexOf('%') !== -1 && holdsSecret(percentDecoded(url)));
}
/** {@link urlCarriesSecret}, remembered in the URL's entry of string-facts.ts. */
function urlHoldsSecret(url: string): boolean {
  if (url.length > STRING_FACTS_MAX_LENGTH) return urlCarriesSecret(url);
  const facts = factsOf(url);
  if (facts.urlSecret === -1) facts.urlSecret = urlCarriesSecret(url) ? 1 : 0;
  return facts.urlSecret === 1;
}

function visitUrls(findings: Findings, value: unknown, depth: number): void {
  if (depth > 8 || --budget < 0) return;
  if (typeof value === 'string') {
    if (value.indexOf('://') !== -1 && urlHoldsSecret(value)) findings.add(R.secretInMessage);
  } else if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) visitUrls(findings, value[i], depth + 1);
  } else if (typeof value === 'object' && value !== null) {
    for (const name in value) if (Object.hasOwn(value, name)) visitUrls(findings, (value as Record<string, unknown>)[name], depth + 1);
  }
}

/** Version 6: a secret by its shape in a URL a fetch tool requests (its query string leaves with the request, percent-encoded or not). */
export function urlSecretFindings(findings: Findings, args: unknown): void {
  budget = 1024;
  visitUrls(findings, args, 0);
}
