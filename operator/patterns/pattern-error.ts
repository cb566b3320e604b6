/**
 * The error every pattern compiler of this folder throws for a pattern it will not run: an operator it does not know
 * (or that the service does not support), or a malformed pattern. The simulator stops on it rather than guessing, so a
 * filter is never silently treated as "everything passes".
 */

/** How many characters of the offending pattern an error message quotes. */
const QUOTED_PATTERN_MAX_CHARS = 300;

/** What an {@link UnsupportedPatternError} is about. */
export interface UnsupportedPatternDetails {
  /** What kind of pattern it is, e.g. `EventBridge Pipes filter pattern` or `SNS filter policy (MessageBody)`. */
  readonly patternKind: string;
  /** Where in the pattern, as a JSONPath-like path, e.g. `$.detail.state[0]`; `$` for the whole pattern. */
  readonly path: string;
  /** What is wrong, e.g. `unknown operator "contains"`. */
  readonly problem: string;
  /** The operator concerned, when the problem is about one. */
  readonly operator?: string;
  /** The whole pattern, quoted (shortened) in the message. */
  readonly pattern: unknown;
}

function quote(pattern: unknown): string {
  let text: string;
  try {
    text = typeof pattern === 'string' ? pattern : JSON.stringify(pattern);
  } catch {
    text = String(pattern);
  }
  return text.length > QUOTED_PATTERN_MAX_CHARS ? `${text.slice(0, QUOTED_PATTERN_MAX_CHARS)}...` : text;
}

/** A pattern (event pattern, pipe filter, SNS filter policy) the simulator cannot run faithfully. */
export class UnsupportedPatternError extends Error {
  /** What kind of pattern it is. */
  readonly patternKind: string;
  /** Where in the pattern the problem is (`$` is the pattern itself). */
  readonly path: string;
  /** The operator concerned, when there is one. */
  readonly operator?: string;

  constructor(details: UnsupportedPatternDetails) {
    super(`${details.patternKind}: ${details.problem} at ${details.path} in ${quote(details.pattern)}`);
    this.name = 'UnsupportedPatternError';
    this.patternKind = details.patternKind;
    this.path = details.path;
    if (details.operator !== undefined) this.operator = details.operator;
  }
}
