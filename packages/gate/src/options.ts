import type { Channel } from './types.js';
import type { RulesVersion } from './rules-version.js';

/**
 * Risk threshold per channel (DESIGN.md section 2.1): a proposal whose risk is
 * at or above its channel's threshold needs a human. Channels where an
 * approver is less likely to be at hand get a lower threshold.
 */
export const DEFAULT_CHANNEL_THRESHOLDS: Readonly<Record<Channel, number>> = Object.freeze({
  telegram: 2.0,
  discord: 2.5,
  cli: 3.0,
  api: 1.5,
  web: 2.0,
});

/** Hosts a `curl`/`wget` may reach without the unknown-host rule firing, by default. */
export const DEFAULT_KNOWN_HOSTS: readonly string[] = Object.freeze(['localhost', '127.0.0.1', '::1']);

/**
 * Tier a scenario grant covers when it names none. A ledger grant always
 * names its tier (`grant.proposed.tier`); tier 4 is never authorised by a
 * grant, so 3 means "any tier a grant can cover".
 */
export const DEFAULT_GRANT_TIER = 3;

/** Settings of the gate. Every member is optional; defaults are the exported constants. */
export interface GateOptions {
  /** Per-channel thresholds; channels not named keep their default. */
  readonly channelThresholds?: Readonly<Partial<Record<Channel, number>>>;
  /** Hosts (and their subdomains) `curl`/`wget` may reach without raising the tier. */
  readonly knownHosts?: readonly string[];
  /** The rules version to decide with (rules-version.ts); default {@link LATEST_RULES_VERSION}. */
  readonly rulesVersion?: RulesVersion;
}

/** Resolved settings, held by the gate state. */
export interface GateConfig {
  readonly thresholds: Readonly<Record<Channel, number>>;
  /** Lowest threshold of all channels: used for a channel the gate does not know (fail closed). */
  readonly strictestThreshold: number;
  readonly knownHosts: ReadonlySet<string>;
  /** The `threshold.<channel>:<value>` reason of each channel, built once. */
  readonly thresholdReasons: Readonly<Record<Channel, string>>;
}

/** Resolves options against the defaults; thresholds must be finite and non-negative. */
export function resolveConfig(options: GateOptions = {}): GateConfig {
  const thresholds = { ...DEFAULT_CHANNEL_THRESHOLDS };
  for (const channel of Object.keys(thresholds) as Channel[]) {
    const value = options.channelThresholds?.[channel];
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
      throw new RangeError(`channel threshold for ${channel} must be a finite number >= 0`);
    }
    thresholds[channel] = value;
  }
  const hosts = new Set<string>();
  for (const host of options.knownHosts ?? DEFAULT_KNOWN_HOSTS) hosts.add(host.toLowerCase());
  return Object.freeze({
    thresholds: Object.freeze(thresholds),
    strictestThreshold: Math.min(...Object.values(thresholds)),
    knownHosts: hosts,
    thresholdReasons: Object.freeze(Object.fromEntries(Object.entries(thresholds).map(([channel, value]) => [channel, `threshold.${channel}:${String(value)}`])) as Record<Channel, string>),
  });
}

/** The defaults, resolved once. */
export const DEFAULT_CONFIG: GateConfig = resolveConfig();
