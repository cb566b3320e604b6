/**
 * Compiles the value list of one pattern field (`"state": ["running", {"prefix": "init"}, {"exists": false}]`): the
 * field matches when ANY element matches (OR). Elements are exact values (string, number, boolean, null) or an object
 * with exactly one operator. Shared by event patterns and SNS filter policies; the dialect decides which operator forms
 * are allowed.
 *
 * A field's values are its "leaves": the scalar at the field's path, or every scalar element of an array there (arrays
 * flattened, objects skipped), so a condition matches when ANY element of an array matches (Event Ruler "values match
 * if the intersection is non-empty"; SNS String.Array "each element is treated as a separate string").
 *
 * Semantics (EventBridge "Content filtering" / "Comparison operators" pages, Event Ruler README, SNS "String value
 * matching", "Numeric value matching", "Key matching"):
 * - exact: same type and value; numbers compare numerically (5 matches 5.0 and 5e0); "" is not null.
 * - `prefix`, `suffix` (optionally `{"equals-ignore-case": ...}`), `equals-ignore-case`, `wildcard`, `cidr`: string
 *   values only.
 * - `numeric`: JSON numbers only (see numeric-range.ts).
 * - `exists: true`: at least one leaf (in SNS, one that is neither null nor "": "The key must have a non-null and
 *   non-empty value"); `exists: false`: no leaf (absent field, or an object/empty array there: "exists matching only
 *   works on leaf nodes").
 * - `anything-but` list/value: a leaf that equals none of the values (so a missing field never matches, and an array
 *   matches when one of its elements is not listed). Its `prefix`/`suffix`/`equals-ignore-case`/`wildcard` forms take
 *   a string or a list of strings, negate the string operator, and match every leaf that is not a string (a number,
 *   a boolean, null), as EventBridge answers (test/simulator/patterns/vectors/); an empty `prefix` or `suffix` is
 *   refused, as EventBridge refuses it.
 */
import { compileWildcard } from './wildcard';
import { HIGHEST_COMPLEXITY_ACCEPTED, judgeWildcardComplexity, LOWEST_COMPLEXITY_REFUSED, wildcardComplexity } from './wildcard-complexity';
import { compileNumericRange } from './numeric-range';
import { parseCidr } from './ip-address';
import { childPath, describeJsonType, isJsonObject, isJsonScalar, type JsonScalar } from './json-value';
import { failPattern, requireFeature, type CompileContext, type OperatorFeature } from './pattern-dialect';

/** Decides whether a field's leaves satisfy its value list. */
export type ValueListMatcher = (leaves: readonly JsonScalar[]) => boolean;

/** One element of a value list. */
type Condition =
  | { readonly kind: 'exists'; readonly present: boolean; readonly counts: (leaf: JsonScalar) => boolean }
  | { readonly kind: 'leaf'; readonly test: (leaf: JsonScalar) => boolean };

/** Every operator keyword; `$or` branches may not use them as field names (then `$or` is an ordinary field). */
export const OPERATOR_KEYWORDS: ReadonlySet<string> = new Set([
  'prefix',
  'suffix',
  'equals-ignore-case',
  'anything-but',
  'numeric',
  'exists',
  'cidr',
  'wildcard',
]);

type StringTest = (value: string) => boolean;

function stringOnly(test: StringTest): (leaf: JsonScalar) => boolean {
  return (leaf) => typeof leaf === 'string' && test(leaf);
}

/**
 * The negation of a string operator, as `anything-but` applies it: a string leaf the operator matches is excluded, and
 * every other leaf (a number, `true`/`false`, `null`) matches, since the operator cannot match it (EventBridge's
 * recorded answers: `{"anything-but": {"prefix": "init"}}` matches `12` and `null`).
 */
function exceptStrings(excluded: StringTest): (leaf: JsonScalar) => boolean {
  return (leaf) => typeof leaf !== 'string' || !excluded(leaf);
}

