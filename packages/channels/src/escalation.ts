import { canonicalJson } from '@agent-ledger/core';
import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import { DEFAULT_FAILOVER_ORDER } from './failover.js';
import type { AlertChannel, ChannelName, EscalationNotice } from './types.js';

/** Longest argument text an alert shows. */
const MAX_ARGS_TEXT = 1500;
/** Longest failure detail kept for the record (the `detail` of `notification.sent`). */
const MAX_DETAIL = 256;

/**
 * Who hears which escalation. `owners` maps an agent principal (or `*` for
 * any agent) to the channels of the people it acts for, in failover order;
 * `admins` lists the admins' channels in failover order. Both default to
 * the failover `order`.
 */
export interface EscalationRouting {
  readonly order?: readonly ChannelName[];
  readonly owners?: Readonly<Record<string, readonly ChannelName[]>>;
  readonly admins?: readonly ChannelName[];
}

/** One delivery of one escalation, or its failure: what `notification.sent` records. */
export interface AlertDelivery {
  /** The channel tried; `none` when no channel was configured for the level. */
  readonly channel: AlertChannel['name'] | 'none';
  readonly ok: boolean;
  /** `delivered`, or the failure's code and message. */
  readonly detail: string;
}

/** The text of an escalation notice: level, agent, reason, the operation when known, the hashes. */
export function describeEscalation(notice: EscalationNotice): string {
  const headline = {
    notify: 'Denied: an action you were asked about was not confirmed in time',
    admin: 'ESCALATION (admin): a high-risk action waited for a human and was denied',
    emergency: 'EMERGENCY: a critical action waited for a human and was denied',
  }[notice.level];
  const lines = [headline, `agent: ${notice.agentId}`, `reason: ${notice.reason}`];
  const op = notice.operation;
  if (op !== null) {
    let args = canonicalJson(op.args);
    if (args.length > MAX_ARGS_TEXT) args = `${args.slice(0, MAX_ARGS_TEXT)}… (${args.length} characters, cut; see the proposal)`;
    lines.push(`tool: ${op.tool}`, `action: ${op.actionType}`, `target: ${op.targetResource}`, `recipient: ${op.recipient}`, `scope: ${op.scope}`, `args: ${args}`);
  }
  lines.push(`escalated proposal: ${notice.proposal}`, `escalation: ${notice.escalation}`);
  return lines.join('\n');
}

function failureDetail(error: unknown): string {
  const code = error instanceof LedgerError ? error.code : ReasonCode.NO_CHANNEL;
  const message = error instanceof Error ? error.message : String(error);
  return `${code}: ${message}`.slice(0, MAX_DETAIL);
}

/**
 * Routes escalations to people (the product rule for timeouts: medium
 * notifies the user, high also reaches an admin, critical raises an
 * emergency):
 * - `notify`: the agent owner's channels (`owners`), one after another until one delivers;
 * - `admin`: the admins' channels (`admins`), the same way;
 * - `emergency`: every configured channel at once, then the webhook (the
 *   pager or SMS gateway of last resort) as well.
 * Every attempt is returned, delivered or failed, for the record; a level
 * with no configured channel is one failed delivery on `none`.
 */
export class EscalationRouter {
  readonly #byName: ReadonlyMap<ChannelName, AlertChannel>;
  readonly #routing: EscalationRouting;

  constructor(channels: readonly AlertChannel[], routing: EscalationRouting = {}) {
    const byName = new Map<ChannelName, AlertChannel>();
    for (const channel of channels) {
      if (byName.has(channel.name)) throw new LedgerError(ReasonCode.SCHEMA_INVALID, `two channels are named ${channel.name}`);
      byName.set(channel.name, channel);
    }
    this.#byName = byName;
    this.#routing = routing;
  }

  /** Delivers one notice by its level's rule; never throws, every failure is in the result. */
  async route(notice: EscalationNotice): Promise<AlertDelivery[]> {
    if (notice.level === 'emergency') return this.#everywhere(notice);
    const order = this.#routing.order ?? DEFAULT_FAILOVER_ORDER;
    const list = notice.level === 'notify'
      ? (this.#routing.owners?.[notice.agentId] ?? this.#routing.owners?.['*'] ?? order)
      : (this.#routing.admins ?? order);
    const deliveries: AlertDelivery[] = [];
    for (const name of list) {
      const channel = this.#byName.get(name);
      if (channel === undefined) continue;
      const delivery = await this.#send(channel, notice);
      deliveries.push(delivery);
      if (delivery.ok) break;
    }
    return deliveries.length > 0 ? deliveries : [this.#nobody(notice)];
  }

  async #everywhere(notice: EscalationNotice): Promise<AlertDelivery[]> {
    const all = [...this.#byName.values()];
    const first = all.filter((c) => c.name !== 'webhook');
    const deliveries = await Promise.all(first.map((channel) => this.#send(channel, notice)));
    const webhook = this.#byName.get('webhook');
    if (webhook !== undefined) deliveries.push(await this.#send(webhook, notice));
    return deliveries.length > 0 ? deliveries : [this.#nobody(notice)];
  }

  async #send(channel: AlertChannel, notice: EscalationNotice): Promise<AlertDelivery> {
    try {
      await channel.alert(notice);
      return { channel: channel.name, ok: true, detail: 'delivered' };
    } catch (error) {
      return { channel: channel.name, ok: false, detail: failureDetail(error) };
    }
  }

  #nobody(notice: EscalationNotice): AlertDelivery {
    return { channel: 'none', ok: false, detail: `${ReasonCode.NO_CHANNEL}: no channel configured for ${notice.level} escalations` };
  }
}
