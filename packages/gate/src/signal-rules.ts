import type { Rule } from './rule.js';

/**
 * Views of a proposal that signal rules read (proposal-views.ts builds them).
 * "Word" views are lowercase ASCII words separated by single spaces
 * (`credentials.share` reads `credentials share`); "normal" views keep
 * punctuation. Neither the query nor the labels is ever a field.
 */
export type SignalField =
  | 'tool' // word
  | 'action' // word
  | 'target' // word
  | 'scope' // word
  | 'recipient' // normal
  | 'environment' // normal, context.environment
  | 'argKeys' // word form of each argument name, joined by ' | '
  | 'argValues'; // normal form of the argument values, flattened (proposal-views.ts)

/** Facts proposal-views.ts derives from the proposal as a whole. */
export type SignalFlag =
  /** The recipient is nobody, the user being served, or the agent itself. */
  | 'recipientIsSelf'
  /** The target names the proposing agent (its name, or self/own/myself). */
  | 'targetNamesSelf'
  /** The target, command or an argument path names another agent's workspace. */
  | 'namesOtherAgent'
  /** `context.crisis === true`. */
  | 'crisisMode';

/** One condition of a signal rule. */
export type SignalClause =
  | { readonly field: readonly SignalField[]; readonly matches: RegExp }
  | { readonly flag: SignalFlag; readonly is: boolean }
  | { readonly actionIn: ReadonlySet<string> }
  | { readonly fired: string };

/**
 * A behavioural, context or crisis rule. It fires when every clause of at
 * least one alternative holds (`when` is an OR of ANDs). A `fired` clause
 * names a rule earlier in the table.
 */
export interface SignalRule extends Rule {
  readonly kind: 'behaviour' | 'context' | 'crisis';
  readonly when: readonly (readonly SignalClause[])[];
}

const CREDENTIAL_TERMS =
  /\b(?:credentials?|creds?|passwords?|passwd|passphrases?|passcodes?|secrets?|tokens?|api ?keys?|private ?keys?|privkey|access ?keys?|secret ?keys?|ssh ?keys?|signing ?keys?|key ?pairs?|otp|totp|mfa|2fa|seed ?phrases?|mnemonics?|jwt|bearer|vault|keychain|keystore|kms|pem|netrc|htpasswd|cookies?|session ?ids?|auth ?headers?)\b/;
/** Argument names that hold secrets; a bare "tokens" counter (max_tokens) is not one. */
const CREDENTIAL_KEYS =
  /\b(?:credentials?|creds|passwords?|passwd|passphrases?|secrets?|api ?keys?|private ?keys?|access ?keys?|secret ?keys?|ssh ?keys?|seed ?phrases?|mnemonics?|cookies?|authorization)\b|(?<!\b(?:max|min|num|n|total|count|limit|input|output|prompt|completion) )\btokens?(?= \||$)/;
/** Argument values (normal form: `api_key`, `api-key` and `API key` alike) that ask for or carry secrets. */
const CREDENTIAL_PHRASES =
  /(?<![a-z0-9])(?:passwords?|passwd|passphrases?|credentials?|api[^a-z0-9]?keys?|private[^a-z0-9]?keys?|secret[^a-z0-9]?keys?|access[^a-z0-9]?keys?|ssh[^a-z0-9]?keys?|(?:access|auth|refresh|bearer|session|api|oauth|id)[^a-z0-9]?tokens?|client[^a-z0-9]?secrets?|seed[^a-z0-9]?phrases?|recovery[^a-z0-9]?phrases?|one[^a-z0-9]?time[^a-z0-9]?(?:password|code)s?|(?:otp|2fa|mfa|verification)[^a-z0-9]?codes?)(?![a-z0-9])/;
/** The shapes of well-known secrets (cloud keys, VCS tokens, private keys, JWTs, bearer headers). */
const SECRET_SHAPES =
  /\bakia[0-9a-z]{16}\b|\bgh[pousr]_[0-9a-z]{30,}|\bgithub_pat_[0-9a-z_]{20,}|\bxox[abprs]-[0-9a-z-]{10,}|\bsk-(?:live-|proj-)?[0-9a-z_-]{20,}|\bsk_live_[0-9a-z]{16,}|-----begin [a-z ]*private key-----|\beyj[0-9a-z_-]{8,}\.eyj[0-9a-z_-]{8,}\.|\bglpat-[0-9a-z_-]{16,}|\bnpm_[0-9a-z]{30,}|\bya29\.[0-9a-z_-]{20,}|\baiza[0-9a-z_-]{30,}|\bbearer [0-9a-z._~+/-]{16,}/;

const PEOPLE_VERBS =
  /\b(?:send|sends|email|emails|mail|mails|message|messages|msg|sms|mms|text|texts|dm|dms|chat|post|posts|publish|publishes|tweet|reply|replies|respond|forward|notify|notifies|notification|notifications|call|calls|invite|invites|share|shares|broadcast|announce|comment|comments|contact|page|ping|mention|assign|suspend|ban|kick|fire|terminate|evict|demote|discipline|hire|reject|approve|deny|dismiss|unfriend)\b/;

