/**
 * Compiles the object structure of an event pattern or SNS filter policy into a predicate over a parsed JSON document:
 * - every field of an object must match (AND); a field's value is either a value list (see value-list.ts) or an object
 *   of nested fields;
 * - `"$or": [{...}, {...}]` matches when any branch matches. As both services document, `$or` is only the OR operator
 *   when its value is an array of at least two objects none of whose keys is an operator keyword; otherwise it is an
 *   ordinary field name;
 * - where the document has an array of objects under a nested field, the nested pattern must match within ONE element
 *   (Event Ruler "array-consistent matching": fields from different elements of the same array are never combined);
 * - empty objects and empty value arrays are rejected (they are not valid patterns);
 * - where the dialect says so, a key with dots is a path, in the pattern and in the document (dotted-keys.ts).
 */
import { expandDocumentKeys, expandPatternKeys } from './dotted-keys';
import { childPath, describeJsonType, isJsonObject, isJsonScalar, type JsonScalar } from './json-value';
import { failPattern, type CompileContext } from './pattern-dialect';
import { compileValueList, OPERATOR_KEYWORDS } from './value-list';

/** A compiled pattern: true when the document matches. */
export type DocumentMatcher = (document: unknown) => boolean;

/** Matches one object level (the document node at that level, which may be anything). */
type LevelMatcher = (node: unknown) => boolean;

/** The scalars at a field: the value itself, or the scalar elements of (nested) arrays; objects are not leaves. */
export function leavesOf(value: unknown): JsonScalar[] {
  if (value === undefined) return [];
  if (Array.isArray(value)) return value.flatMap((element) => leavesOf(element));
  return isJsonScalar(value) ? [value] : [];
}

function objectsOf(value: readonly unknown[]): Record<string, unknown>[] {
  return value.flatMap((element) => (Array.isArray(element) ? objectsOf(element) : isJsonObject(element) ? [element] : []));
}

/** Applies a level matcher to a value that may be an array of objects: one element must match. */
function matchLevel(level: LevelMatcher, value: unknown): boolean {
  if (!Array.isArray(value)) return level(value);
  const candidates = objectsOf(value);
  return candidates.length === 0 ? level(undefined) : candidates.some((candidate) => level(candidate));
}

function fieldOf(node: unknown, key: string): unknown {
  return isJsonObject(node) ? node[key] : undefined;
}

function isOrOperator(key: string, value: unknown): value is Record<string, unknown>[] {
  return (
    key === '$or' &&
    Array.isArray(value) &&
    value.length >= 2 &&
    value.every((branch) => isJsonObject(branch) && Object.keys(branch).every((field) => !OPERATOR_KEYWORDS.has(field)))
  );
}

function compileLevel(context: CompileContext, path: string, pattern: unknown): LevelMatcher {
  if (!isJsonObject(pattern)) failPattern(context, path, `must be a JSON object of fields, but was ${describeJsonType(pattern)}`);
  const keys = Object.keys(pattern);
  if (keys.length === 0) failPattern(context, path, 'an empty object is not allowed');
  const fieldMatchers = keys.map((key): LevelMatcher => {
    const value = pattern[key];
    const fieldPath = childPath(path, key);
    if (isOrOperator(key, value)) {
      const branches = value.map((branch, index) => compileLevel(context, childPath(fieldPath, index), branch));
      return (node) => branches.some((branch) => branch(node));
    }
    if (Array.isArray(value)) {
      const values = compileValueList(context, fieldPath, value);
      return (node) => values(leavesOf(fieldOf(node, key)));
    }
    if (isJsonObject(value)) {
      if (!context.dialect.allowsNestedFields) {
        failPattern(context, fieldPath, `nested fields are not supported (${context.dialect.nestingSource ?? 'not allowed by this pattern language'})`);
      }
      const nested = compileLevel(context, fieldPath, value);
      return (node) => matchLevel(nested, fieldOf(node, key));
    }
    return failPattern(context, fieldPath, `a field must be an array of values or an object of nested fields, but was ${describeJsonType(value)}`);
  });
  return (node) => fieldMatchers.every((matches) => matches(node));
}

/**
 * Compiles a whole pattern (an object of fields). Throws UnsupportedPatternError for anything it cannot run. Where the
 * dialect says so, dotted keys of the pattern and of each document are paths (dotted-keys.ts).
 */
export function compilePatternTree(context: CompileContext): DocumentMatcher {
  if (!context.dialect.dottedKeysArePaths) {
    const root = compileLevel(context, '$', context.pattern);
    return (document) => matchLevel(root, document);
  }
  const pattern = expandPatternKeys(context.pattern, (path) => failPattern(context, '$', `the field "${path}" is given twice (a key with dots is a path)`));
  const root = compileLevel(context, '$', pattern);
  return (document) => matchLevel(root, expandDocumentKeys(document));
}
