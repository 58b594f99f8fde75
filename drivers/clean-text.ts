// The characters no text shown to people may hold, and how text from outside is cleaned of them: shared by the
// daemon's names (daemon/names.ts) and the metadata a playback engine reads from its streams and files.

/**
 * Characters no name may hold: C0 and C1 controls (NUL, line breaks, escapes), the line and paragraph separators,
 * and the bidirectional embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069), which make a name show
 * other text than it holds ("evil\u202Etxt.exe") and reorder whatever is printed after it.
 */
export const FORBIDDEN = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;
/** A surrogate without its pair: no character at all, and stored as U+FFFD, so the name would change. */
export const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * `text` made to pass the rule: forbidden characters become a space (a line break was a separator) or go (bidi
 * controls), a lone surrogate becomes U+FFFD, runs of spaces left by that become one; '' when nothing is left.
 */
export function cleanText(text: string): string {
  if (!FORBIDDEN.test(text) && !new RegExp(LONE_SURROGATE.source).test(text)) return text;
  return text
    .replace(LONE_SURROGATE, '\ufffd')
    .replace(/[\u202a-\u202e\u2066-\u2069]/gu, '')
    .replace(new RegExp(FORBIDDEN.source, 'gu'), ' ')
    .replace(/ {2,}/g, ' ')
    .trim();
}