const WRITE_VERBS =
  /\b(?:set|sets|update|updates|upsert|write|writes|modify|modifies|edit|edits|change|changes|patch|put|delete|remove|disable|disables|enable|enables|override|overwrite|reset|replace|append|add|create|grant|grants|revoke|raise|lower|increase|decrease|bump|extend|configure|reconfigure|install|uninstall|toggle|unlock|elevate|escalate|approve|whitelist|allowlist)\b/;
const CONFIG_TERMS =
  /\b(?:config|configs|configuration|configurations|settings?|preferences?|prefs|prompts?|instructions?|memory|memories|profile|persona|rules?|tools?|capabilities|model|parameters?|env|environment)\b/;
/** Whatever decides what an agent may do: changing it is changing its own authority. */
const GOVERNANCE_TERMS =
  /\b(?:polic(?:y|ies)|permissions?|perms|grants?|allowlists?|whitelists?|blocklists?|denylists?|blacklists?|guardrails?|safeguards?|approvals?|approvers?|thresholds?|firewall|gates?|roles?|privileges?|sudoers|acls?|rbac|iam|rate ?limits?|quotas?|budgets?|spending limits?|kill ?switch|audit ?logs?|ledger)\b/;

const MONEY_MOVING_VERBS = /\b(?:send|sends|create|submit|post|put|patch|issue|approve|initiate|make|schedule|transfer|move|pay|settle|refund|charge|withdraw|deposit|wire)\b/;
const PRODUCTION_ENVIRONMENT = /^(?:prod|production|prd|live)$/;
const PRODUCTION_WORDS = /\b(?:prod|production|prd)\b/;
const FINANCIAL_TERMS =
  /\b(?:pay|pays|paid|payment|payments|payee|payer|payout|payouts|payroll|refund|refunds|charge|charges|chargeback|invoice|invoices|billing|purchase|purchases|buy|buys|checkout|withdraw|withdrawal|withdrawals|deposit|deposits|disburse|disbursement|remit|remittance|wire|wires|ach|sepa|swift|iban|bic|stripe|paypal|venmo|zelle|crypto|bitcoin|btc|ethereum|wallet|wallets|money|funds?|amount\w*|currency|bank|banking|loan|loans|trade|trades|trading|brokerage)\b|\b(?:money|funds?|wire|bank|payment|crypto|balance) transfers?\b|\btransfers? (?:money|funds?|balance)\b/;

/**
 * Crisis support actions (DESIGN.md section 2.1): showing the 988 Suicide and
 * Crisis Lifeline or the Crisis Text Line, mentioning emergency services,
 * asking "are you safe?". Action types in word form: `crisis.show_988_lifeline`
 * and `Crisis-Show 988 Lifeline` are the same action.
 */
export const CRISIS_SUPPORT_ACTIONS: ReadonlySet<string> = new Set([
  'crisis show 988 lifeline',
  'crisis show lifeline',
  'crisis show crisis text line',
  'crisis show hotline',
  'crisis show resources',
  'crisis mention emergency services',
  'crisis ask are you safe',
  'crisis ask safety',
  'crisis safety check',
]);

/**
 * Crisis decision actions: contacting emergency services, sharing location or
 * personal data, notifying contacts, ending the conversation. These names
 * always need a human; in crisis mode so does any action whose type reads as
 * one of them (DECISION_WORDS), and an action aimed at emergency services
 * needs one in any mode.
 */
export const CRISIS_DECISION_ACTIONS: ReadonlySet<string> = new Set([
  'crisis contact emergency services',
  'crisis call emergency services',
  'crisis share location',
  'crisis share personal data',
  'crisis notify contacts',
  'crisis notify emergency contact',
  'crisis end conversation',
]);
const DECISION_WORDS =
  /\b(?:contact|call|dial|alert|dispatch|notify|page|text|sms|message|email)\w*\s(?:\w+\s)?(?:emergency|911|999|112|police|ambulance|paramedics?|contacts?|family|guardian|next of kin)\b|\b(?:emergency|911|999|112)\s(?:call|contact|dispatch)\b|\bshare\w*\s(?:\w+\s)?(?:location|gps|address|personal|pii|medical|identity|contact details)\b|\b(?:location|gps|address|personal data|pii|medical records?)\s(?:share|send|disclose|export)\w*\b|\b(?:end|close|terminate)\w*\s(?:\w+\s)?(?:conversation|chat|session)\b|\b(?:conversation|chat|session)\s(?:end|close|terminate)\w*\b|\bcontacts?\s(?:notify|alert|message)\w*\b/;
