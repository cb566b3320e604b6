/**
 * Redaction of payload values in error messages. A schema library's message may echo the value it refused (`1999.5`,
 * `'EUR '`), and `JSON.parse` quotes the start of the text it could not read: by default such messages reach the logs
 * and the dead-letter attributes only with their values replaced. A consumer created with `logPayloadValues: true`
 * keeps them as they are (for debugging).
 */

/** The longest redacted message, in characters; longer ones are cut and end with `…`. */
export const MAX_REDACTED_MESSAGE_CHARACTERS = 300;

// a double-quoted string followed by `:` is a JSON key, matched (so the scan moves past it) and kept
const QUOTED = /"(?:[^"\\]|\\.)*"(\s*:)?|'(?:[^'\\]|\\.)*'|`[^`]*`/g;
const NUMBER = /(?<![\w.#-])-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?![\w.])/g;

/**
 * `text` with every quoted value replaced by an empty quote of the same kind holding `…` (a JSON key, a quoted string
 * followed by `:`, is kept), every number by `#`, and cut to {@link MAX_REDACTED_MESSAGE_CHARACTERS}. The words around
 * them (what was expected, which field) stay.
 */
export function redactValues(text: string): string {
  const redacted = text
    .replace(QUOTED, (quoted: string, key: string | undefined) => (key !== undefined ? quoted : `${quoted[0]}…${quoted[0]}`))
    .replace(NUMBER, '#');
  return redacted.length <= MAX_REDACTED_MESSAGE_CHARACTERS ? redacted : `${redacted.slice(0, MAX_REDACTED_MESSAGE_CHARACTERS - 1)}…`;
}
