/** Longest piece of untrusted text copied into a reason or a refusal. */
const MAX_RECORDED = 160;

/** Untrusted text made safe to record: one line, no controls, no lone surrogates, bounded. */
export function recordable(value: unknown): string {
  if (typeof value !== 'string') return '';
  if (value.length <= MAX_RECORDED && isPrintableAscii(value)) return value;
  let text = value.length > MAX_RECORDED ? value.slice(0, MAX_RECORDED) : value;
  text = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ');
  // A lone surrogate cannot be canonicalised (RFC 8785); replace it.
  return text.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
}

function isPrintableAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

