// What a user-given name may hold, and the form names are compared in where they must be unique. Shared by the
// API's schemas, the services, the backup checks and the migration that cleaned names stored before these rules.
import { cleanText, FORBIDDEN, LONE_SURROGATE } from '../drivers/index.js';

/**
 * The same rule as a JSON Schema pattern, for the OpenAPI document (a client checks a name with the document alone).
 * A lone surrogate is the one thing it cannot say; the daemon refuses that too.
 */
export const NAME_PATTERN = '^[^\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069]*$';
/** Default-ignorable code points (zero-width space and joiners, soft hyphen, variation selectors, bidi marks, ...). */
const INVISIBLE = /\p{Default_Ignorable_Code_Point}/gu;

/** What an azcd username may be: the users' rule, and the check of every setting that names a user. */
export const USERNAME_RE = /^[A-Za-z0-9._-]{3,64}$/;
export const USERNAME_RULE = 'must be 3 to 64 characters of A-Z a-z 0-9 . _ -';

/** Why `text` cannot be a username, with what was given; undefined when it can. */
export function usernameProblem(text: string): string | undefined {
  return USERNAME_RE.test(text) ? undefined : `${USERNAME_RULE}, got ${JSON.stringify(text).slice(0, 80)}`;
}

/** Why `text` cannot be a name, in words; undefined when it can. */
export function nameProblem(text: string): string | undefined {
  if (new RegExp(LONE_SURROGATE.source).test(text)) return 'must be valid Unicode text (it holds a lone surrogate)';
  const bad = FORBIDDEN.exec(text);
  if (!bad) return undefined;
  const code = `U+${bad[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
  const kind = /[\u202a-\u202e\u2066-\u2069]/.test(bad[0])
    ? 'a bidirectional override or isolate'
    : 'a control character or line break';
  return `must not hold ${kind} (${code} at position ${bad.index})`;
}

/**
 * The form two names are compared in where names must be unique (scenes): compatibility-normalised (NFKC:
 * fullwidth "Ｄｉｎｎｅｒ" is "Dinner"), without default-ignorable code points (a zero-width space inside changes
 * nothing one sees), case-folded, and with runs of white space as one space, trimmed. Names equal in this form
 * look the same to a person, so they count as the same name.
 */
export function nameKey(text: string): string {
  const visible = text.normalize('NFKC').replace(INVISIBLE, '');
  // toUpperCase then toLowerCase folds what lower-casing alone leaves apart (ß and SS, final and medial sigma).
  return visible.toUpperCase().toLowerCase().normalize('NFKC').replace(/\s+/gu, ' ').trim();
}

/**
 * A stored name made to pass nameProblem (names kept from before these rules): forbidden characters become a
 * space (a line break was a separator) or go (bidi controls), a lone surrogate becomes U+FFFD, and a name left empty
 * becomes `fallback`.
 */
export function cleanName(text: string, fallback: string): string {
  if (nameProblem(text) === undefined) return text;
  const cleaned = cleanText(text);
  return cleaned === '' ? fallback : cleaned;
}
