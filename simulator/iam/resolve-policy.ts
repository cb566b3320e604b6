/**
 * Resolves a policy document of the templates to the JSON IAM evaluates: every intrinsic (`Ref`, `Fn::GetAtt`,
 * `Fn::Join`, `Fn::Sub`, ...) and cross-stack value becomes the string it names (an ARN, with {@link IamNames}), and
 * `Ref AWS::NoValue` removes the element or property that holds it, as CloudFormation does.
 */
import { CrossStackValue } from '../model/cross-stack-value';
import type { TemplatePolicy } from '../model/access-model';
import type { LocalNames } from '../model/flow-model';
import { isNoValue, resolveValue } from '../model/intrinsics';
import { isIntrinsic, isPlainObject } from '../model/template-values';

/** A resolved policy document. */
export interface PolicyDocument {
  readonly Version?: string;
  readonly Statement: readonly PolicyStatement[];
}

/** One value of a condition operand. */
export type ConditionValue = string | number | boolean;

/** One statement, as IAM reads it. */
export interface PolicyStatement {
  readonly Sid?: string;
  readonly Effect: 'Allow' | 'Deny';
  readonly Action?: string | readonly string[];
  readonly NotAction?: string | readonly string[];
  readonly Resource?: string | readonly string[];
  readonly NotResource?: string | readonly string[];
  readonly Principal?: unknown;
  /** Each operator's keys and values: a value is a scalar (string, number, boolean) or a list of them, as IAM takes it. */
  readonly Condition?: Record<string, Record<string, ConditionValue | readonly ConditionValue[]>>;
}

/** Resolves the document (throws `UnresolvableValueError` naming the policy when a value cannot be resolved). */
export function resolvePolicy(policy: TemplatePolicy, names: LocalNames): PolicyDocument {
  const where = `policy ${policy.name}`;
  const resolve = (value: unknown): unknown => {
    if (value instanceof CrossStackValue || isIntrinsic(value)) return resolveValue(value, policy.stackName, names, where);
    if (Array.isArray(value)) return value.filter((element) => !isNoValue(element)).map(resolve);
    if (isPlainObject(value)) {
      return Object.fromEntries(Object.entries(value).filter(([, element]) => !isNoValue(element)).map(([key, element]) => [key, resolve(element)]));
    }
    return value;
  };
  const document = resolve(policy.document);
  if (!isPlainObject(document)) throw new Error(`${where} is not a policy document (an object with Statement)`);
  const statements = Array.isArray(document.Statement) ? document.Statement : document.Statement === undefined ? [] : [document.Statement];
  return { ...document, Statement: statements as PolicyStatement[] };
}

/** How IAM identifies a statement in its explanations: its `Sid`, else its 1-based position. */
export function statementId(statement: PolicyStatement, index: number): string {
  return statement.Sid ?? String(index + 1);
}

/** A field that may be one string or a list of them, as a list. */
export function asList(value: string | readonly string[] | undefined): readonly string[] {
  return value === undefined ? [] : typeof value === 'string' ? [value] : value;
}
