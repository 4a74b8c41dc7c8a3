import { z } from 'zod';

/** An allowed Host entry in the installation config (`api.hosts`): `name`, `name:port`, `[v6]` or `[v6]:port`. */
export const AllowedHostSchema = z.string().regex(/^(\[[0-9A-Fa-f:.]{2,45}\]|[A-Za-z0-9.-]{1,253})(?::\d{1,5})?$/, 'expected host or host:port');

/** Loopback names every API answers to on its own port. */
const LOOPBACK = ['localhost', '127.0.0.1', '[::1]'];

/**
 * Which `Host` headers the API answers (untrusted header). A page on another
 * site that makes an operator's browser resolve its own name to 127.0.0.1
 * (DNS rebinding) still sends its own name as Host, and is refused. Allowed:
 * the loopback names with the port the request arrived on, and every
 * configured entry: `name` (any port) or `name:port`. Names compare without
 * case.
 */
export class HostAllowList {
  readonly #anyPort = new Set<string>();
  readonly #exact = new Set<string>();

  constructor(entries: readonly string[]) {
    for (const raw of entries) {
      const entry = raw.trim().toLowerCase();
      if (entry === '') continue;
      const split = splitHost(entry);
      if (split === undefined) throw new Error(`allowed host ${JSON.stringify(raw)} is not host or host:port`);
      if (split.port === undefined) this.#anyPort.add(split.name);
      else this.#exact.add(`${split.name}:${split.port}`);
    }
  }

  /** True when `host` (the Host header) may be served on local port `port`. */
  allows(host: string, port: number | undefined): boolean {
    const split = splitHost(host.trim().toLowerCase());
    if (split === undefined) return false;
    if (this.#anyPort.has(split.name)) return true;
    const effective = split.port ?? '80';
    if (this.#exact.has(`${split.name}:${effective}`)) return true;
    return port !== undefined && LOOPBACK.includes(split.name) && effective === String(port);
  }
}

/** `name[:port]` or `[v6][:port]`; undefined when it is neither. */
function splitHost(text: string): { name: string; port: string | undefined } | undefined {
  const m = /^(\[[0-9a-f:.]{2,45}\]|[a-z0-9.-]{1,253})(?::(\d{1,5}))?$/.exec(text);
  if (m === null || m[1] === undefined) return undefined;
  return { name: m[1], port: m[2] };
}
