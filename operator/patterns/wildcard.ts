/**
 * The `wildcard` operator of EventBridge event patterns, as the Event Ruler README ("Wildcard matching") and the
 * EventBridge user guide describe it: `*` matches any run of characters (including none), the whole value must match,
 * consecutive `*` are not allowed, `\*` is a literal asterisk, `\\` a literal backslash, and a backslash before any
 * other character is not allowed.
 */

/** A compiled wildcard: a predicate over strings. */
export type WildcardMatcher = (value: string) => boolean;

function escapeRegExp(character: string): string {
  return character.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** Compiles a wildcard pattern, or returns a sentence saying why it is malformed. */
export function compileWildcard(pattern: string): WildcardMatcher | string {
  let source = '';
  let previousWasStar = false;
  for (let index = 0; index < pattern.length; index++) {
    const character = pattern[index] as string;
    if (character === '\\') {
      const next = pattern[index + 1];
      if (next !== '*' && next !== '\\') {
        return `wildcard "${pattern}" has a backslash at position ${index} that escapes neither "*" nor "\\"`;
      }
      source += escapeRegExp(next);
      index++;
      previousWasStar = false;
    } else if (character === '*') {
      if (previousWasStar) return `wildcard "${pattern}" has consecutive "*" at position ${index}, which is not allowed`;
      source += '[\\s\\S]*';
      previousWasStar = true;
    } else {
      source += escapeRegExp(character);
      previousWasStar = false;
    }
  }
  const expression = new RegExp(`^${source}$`, 'u');
  return (value: string): boolean => expression.test(value);
}
