/**
 * EventBridge event patterns, as used by event-bus rules and by EventBridge Pipes filters (`FilterCriteria.Filters[]
 * .Pattern`). Semantics: see pattern-tree.ts (structure, `$or`, arrays) and value-list.ts (operators). Sources: AWS
 * EventBridge user guide "Event patterns", "Content filtering in Amazon EventBridge event patterns", "Comparison
 * operators for use in event patterns" (with its "Pipe support" column), "Matching null values and empty strings",
 * "Amazon EventBridge Pipes filtering"; the Event Ruler README (aws/event-ruler), the library EventBridge uses.
 *
 * A Pipe filter applies to the source record as Pipes presents it: for a DynamoDB stream the record JSON
 * (`{"eventName": "INSERT", "dynamodb": {"NewImage": {"attr": {"S": "..."}}}}`); for SQS and Kinesis sources Pipes
 * first JSON-decodes `body` / `data` when it is valid JSON ("implicit body data parsing"). The caller passes the record
 * in that form; this module does not decode anything.
 *
 * A key with dots is a path, in the pattern and in the event (dotted-keys.ts). Not emulated: numeric operand bounds and rounding; the
 * Pipes rule that some record metadata fields (e.g. `eventSourceARN`) cannot be filtered on.
 */
import { compilePatternTree, type DocumentMatcher } from './pattern-tree';
import { failPattern, type OperatorFeature, type PatternDialect } from './pattern-dialect';

export { UnsupportedPatternError } from './pattern-error';

const ALL_OPERATORS: readonly OperatorFeature[] = [
  'prefix',
  'prefix.equals-ignore-case',
  'suffix',
  'suffix.equals-ignore-case',
  'equals-ignore-case',
  'anything-but',
  'anything-but.prefix',
  'anything-but.suffix',
  'anything-but.prefix-list',
  'anything-but.suffix-list',
  'anything-but.equals-ignore-case',
  'anything-but.wildcard',
  'numeric',
  'exists',
  'cidr',
  'wildcard',
];

/** Operator forms the "Comparison operators" table marks "Pipe support: No". */
const NOT_IN_PIPES: ReadonlySet<OperatorFeature> = new Set<OperatorFeature>([
  'anything-but.prefix',
  'anything-but.suffix',
  'anything-but.prefix-list',
  'anything-but.suffix-list',
  'anything-but.equals-ignore-case',
  'anything-but.wildcard',
  'wildcard',
]);

/** Event patterns of event-bus rules: every operator of the "Comparison operators" table, plus `cidr`. */
export const EVENT_BUS_PATTERN_DIALECT: PatternDialect = {
  patternKind: 'EventBridge event pattern',
  supports: new Set(ALL_OPERATORS),
  unsupportedSource: 'EventBridge user guide, "Comparison operators for use in event patterns"',
  allowsNestedFields: true,
  dottedKeysArePaths: true,
};

/**
 * Filter patterns of EventBridge Pipes: as event-bus patterns, without the forms the "Comparison operators" table marks
 * "Pipe support: No" (`wildcard` and the prefix/suffix/equals-ignore-case/wildcard forms of `anything-but`). `cidr` is
 * not in that table; it is accepted.
 */
export const PIPE_FILTER_PATTERN_DIALECT: PatternDialect = {
  patternKind: 'EventBridge Pipes filter pattern',
  supports: new Set(ALL_OPERATORS.filter((operator) => !NOT_IN_PIPES.has(operator))),
  unsupportedSource: 'EventBridge user guide, "Comparison operators for use in event patterns", column "Pipe support"',
  allowsNestedFields: true,
  dottedKeysArePaths: true,
};

/** Options of {@link compileEventPattern}. */
export interface CompileEventPatternOptions {
  /** Which operator set applies. @default EVENT_BUS_PATTERN_DIALECT */
  readonly dialect?: PatternDialect;
}

function parsePattern(patternJson: string, dialect: PatternDialect): unknown {
  try {
    return JSON.parse(patternJson) as unknown;
  } catch (error) {
    return failPattern({ dialect, pattern: patternJson }, '$', `the pattern is not valid JSON (${(error as Error).message})`);
  }
}

/**
 * Compiles an EventBridge event pattern (JSON text) into a predicate over an event (a parsed JSON value). Throws
 * {@link UnsupportedPatternError}, naming the operator and the path in the pattern, for malformed JSON, a malformed
 * pattern, an unknown operator, or an operator the dialect does not support.
 */
export function compileEventPattern(patternJson: string, options: CompileEventPatternOptions = {}): (event: unknown) => boolean {
  const dialect = options.dialect ?? EVENT_BUS_PATTERN_DIALECT;
  const pattern = parsePattern(patternJson, dialect);
  const matcher: DocumentMatcher = compilePatternTree({ dialect, pattern });
  return (event) => matcher(event);
}

/**
 * Compiles a Pipe's `FilterCriteria`: the record passes when it matches ANY of the filter patterns (each compiled with
 * {@link PIPE_FILTER_PATTERN_DIALECT}); with no patterns every record passes, as with a Pipe without FilterCriteria.
 */
export function compilePipeFilterCriteria(patterns: readonly string[]): (record: unknown) => boolean {
  const matchers = patterns.map((pattern) => compileEventPattern(pattern, { dialect: PIPE_FILTER_PATTERN_DIALECT }));
  if (matchers.length === 0) return () => true;
  return (record) => matchers.some((matches) => matches(record));
}
