/**
 * `text` cut to at most `max` UTF-16 code units without splitting a surrogate
 * pair (a lone surrogate could not be canonicalised or signed), with `...`
 * appended when anything was cut.
 */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = Math.max(0, max - 3);
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}...`;
}