/** How a dialect compares numbers: to its decimal digits, or as doubles. */
function quantizer(context: CompileContext): (value: number) => number {
  const digits = context.dialect.numericDecimalDigits;
  if (digits === undefined) return (value) => value;
  const scale = 10 ** digits;
  return (value) => Math.round(value * scale);
}

function sameScalar(context: CompileContext, expected: JsonScalar): (leaf: JsonScalar) => boolean {
  if (typeof expected !== 'number') return (leaf) => leaf === expected;
  const quantize = quantizer(context);
  const wanted = quantize(expected);
  return (leaf) => typeof leaf === 'number' && quantize(leaf) === wanted;
}

function requireString(context: CompileContext, path: string, operator: string, operand: unknown): string {
  if (typeof operand !== 'string') failPattern(context, path, `"${operator}" needs a string, but was ${describeJsonType(operand)}`, operator);
  return operand;
}

/** `prefix` / `suffix`: a string, or `{"equals-ignore-case": string}`. */
function compileAffix(context: CompileContext, path: string, operator: 'prefix' | 'suffix', operand: unknown): StringTest {
  const matches = (value: string, affix: string): boolean => (operator === 'prefix' ? value.startsWith(affix) : value.endsWith(affix));
  if (isJsonObject(operand)) {
    const keys = Object.keys(operand);
    if (keys.length !== 1 || keys[0] !== 'equals-ignore-case') {
      failPattern(context, path, `"${operator}" takes a string or {"equals-ignore-case": string}, but had ${JSON.stringify(keys)}`, operator);
    }
    requireFeature(context, path, `${operator}.equals-ignore-case` as OperatorFeature);
    const affix = requireString(context, childPath(path, operator), `${operator}.equals-ignore-case`, operand['equals-ignore-case']).toLowerCase();
    return (value) => matches(value.toLowerCase(), affix);
  }
  const affix = requireString(context, path, operator, operand);
  return (value) => matches(value, affix);
}

function compileWildcardOperand(context: CompileContext, path: string, operator: string, operand: unknown): StringTest {
  const compiled = compileWildcard(requireString(context, path, operator, operand));
  if (typeof compiled === 'string') failPattern(context, path, compiled, operator);
  return compiled;
}

/** A non-empty list of strings, or one string. */
function stringOrStrings(context: CompileContext, path: string, operator: string, operand: unknown): string[] {
  const values = Array.isArray(operand) ? operand : [operand];
  if (values.length === 0 || !values.every((value) => typeof value === 'string')) {
    failPattern(context, path, `"${operator}" needs a string or a non-empty array of strings, but was ${JSON.stringify(operand)}`, operator);
  }
  return values as string[];
}

/** `anything-but: {prefix|suffix|equals-ignore-case|wildcard: ...}` */
function compileAnythingButObject(context: CompileContext, path: string, operand: Record<string, unknown>): (leaf: JsonScalar) => boolean {
  const keys = Object.keys(operand);
  if (keys.length !== 1) failPattern(context, path, `"anything-but" object must have exactly one operator, but had ${JSON.stringify(keys)}`, 'anything-but');
  const inner = keys[0] as string;
  const innerPath = childPath(path, 'anything-but');
  const value = operand[inner];
  switch (inner) {
    case 'prefix':
    case 'suffix': {
      requireFeature(context, path, `anything-but.${inner}`);
      if (Array.isArray(value)) requireFeature(context, innerPath, `anything-but.${inner}-list`);
      const affixes = stringOrStrings(context, innerPath, `anything-but.${inner}`, value);
      if (affixes.some((affix) => affix === '')) failPattern(context, innerPath, `"anything-but.${inner}" may not be an empty string`, `anything-but.${inner}`);
      return exceptStrings((leaf) => affixes.some((affix) => (inner === 'prefix' ? leaf.startsWith(affix) : leaf.endsWith(affix))));
    }
    case 'equals-ignore-case': {
      requireFeature(context, path, 'anything-but.equals-ignore-case');
      const excluded = new Set(stringOrStrings(context, innerPath, 'anything-but.equals-ignore-case', value).map((text) => text.toLowerCase()));
      return exceptStrings((leaf) => excluded.has(leaf.toLowerCase()));
    }
    case 'wildcard': {
      requireFeature(context, path, 'anything-but.wildcard');
      const wildcards = stringOrStrings(context, innerPath, 'anything-but.wildcard', value).map((text) => compileWildcardOperand(context, innerPath, 'anything-but.wildcard', text));
      return exceptStrings((leaf) => wildcards.some((matches) => matches(leaf)));
    }
    default:
      return failPattern(context, innerPath, `unknown "anything-but" operator "${inner}"`, `anything-but.${inner}`);
  }
}

