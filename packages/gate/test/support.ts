// Shared builders for the gate's tests: proposals, commands, authority
// statements (unsigned: the gate folds statements whose signatures were
// checked upstream) and the obfuscations that must not lower a tier.
import { createHash } from 'node:crypto';
import { createStatement, statementHash, type BodyOf, type StatementType } from '@agent-ledger/core';
import type { AuthorityEvent, Channel, DecideCommand, Proposal } from '../src/index.js';

/** 2026-11-22T10:00:00.000Z: the instant every test decides at unless it says otherwise. */
export const NOW = Date.parse('2026-11-22T10:00:00.000Z');
export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;

/** A routine, safe proposal: `ls -la /srv/app` on the build host. */
export function proposal(overrides: Partial<Proposal> = {}): Proposal {
  return {
    agentId: 'agent:build-bot',
    tool: 'shell',
    actionType: 'shell.exec',
    targetResource: 'host/build-01',
    recipient: 'none',
    scope: 'workspace',
    args: { command: 'ls -la /srv/app' },
    query: 'check the build output',
    labels: [],
    ...overrides,
  };
}

/** A shell proposal running `commandText`. */
export function shell(commandText: string, overrides: Partial<Proposal> = {}): Proposal {
  return proposal({ args: { command: commandText }, ...overrides });
}

/** The payment of the authorization packet: billing-bot pays Acme's November invoice. */
export function payment(overrides: Partial<Proposal> = {}): Proposal {
  return proposal({
    agentId: 'agent:billing-bot',
    tool: 'payments',
    actionType: 'payment.send',
    targetResource: 'payments/vendors/acme',
    recipient: 'acme-corp',
    scope: 'invoice:2026-11',
    args: { amountUsd: 1200, invoice: 'INV-2026-11-042' },
    query: 'pay the November invoice from Acme',
    ...overrides,
  });
}

/** A decide command at {@link NOW} on the API channel, staging, not in crisis. */
export function command(p: Proposal, overrides: { now?: number; channel?: Channel; context?: DecideCommand['context'] } = {}): DecideCommand {
  return { now: overrides.now ?? NOW, channel: overrides.channel ?? 'api', context: overrides.context ?? { environment: 'staging', crisis: false }, proposal: p };
}

/** The operation fields of a proposal, for grants. */
export function operationOf(p: Proposal): { agentId: string; actionType: string; targetResource: string; recipient: string; scope: string } {
  return { agentId: p.agentId, actionType: p.actionType, targetResource: p.targetResource, recipient: p.recipient, scope: p.scope };
}

/** A principal with a (fake but well-formed) key id. */
export interface Author {
  readonly principal: string;
  readonly keyId: string;
}

export function author(principal: string, keyLabel = principal): Author {
  return { principal, keyId: createHash('sha256').update(keyLabel).digest('hex') };
}

/** Builds authority-stream events in order, with their indexes and statement hashes. */
export class AuthorityLog {
  readonly events: AuthorityEvent[] = [];
  #at = Date.parse('2026-11-20T00:00:00.000Z');

  /** Appends a statement and returns its event. */
  say<T extends StatementType>(type: T, body: BodyOf<T>, by: Author): AuthorityEvent {
    this.#at += 1000;
    const statement = createStatement(type, body, by, new Date(this.#at));
    const event: AuthorityEvent = { statement, index: this.events.length, statementHash: statementHash(statement), sequencedAt: this.#at };
    this.events.push(event);
    return event;
  }

  /** Genesis naming `keys` with their roles. */
  genesis(keys: readonly { who: Author; roles: BodyOf<'genesis'>['keys'][number]['roles'] }[]): AuthorityEvent {
    const root = author('root:one');
    return this.say(
      'genesis',
      {
        origin: 'ledger.example/test',
        eventPartitions: 2,
        freshnessMs: 60_000,
        rootKeys: [root.keyId],
        rootThreshold: 1,
        keys: keys.map(({ who, roles }) => ({ keyId: who.keyId, principal: who.principal, roles: [...roles] })),
      },
      root,
    );
  }

  /** A grant proposal for the operation of `p`, valid [from, until). */
  propose(
    by: Author,
    grantId: string,
    p: Proposal,
    options: { from?: number; until?: number; effect?: 'allow' | 'block'; tier?: number } = {},
  ): AuthorityEvent {
    return this.say(
      'grant.proposed',
      {
        grantId,
        ...operationOf(p),
        notBefore: new Date(options.from ?? NOW - DAY).toISOString(),
        expiresAt: new Date(options.until ?? NOW + DAY).toISOString(),
        effect: options.effect ?? 'allow',
        tier: options.tier ?? 3,
        parentGrantId: null,
      },
      by,
    );
  }

  cosign(by: Author, grantId: string, proposal: AuthorityEvent): AuthorityEvent {
    return this.say('grant.cosigned', { grantId, grant: proposal.statementHash }, by);
  }
}

// Obfuscations a tier must survive. Each maps a command to one that the
// normaliser reads back as the same command.

/** ANSI colour codes between every character. */
export function ansi(text: string): string {
  return `\u001b[1;31m${[...text].join('\u001b[0m')}\u001b]0;title\u0007`;
}
/** NUL between every character. */
export function nul(text: string): string {
  return [...text].join('\u0000');
}
/** Zero-width spaces and soft hyphens between characters. */
export function zeroWidth(text: string): string {
  return [...text].map((c, i) => (i % 2 === 0 ? `${c}\u200b` : `${c}\u00ad`)).join('');
}
/** Full-width forms (U+FF01..U+FF5E) and the ideographic space. */
export function fullWidth(text: string): string {
  return [...text].map((c) => {
    const code = c.charCodeAt(0);
    if (code === 0x20) return '\u3000';
    return code >= 0x21 && code <= 0x7e ? String.fromCharCode(code + 0xfee0) : c;
  }).join('');
}
/** Alternating case. */
export function mixedCase(text: string): string {
  return [...text].map((c, i) => (i % 2 === 0 ? c.toUpperCase() : c.toLowerCase())).join('');
}
/** Runs of whitespace, tabs and newlines instead of single spaces. */
export function spaced(text: string): string {
  return text.replaceAll(' ', ' \t  ');
}

/** Every obfuscation, in an order that composes (character-level ones last). */
export const OBFUSCATIONS: readonly (readonly [string, (text: string) => string])[] = [
  ['mixed case', mixedCase],
  ['whitespace runs', spaced],
  ['full-width', fullWidth],
  ['ANSI escapes', ansi],
  ['NUL bytes', nul],
  ['zero-width characters', zeroWidth],
];
