/**
 * SNS subscription filter policies (`FilterPolicy` with `FilterPolicyScope`), sharing the matcher of EventBridge event
 * patterns (pattern-tree.ts, value-list.ts) where SNS documents the same semantics. Sources: SNS developer guide
 * "Amazon SNS message filtering", "Amazon SNS subscription filter policies", "Filter policy constraints", "AND/OR
 * logic", "Key matching", "String value matching", "Numeric value matching", "IP address matching"; where the guide is
 * silent, the validation LocalStack checks against AWS snapshots (localstack/services/sns/filter.py).
 *
 * Scopes:
 * - `MessageBody`: the body must be a JSON object (otherwise no match: "Filter policies for the message body assume
 *   that the message payload is a well-formed JSON object"); policies may nest; arrays in the body match when any
 *   element matches; a key with dots is a path, in the policy and in the body (dotted-keys.ts).
 * - numbers compare to five decimal digits ("Filter policy constraints": "five digits of accuracy after the decimal
 *   point"), in both scopes.
 * - `exists` ("Key matching"): `true` needs a value that is neither null nor ""; in `MessageAttributes` scope a message
 *   without attributes matches no policy ("An empty set of attributes results in the filter not matching").
 * - `MessageAttributes`: no nesting. `String` attributes are strings; `Number` attributes are numbers (their
 *   `StringValue` parsed, so 3.015e2 equals 301.5); `String.Array` attributes are the JSON array in `StringValue`, any
 *   element may match (a malformed array gives no values); `Binary` attributes are ignored ("Amazon SNS ignores
 *   message attributes with the Binary data type"), i.e. treated as absent. Custom type labels (`Number.float`) count
 *   as their base type. A string policy value never matches a Number attribute and a number never matches a String.
 *
 * Operators SNS documents: exact values, `prefix`, `suffix`, `equals-ignore-case`, `anything-but` (value, list,
 * `{prefix}`), `numeric`, `exists`, `cidr`, `$or`. Everything else throws {@link UnsupportedPatternError}: `wildcard`
 * (not documented for SNS), `prefix`/`suffix` with `equals-ignore-case`, and `anything-but` with `suffix`,
 * `equals-ignore-case` or `wildcard` (SNS rejects `{"anything-but": {"suffix": ...}}` with "Unsupported anything-but
 * pattern", per LocalStack's AWS-verified test `error-condition-anything-but-suffix`).
 *
 * Constraints enforced (they make Subscribe fail in AWS): at most 5 top-level keys; at most 150 combinations, counted
 * as the guide's example does (the product of each value array's length times its nesting depth; `$or` branches add).
 */
import { compilePatternTree } from './pattern-tree';
import { failPattern, type CompileContext, type OperatorFeature, type PatternDialect } from './pattern-dialect';
import { isJsonObject } from './json-value';

export { UnsupportedPatternError } from './pattern-error';

/** `FilterPolicyScope` */
export type FilterPolicyScope = 'MessageAttributes' | 'MessageBody';

/** An SNS message attribute as published (`MessageAttributeValue`). */
export interface SnsMessageAttribute {
  /** `String`, `Number`, `Binary`, `String.Array`, optionally with a custom label (`Number.float`). */
  readonly DataType: string;
  readonly StringValue?: string;
  readonly BinaryValue?: string;
}

/** What a filter policy is evaluated against. */
export interface FilterableMessage {
  /** The message body (`Message`) as published. */
  readonly body: string;
  readonly attributes: Readonly<Record<string, SnsMessageAttribute>>;
}

/** "A filter policy can have a maximum of five keys." */
export const MAX_FILTER_POLICY_KEYS = 5;
/** "For numeric matching, the value can range from -10^9 to 10^9, with five digits of accuracy after the decimal point." */
export const SNS_NUMERIC_DECIMAL_DIGITS = 5;
/** "The total combination of values must not exceed 150." */
export const MAX_FILTER_POLICY_COMBINATIONS = 150;

const SNS_OPERATORS: readonly OperatorFeature[] = ['prefix', 'suffix', 'equals-ignore-case', 'anything-but', 'anything-but.prefix', 'numeric', 'exists', 'cidr'];
const SNS_SOURCE = 'not among the operators of the SNS developer guide, "Amazon SNS subscription filter policies"';

