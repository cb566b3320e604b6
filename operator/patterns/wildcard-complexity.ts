/**
 * How complex EventBridge finds a field's wildcard patterns, as Event Ruler measures it (MachineComplexityEvaluator,
 * aws/event-ruler README "Wildcard matching" / "limiting machine complexity"): the largest number of wildcard rule
 * prefixes that one input value can match at once, summed over the `wildcard` and `anything-but.wildcard` patterns of
 * the field. A prefix is a leading part of a pattern (`a*`, `a*b` of `a*bc`); the input `abb` matches four prefixes of
 * `a*bb*` (`a*`, `a*b`, `a*bb`, `a*bb*`), and no input matches more, so its complexity is 4. EventBridge refuses a rule whose complexity is
 * over its limit ("Rule is too complex"), which its documentation does not state: see {@link judgeWildcardComplexity}.
 *
 * Computed exactly, by running the patterns' prefix automata together over every distinct input (the subset
 * construction over the characters the patterns name plus one other character), up to a cap.
 */

/** One token of a wildcard pattern: a literal character, or `*`. */
type Token = { readonly star: true } | { readonly star: false; readonly char: string };

function tokens(pattern: string): Token[] {
  const result: Token[] = [];
  for (let index = 0; index < pattern.length; index++) {
    const character = pattern[index]!;
    if (character === '\\' && index + 1 < pattern.length) {
      result.push({ star: false, char: pattern[index + 1]! });
      index++;
    } else if (character === '*') result.push({ star: true });
    else result.push({ star: false, char: character });
  }
  return result;
}

/**
 * States of one pattern: `j` = the first `j` tokens read. A `*` token at `j` leads from `j` to `j + 1` without input,
 * and `j + 1` then reads any character; a literal at `j` leads from `j` to `j + 1` on that character.
 */
function closure(pattern: readonly Token[], states: Iterable<number>): Set<number> {
  const result = new Set<number>();
  const pending = [...states];
  while (pending.length > 0) {
    const state = pending.pop()!;
    if (result.has(state)) continue;
    result.add(state);
    if (state < pattern.length && pattern[state]!.star) pending.push(state + 1);
  }
  return result;
}

function step(pattern: readonly Token[], states: ReadonlySet<number>, character: string): Set<number> {
  const next: number[] = [];
  for (const state of states) {
    // after a star, any character keeps the star's prefix matched
    if (state > 0 && pattern[state - 1]!.star) next.push(state);
    const token = pattern[state];
    if (token !== undefined && !token.star && token.char === character) next.push(state + 1);
  }
  return closure(pattern, next);
}

/** The complexity of a field's wildcard patterns (see the module comment), or `cap` when it is at least `cap`. */
export function wildcardComplexity(patterns: readonly string[], cap = 1000): number {
  // the same pattern twice is one pattern of the machine
  const automata = [...new Set(patterns)].map(tokens);
  const alphabet = [...new Set(automata.flatMap((pattern) => pattern.flatMap((token) => (token.star ? [] : [token.char]))))];
  // a character no pattern names
  alphabet.push('\u0000');
  const start = automata.map((pattern) => closure(pattern, [0]));
  const seen = new Set<string>();
  const queue: Set<number>[][] = [start];
  let max = 0;
  while (queue.length > 0) {
    const current = queue.shift()!;
    const key = current.map((states) => [...states].sort((a, b) => a - b).join(',')).join('|');
    if (seen.has(key)) continue;
    seen.add(key);
    // the prefixes (of at least one token) this input matches
    const size = current.reduce((sum, states) => sum + [...states].filter((state) => state > 0).length, 0);
    if (size >= cap) return cap;
    max = Math.max(max, size);
    if (seen.size > 20_000) return cap;
    for (const character of alphabet) {
      const next = current.map((states, index) => step(automata[index]!, states, character));
      if (next.some((states) => states.size > 0)) queue.push(next);
    }
  }
  return max;
}

/** The highest complexity of a rule EventBridge accepted in the recorded answers (`content_wildcard_repeating`). */
export const HIGHEST_COMPLEXITY_ACCEPTED = 7;
/** The lowest complexity of a rule EventBridge refused in the recorded answers (`content_wildcard_complex_EXC`). */
export const LOWEST_COMPLEXITY_REFUSED = 11;

/**
 * What EventBridge does with a field whose wildcard patterns have this complexity, as far as its recorded answers
 * tell (test/simulator/patterns/vectors/localstack-eventbridge-event-patterns.json): `accepted` up to the highest
 * complexity it accepted there, `refused` from the lowest it refused, `unknown` between the two (the limit is not
 * documented).
 */
export function judgeWildcardComplexity(complexity: number): 'accepted' | 'refused' | 'unknown' {
  if (complexity <= HIGHEST_COMPLEXITY_ACCEPTED) return 'accepted';
  return complexity >= LOWEST_COMPLEXITY_REFUSED ? 'refused' : 'unknown';
}
