/**
 * Text from data (event ids and types, reasons, message attributes, bodies) on its way to the operator's terminal.
 * Printed raw, a newline in an event's type ends a table row and starts a forged one, an escape sequence moves the
 * cursor, erases or recolours what is shown, and a bidi control (U+202E) reverses what follows: the operator would
 * confirm a plan (`--yes`) that is not the one shown. Pure: no dependencies.
 */

/**
 * What a terminal does not show as text: C0 controls, DEL and C1 controls (`\p{Cc}`), format characters (`\p{Cf}`:
 * bidi controls such as U+202E, zero-width characters, U+FEFF, tag characters), line and paragraph separators, and
 * unpaired surrogates.
 */
const NOT_PLAIN_TEXT = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu;

/** The same, except the line feed: what may not be in a whole output, whose line breaks are the command's layout. */
const NOT_PLAIN_TEXT_BUT_LINE_FEED = /(?!\n)[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu;

/** `\n`, `\r` and `\t` as JSON writes them, anything else as JSON's `\uXXXX` (each UTF-16 code unit). */
function escaped(character: string): string {
  if (character === '\n') return '\\n';
  if (character === '\r') return '\\r';
  if (character === '\t') return '\\t';
  return [...Array(character.length).keys()].map((index) => `\\u${character.charCodeAt(index).toString(16).padStart(4, '0')}`).join('');
}

/**
 * One value from data as terminal text on one line: every character a terminal does not show as text is written as
 * its JSON escape (`\n`, `\u001b`, `\u202e`), and a backslash as `\\`, so what is shown is unambiguous and says what
 * was there. Use it wherever a value from data is put into text output (a table cell, a field, a message).
 */
export function terminalText(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(NOT_PLAIN_TEXT, escaped);
}

/**
 * A whole output as it is written to the terminal (what `main` does to everything a command writes, text and JSON): a
 * guard behind {@link terminalText}, which keeps the output's line feeds (the command's layout, and the values in it
 * were escaped with {@link terminalText}) and a carriage return that begins the output (a progress line redrawn in
 * place), and escapes every other character a terminal does not show as text. The escapes are JSON's, so JSON output
 * stays the same JSON: `JSON.stringify` escapes C0 controls but leaves DEL, C1 controls and bidi and other format
 * characters raw, which this turns into `\u007f`, `\u0085`, `\u202e`, the same strings to a JSON parser.
 */
export function terminalOutput(text: string): string {
  const redraw = text.startsWith('\r') ? '\r' : '';
  return redraw + text.slice(redraw.length).replace(NOT_PLAIN_TEXT_BUT_LINE_FEED, escaped);
}