function snsDialect(scope: FilterPolicyScope): PatternDialect {
  return {
    patternKind: `SNS filter policy (${scope})`,
    supports: new Set(SNS_OPERATORS),
    unsupportedSource: SNS_SOURCE,
    allowsNestedFields: scope === 'MessageBody',
    nestingSource: 'SNS "Filter policy constraints": Amazon SNS doesn\'t accept a nested filter policy for attribute-based filtering',
    dottedKeysArePaths: scope === 'MessageBody',
    numericDecimalDigits: SNS_NUMERIC_DECIMAL_DIGITS,
    existsNeedsNonEmptyValue: true,
  };
}

/** Combinations as the "Filter policy constraints" page counts them (see the module comment). */
function countCombinations(policy: Record<string, unknown>, depth = 1, combinations = 1): number {
  let total = combinations;
  for (const [key, value] of Object.entries(policy)) {
    if (key === '$or' && Array.isArray(value) && value.every(isJsonObject)) {
      total = value.reduce<number>((sum, branch) => sum + countCombinations(branch, depth, total), 0);
    } else if (Array.isArray(value)) {
      total *= value.length * depth;
    } else if (isJsonObject(value)) {
      total = countCombinations(value, depth + 1, total);
    }
  }
  return total;
}

function checkConstraints(context: CompileContext, policy: Record<string, unknown>): void {
  const keys = Object.keys(policy);
  if (keys.length > MAX_FILTER_POLICY_KEYS) {
    failPattern(context, '$', `a filter policy can have at most ${MAX_FILTER_POLICY_KEYS} keys, but has ${keys.length} (${keys.join(', ')})`);
  }
  const combinations = countCombinations(policy);
  if (combinations > MAX_FILTER_POLICY_COMBINATIONS) {
    failPattern(context, '$', `the total combination of values must not exceed ${MAX_FILTER_POLICY_COMBINATIONS}, but is ${combinations}`);
  }
}

function parseStringArray(text: string | undefined): unknown[] {
  if (text === undefined) return [];
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? parsed : [];
  } catch {
    return [];
  }
}

/** The attributes as a JSON document the pattern tree can match: name -> string, number or array. */
function attributesAsDocument(attributes: Readonly<Record<string, SnsMessageAttribute>>): Record<string, unknown> {
  const document: Record<string, unknown> = {};
  for (const [name, attribute] of Object.entries(attributes)) {
    const dataType = attribute.DataType;
    const baseType = dataType.split('.')[0];
    if (dataType === 'String.Array') {
      document[name] = parseStringArray(attribute.StringValue);
    } else if (baseType === 'String' && attribute.StringValue !== undefined) {
      document[name] = attribute.StringValue;
    } else if (baseType === 'Number' && attribute.StringValue !== undefined) {
      const value = Number(attribute.StringValue);
      if (attribute.StringValue.trim() !== '' && Number.isFinite(value)) document[name] = value;
    }
    // Binary (and unknown types): ignored, as SNS does
  }
  return document;
}

function parseBody(body: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(body);
    return isJsonObject(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Compiles an SNS subscription filter policy for a scope into a predicate over a published message. Throws
 * {@link UnsupportedPatternError} (naming the operator and the path) for an unknown or unsupported operator, a
 * malformed policy, nesting in MessageAttributes scope, or a policy over the documented key/combination limits.
 */
export function compileFilterPolicy(policy: Record<string, unknown>, scope: FilterPolicyScope): (message: FilterableMessage) => boolean {
  const context: CompileContext = { dialect: snsDialect(scope), pattern: policy };
  const matcher = compilePatternTree(context);
  checkConstraints(context, policy);
  if (scope === 'MessageBody') {
    return (message) => {
      const body = parseBody(message.body);
      return body !== undefined && matcher(body);
    };
  }
  // "Key matching": "An empty set of attributes results in the filter not matching" (said of `exists: false`, the only
  // condition that could match no attribute at all). A Binary attribute counts as present here, though the filter
  // ignores its value: the guide does not say, and this way the simulator expects the delivery rather than misses it.
  return (message) => Object.keys(message.attributes).length > 0 && matcher(attributesAsDocument(message.attributes));
}
