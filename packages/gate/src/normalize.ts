/**
 * Text normalisation before any rule runs, so that obfuscation cannot lower a
 * tier: what a terminal would not show, and what only looks different, is
 * taken away before matching. Every function here is total (never throws)
 * and allocation-free on plain printable ASCII that needs no change.
 */

/**
 * ANSI / ECMA-48 escape sequences: CSI (`ESC [ ... final`, and the 8-bit
 * CSI 0x9B), OSC (`ESC ] ... BEL|ST`), DCS/SOS/PM/APC strings, nF escapes
 * (`ESC ( B`) and two-character Fe escapes.
 */
const ANSI_ESCAPES =
  /\u001b\[[0-?]*[ -/]*[@-~]|\u009b[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|\u001b[PX^_][^\u001b]*(?:\u001b\\)?|\u001b[ -/]+[0-~]|\u001b[@-Z\\-_]/g;
/** NUL and format characters (zero-width, bidi overrides, soft hyphen): removed first, so they cannot split an escape sequence. */
const NUL_AND_FORMAT = /\u0000|\p{Cf}/gu;
/** C0/C1 controls other than whitespace: removed after the escape sequences they start. */
const CONTROLS = /[\u0001-\u0008\u000e-\u001f\u007f-\u009f]/g;
/** Combining marks left after NFKC (marks with no precomposed form, e.g. r + U+0332). */
const STRAY_MARKS = /\p{M}/gu;
const WHITESPACE_RUN = /\s+/g;
const NOT_WORD = /[^a-z0-9]+/g;
const SHELL_QUOTING = /['"\\]|\$\{?ifs\b/;

/**
 * What the ASCII fast path must do to `text`: 0 nothing (already normal),
 * 1 fold case only, 2 fold case and spaces, -1 leave the fast path (a
 * character outside printable ASCII). One pass, no allocation.
 */
function asciiWork(text: string): number {
  let work = 0;
  let previous = 32;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 32 || c > 126) return -1;
    if (c === 32 && previous === 32) work = 2;
    else if (c >= 65 && c <= 90 && work === 0) work = 1;
    previous = c;
  }
  return previous === 32 && text.length > 0 ? 2 : work;
}

/** Lowercase, single spaces, no leading or trailing space: the ASCII fast path. */
function foldAscii(text: string): string {
  return text.toLowerCase().replace(WHITESPACE_RUN, ' ').trim();
}

/**
 * The normal form every rule matches against: ANSI escapes, NUL and other
 * invisible characters removed, Unicode NFKC (full-width and compatibility
 * forms become ASCII), case folded, whitespace runs collapsed to one space.
 */
export function normalizeText(text: string): string {
  const work = asciiWork(text);
  if (work === 0) return text;
  // Printable ASCII with single inner spaces and none at either end: lowercasing is all there is to do.
  if (work === 1) return text.toLowerCase();
  if (work === 2) return foldAscii(text);
  const visible = text.replace(NUL_AND_FORMAT, '').replace(ANSI_ESCAPES, '').replace(CONTROLS, '');
  const folded = visible.normalize('NFKC').toLowerCase().normalize('NFKC').replace(STRAY_MARKS, '');
  return folded.replace(WHITESPACE_RUN, ' ').trim();
}

/** Normal text reduced to lowercase ASCII words separated by single spaces (for term rules). */
export function wordForm(normal: string): string {
  return normal.replace(NOT_WORD, ' ').trim();
}

/**
 * Normal shell text with quoting removed (`r''m`, `"rm"`, `\rm`, `$'rm'`)
 * and `$IFS` read as the space it expands to: a second view of a command
 * that rules run on as well, so quoting cannot hide a pattern. Returns the
 * input itself when there is nothing to remove.
 */
export function dequoteShell(normal: string): string {
  if (!SHELL_QUOTING.test(normal)) return normal;
  return normal
    .replace(/\$\{?ifs\}?/g, ' ')
    .replace(/\$(?=['"])/g, '')
    .replace(/['"\\]/g, '')
    .replace(WHITESPACE_RUN, ' ')
    .trim();
}
