import { R, type Findings } from './findings.js';
import { touchPath } from './path-rules.js';

/** Hosts of cloud instance metadata services: reading them yields the machine's credentials. */
const METADATA_HOSTS = new Set(['169.254.169.254', 'metadata.google.internal', 'metadata', 'fd00:ec2::254', '[fd00:ec2::254]', '100.100.100.200', '169.254.170.2', 'metadata.azure.com', '169.254.169.123']);

/** URLs in text; group 1 the scheme, group 2 the authority. */
export const URL_PATTERN = /\b([a-z][a-z0-9+.-]{1,15}):\/\/([^\s/?#'"\\<>]*)/gi;

/** The host of a URL's authority (no userinfo, port or brackets), lowercased. */
export function hostOf(authority: string): string {
  let host = authority.toLowerCase();
  const at = host.lastIndexOf('@');
  if (at !== -1) host = host.slice(at + 1);
  if (host.startsWith('[')) {
    const close = host.indexOf(']');
    return host.slice(1, close === -1 ? undefined : close);
  }
  const colon = host.indexOf(':');
  if (colon !== -1) host = host.slice(0, colon);
  return host.endsWith('.') ? host.slice(0, -1) : host;
}

/** Decimal, hex and octal spellings of 169.254.169.254 (2852039166). */
function isMetadataNumber(host: string): boolean {
  return host === '2852039166' || host === '0xa9fea9fe' || host === '0251.0376.0251.0376' || host === '0xa9.0xfe.0xa9.0xfe';
}

/**
 * Rules on one URL the call reaches: a `file://` URL is a path read; cloud
 * metadata is credential access; anything else is network access.
 */
export function touchUrl(findings: Findings, url: string): void {
  URL_PATTERN.lastIndex = 0;
  const m = URL_PATTERN.exec(url);
  if (m === null) {
    const host = hostOf(url.split('/')[0] ?? '');
    if (METADATA_HOSTS.has(host) || isMetadataNumber(host)) findings.add(R.metadata);
    return;
  }
  const scheme = (m[1] ?? '').toLowerCase();
  if (scheme === 'file') {
    touchPath(findings, url.slice(url.indexOf('://') + 3) || '/', 'read');
    return;
  }
  const host = hostOf(m[2] ?? '');
  if (METADATA_HOSTS.has(host) || isMetadataNumber(host)) findings.add(R.metadata);
  findings.add(R.fetch);
}

/** Every URL in a text. */
export function urlsIn(text: string): string[] {
  const urls: string[] = [];
  if (text.indexOf('://') === -1) return urls;
  URL_PATTERN.lastIndex = 0;
  for (let m = URL_PATTERN.exec(text); m !== null; m = URL_PATTERN.exec(text)) {
    let end = m.index + m[0].length;
    while (end < text.length && !/[\s'"<>`]/.test(text[end] as string)) end += 1;
    urls.push(text.slice(m.index, end));
  }
  return urls;
}