/** `anything-but`: a string, a number, a non-empty list of only strings or only numbers, or an operator object. */
function compileAnythingBut(context: CompileContext, path: string, operand: unknown): (leaf: JsonScalar) => boolean {
  requireFeature(context, path, 'anything-but');
  if (isJsonObject(operand)) return compileAnythingButObject(context, path, operand);
  const excluded = Array.isArray(operand) ? operand : [operand];
  const allStrings = excluded.every((value) => typeof value === 'string');
  const allNumbers = excluded.every((value) => typeof value === 'number');
  if (excluded.length === 0 || !(allStrings || allNumbers)) {
    failPattern(context, path, `"anything-but" needs a string, a number, a non-empty array of only strings or only numbers, or an operator object, but was ${JSON.stringify(operand)}`, 'anything-but');
  }
  const quantize = quantizer(context);
  const key = (leaf: JsonScalar): JsonScalar => (typeof leaf === 'number' ? quantize(leaf) : leaf);
  const excludedSet = new Set<JsonScalar>((excluded as JsonScalar[]).map(key));
  return (leaf) => !excludedSet.has(key(leaf));
}

function compileOperator(context: CompileContext, path: string, operator: string, operand: unknown): Condition {
  switch (operator) {
    case 'exists':
      requireFeature(context, path, 'exists');
      if (typeof operand !== 'boolean') failPattern(context, path, `"exists" needs true or false, but was ${JSON.stringify(operand)}`, operator);
      return { kind: 'exists', present: operand, counts: context.dialect.existsNeedsNonEmptyValue === true ? isNonEmptyValue : anyLeaf };
    case 'prefix':
    case 'suffix':
      requireFeature(context, path, operator);
      return { kind: 'leaf', test: stringOnly(compileAffix(context, path, operator, operand)) };
    case 'equals-ignore-case': {
      requireFeature(context, path, operator);
      const expected = requireString(context, path, operator, operand).toLowerCase();
      return { kind: 'leaf', test: stringOnly((value) => value.toLowerCase() === expected) };
    }
    case 'wildcard':
      requireFeature(context, path, operator);
      return { kind: 'leaf', test: stringOnly(compileWildcardOperand(context, path, operator, operand)) };
    case 'anything-but':
      return { kind: 'leaf', test: compileAnythingBut(context, path, operand) };
    case 'numeric': {
      requireFeature(context, path, operator);
      const range = compileNumericRange(operand, quantizer(context));
      if (typeof range === 'string') failPattern(context, path, range, operator);
      return { kind: 'leaf', test: (leaf) => typeof leaf === 'number' && range(leaf) };
    }
    case 'cidr': {
      requireFeature(context, path, operator);
      const block = parseCidr(requireString(context, path, operator, operand));
      if (typeof block === 'string') failPattern(context, path, block, operator);
      return { kind: 'leaf', test: stringOnly(block) };
    }
    default:
      return failPattern(context, path, `unknown operator "${operator}"`, operator);
  }
}

