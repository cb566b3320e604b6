/**
 * Well-formed Unicode for text that becomes a DynamoDB key (event ids, subscriber names). DynamoDB stores strings as
 * UTF-8, which cannot encode an unpaired UTF-16 surrogate: two ids that differ only in one (`<uuid>\ud800` and
 * `<uuid>\udfff`, as `.slice()` leaves when it cuts an emoji in half) may be stored as one key, and the second event is
 * then taken for the first. Such text is refused wherever it enters. Pure: no dependencies.
 */

/** A UTF-16 code unit with no partner (`u` mode matches only surrogates that are not half of a pair). */
const LONE_SURROGATE = /\p{Surrogate}/u;

/**
 * Why `text` is not well-formed Unicode (`an unpaired UTF-16 surrogate (U+D800 at index 36)`), or undefined when it is.
 */
export function unpairedSurrogate(text: string): string | undefined {
  const match = LONE_SURROGATE.exec(text);
  if (match === null) return undefined;
  const codeUnit = match[0].charCodeAt(0).toString(16).toUpperCase();
  return `an unpaired UTF-16 surrogate (U+${codeUnit} at index ${match.index})`;
}
