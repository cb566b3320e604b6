/**
 * What differs between the pattern languages that share the matcher of this folder: EventBridge event patterns (event
 * bus), EventBridge Pipes filters, and SNS subscription filter policies (MessageBody and MessageAttributes scopes).
 * The dialects themselves are defined next to their compilers (event-pattern.ts, filter-policy.ts).
 */
import { UnsupportedPatternError } from './pattern-error';

/** An operator form a dialect may or may not support. */
export type OperatorFeature =
  | 'prefix'
  | 'prefix.equals-ignore-case'
  | 'suffix'
  | 'suffix.equals-ignore-case'
  | 'equals-ignore-case'
  | 'anything-but'
  | 'anything-but.prefix'
  | 'anything-but.suffix'
  | 'anything-but.prefix-list'
  | 'anything-but.suffix-list'
  | 'anything-but.equals-ignore-case'
  | 'anything-but.wildcard'
  | 'numeric'
  | 'exists'
  | 'cidr'
  | 'wildcard';

/** A pattern language: which operators it has and whether fields may nest. */
export interface PatternDialect {
  /** Named in error messages, e.g. `EventBridge Pipes filter pattern`. */
  readonly patternKind: string;
  /** The operator forms it supports; any other form throws {@link UnsupportedPatternError}. */
  readonly supports: ReadonlySet<OperatorFeature>;
  /** Appended to "not supported" messages: where the restriction is documented. */
  readonly unsupportedSource: string;
  /** Whether a field's value may be an object of nested fields (false for SNS MessageAttributes scope). */
  readonly allowsNestedFields: boolean;
  /** Where the ban on nesting is documented, when {@link PatternDialect.allowsNestedFields} is false. */
  readonly nestingSource?: string;
  /** Whether a key with dots is a path (`"a.b"` is `b` inside `a`), in the pattern and in the document (dotted-keys.ts). */
  readonly dottedKeysArePaths: boolean;
  /**
   * Decimal digits numbers are compared to (SNS: five, "Filter policy constraints"); values equal to that many
   * digits are equal. @default full double precision
   */
  readonly numericDecimalDigits?: number;
  /**
   * Whether `"exists": true` needs a value that is neither null nor the empty string (SNS "Key matching": "The key must
   * have a non-null and non-empty value"). @default false (any leaf, null and "" included, makes the field exist)
   */
  readonly existsNeedsNonEmptyValue?: boolean;
}

/** The pattern being compiled, for error messages. */
export interface CompileContext {
  readonly dialect: PatternDialect;
  /** The whole pattern, quoted in errors. */
  readonly pattern: unknown;
}

/** Throws the {@link UnsupportedPatternError} for `problem` at `path`. */
export function failPattern(context: CompileContext, path: string, problem: string, operator?: string): never {
  throw new UnsupportedPatternError({
    patternKind: context.dialect.patternKind,
    path,
    problem,
    pattern: context.pattern,
    ...(operator === undefined ? {} : { operator }),
  });
}

/** Throws unless the dialect supports `feature`. */
export function requireFeature(context: CompileContext, path: string, feature: OperatorFeature): void {
  if (!context.dialect.supports.has(feature)) {
    failPattern(context, path, `operator "${feature}" is not supported (${context.dialect.unsupportedSource})`, feature);
  }
}