const EMERGENCY_RECIPIENT = /^(?:tel:)?\+?(?:911|999|112|000|988|110|119)$|\b(?:emergency services?|emergency contacts?|police|ambulance|paramedics?|fire department|psap)\b/;
const EMERGENCY_TARGET = /\b(?:emergency services?|police|ambulance|paramedics?|fire department|psap)\b/;

/**
 * Behavioural, context and crisis rules, in the order they are evaluated and
 * reported. Tiers and weights as for pattern rules.
 */
export const SIGNAL_RULES: readonly SignalRule[] = [
  {
    id: 'behaviour.credentials', kind: 'behaviour', tier: 3, weight: 3,
    summary: 'asks for, reads or carries credentials or tokens (in the tool, action, target, scope or arguments; never the query)',
    when: [
      [{ field: ['tool', 'action', 'target', 'scope'], matches: CREDENTIAL_TERMS }],
      [{ field: ['argKeys'], matches: CREDENTIAL_KEYS }],
      [{ field: ['argValues'], matches: CREDENTIAL_PHRASES }],
      [{ field: ['argValues'], matches: SECRET_SHAPES }],
    ],
  },
  {
    id: 'behaviour.credential_distribution', kind: 'behaviour', tier: 3, weight: 1.5,
    summary: 'credentials going to someone other than the agent or its user',
    when: [[{ fired: 'behaviour.credentials' }, { flag: 'recipientIsSelf', is: false }]],
  },
  {
    id: 'behaviour.own_configuration', kind: 'behaviour', tier: 3, weight: 3,
    summary: 'changes its own configuration, prompt or memory, or any policy, permission, grant or limit',
    when: [
      [{ field: ['action', 'tool'], matches: WRITE_VERBS }, { field: ['action', 'target'], matches: CONFIG_TERMS }, { flag: 'targetNamesSelf', is: true }],
      [{ field: ['action', 'tool'], matches: WRITE_VERBS }, { field: ['action', 'target'], matches: GOVERNANCE_TERMS }],
    ],
  },
  {
    id: 'behaviour.other_agent_workspace', kind: 'behaviour', tier: 3, weight: 2.5,
    summary: "touches another agent's workspace (agent:<name>, workspace://<name>, workspaces/<name>/, agents/<name>/)",
    when: [[{ flag: 'namesOtherAgent', is: true }]],
  },
  {
    id: 'behaviour.acts_on_others', kind: 'behaviour', tier: 2, weight: 1.5,
    summary: 'messages, emails, calls or acts on people other than the agent and its user',
    when: [[{ field: ['action', 'tool'], matches: PEOPLE_VERBS }, { flag: 'recipientIsSelf', is: false }]],
  },
  {
    id: 'context.production', kind: 'context', tier: 1, weight: 1,
    summary: 'production environment (context.environment, or prod/production in the target or scope)',
    when: [[{ field: ['environment'], matches: PRODUCTION_ENVIRONMENT }], [{ field: ['target', 'scope'], matches: PRODUCTION_WORDS }]],
  },
  {
    id: 'context.financial', kind: 'context', tier: 2, weight: 2,
    summary: 'financial operation (payments, transfers, refunds, invoices; amount or currency arguments)',
    when: [
      [{ field: ['tool', 'action', 'scope', 'argKeys'], matches: FINANCIAL_TERMS }],
      // A target alone (a repository named payments-service) is no payment; a target plus money-moving verb is.
      [{ field: ['target'], matches: FINANCIAL_TERMS }, { field: ['action', 'tool'], matches: MONEY_MOVING_VERBS }],
    ],
  },
  {
    id: 'context.crisis', kind: 'context', tier: 1, weight: 1,
    summary: 'the conversation is in crisis-support mode (context.crisis)',
    when: [[{ flag: 'crisisMode', is: true }]],
  },
  {
    id: 'crisis.decision', kind: 'crisis', tier: 3, weight: 3,
    summary: 'crisis decision: contacting emergency services, sharing location or personal data, notifying contacts, ending the conversation',
    when: [
      [{ actionIn: CRISIS_DECISION_ACTIONS }],
      [{ flag: 'crisisMode', is: true }, { field: ['action', 'tool'], matches: DECISION_WORDS }],
      [{ field: ['recipient'], matches: EMERGENCY_RECIPIENT }],
      [{ field: ['target'], matches: EMERGENCY_TARGET }],
    ],
  },
  {
    id: 'crisis.support', kind: 'crisis', tier: 0, weight: 0,
    summary: 'crisis support: showing the 988 Lifeline or the Crisis Text Line, mentioning emergency services, asking "are you safe?", to the user',
    when: [[{ actionIn: CRISIS_SUPPORT_ACTIONS }, { flag: 'recipientIsSelf', is: true }]],
  },
];

/** Rules that may fire beside `crisis.support` without taking away its "never gated" status. */
export const CRISIS_SUPPORT_COMPANIONS: ReadonlySet<string> = new Set(['crisis.support', 'context.crisis', 'context.production']);