function compileElement(context: CompileContext, path: string, element: unknown): Condition {
  if (isJsonScalar(element)) return { kind: 'leaf', test: sameScalar(context, element) };
  if (isJsonObject(element)) {
    const keys = Object.keys(element);
    if (keys.length !== 1) {
      failPattern(context, path, `a match expression must have exactly one operator, but had ${keys.length === 0 ? 'none' : JSON.stringify(keys)}`);
    }
    const operator = keys[0] as string;
    return compileOperator(context, path, operator, element[operator]);
  }
  return failPattern(context, path, `a value must be a string, number, boolean, null or an operator object, but was ${describeJsonType(element)}`);
}

/** The operands of a value list's `wildcard` and `anything-but.wildcard` elements (compiled already, so well formed). */
function wildcardOperands(values: readonly unknown[]): string[] {
  return values.flatMap((element) => {
    if (!isJsonObject(element)) return [];
    if (typeof element.wildcard === 'string') return [element.wildcard];
    const negated = element['anything-but'];
    if (!isJsonObject(negated)) return [];
    const operand = negated.wildcard;
    return typeof operand === 'string' ? [operand] : Array.isArray(operand) ? operand.filter((value): value is string => typeof value === 'string') : [];
  });
}

/**
 * Refuses a field whose wildcard patterns EventBridge refuses as too complex, and one whose complexity lies where the
 * recorded answers do not tell (wildcard-complexity.ts). Measured per value list: patterns of the same field in other
 * `$or` branches are not added in.
 */
function checkWildcardComplexity(context: CompileContext, path: string, values: readonly unknown[]): void {
  const operands = wildcardOperands(values);
  if (operands.length === 0) return;
  const complexity = wildcardComplexity(operands);
  const judgement = judgeWildcardComplexity(complexity);
  if (judgement === 'refused') {
    failPattern(context, path, `"Rule is too complex": EventBridge refuses wildcard patterns of this complexity (${complexity}, as Event Ruler measures it; it refused ${LOWEST_COMPLEXITY_REFUSED} in its recorded answers)`, 'wildcard');
  }
  if (judgement === 'unknown') {
    failPattern(
      context,
      path,
      `the simulator cannot tell whether EventBridge accepts wildcard patterns of complexity ${complexity} (as Event Ruler measures it): EventBridge accepted ${HIGHEST_COMPLEXITY_ACCEPTED} and refused ${LOWEST_COMPLEXITY_REFUSED} in its recorded answers, and its limit is not documented; use fewer wildcards or fewer repeated sequences after one`,
      'wildcard',
    );
  }
}

const anyLeaf = (): boolean => true;
const isNonEmptyValue = (leaf: JsonScalar): boolean => leaf !== null && leaf !== '';

/**
 * `exists: true` needs a leaf that counts (the dialect's `existsNeedsNonEmptyValue`); `exists: false` needs no leaf at
 * all. So in SNS a field whose only leaves are null or "" matches neither: the guide says what `true` needs, and says
 * `false` matches messages that "don't include the specified property", not what it does with a null or "" value
 * (undocumented; not observed on AWS here).
 */
function matchesExists(condition: Extract<Condition, { kind: 'exists' }>, leaves: readonly JsonScalar[]): boolean {
  return condition.present ? leaves.some(condition.counts) : leaves.length === 0;
}

/** Compiles a field's value list (`path` names the field). Throws UnsupportedPatternError for anything it cannot run. */
export function compileValueList(context: CompileContext, path: string, values: readonly unknown[]): ValueListMatcher {
  if (values.length === 0) failPattern(context, path, 'an empty array of values matches nothing and is not allowed');
  const conditions = values.map((element, index) => compileElement(context, childPath(path, index), element));
  checkWildcardComplexity(context, path, values);
  return (leaves) =>
    conditions.some((condition) =>
      condition.kind === 'exists' ? matchesExists(condition, leaves) : leaves.some((leaf) => condition.test(leaf)),
    );
}
