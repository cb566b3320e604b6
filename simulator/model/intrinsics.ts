/**
 * Resolves CloudFormation template values (plain strings and the intrinsic functions CDK emits) to the strings the
 * simulated resources have locally: a `Ref` of a queue becomes its local queue URL, a `Fn::GetAtt` its local ARN, and
 * so on, as {@link LocalNames} says. Supported: `Ref`, `Fn::GetAtt`, `Fn::Join`, `Fn::Sub`, `Fn::Select`,
 * `Fn::Split` and the pseudo parameters `AWS::Region`, `AWS::AccountId`, `AWS::Partition`, `AWS::StackName`,
 * `AWS::StackId`, `AWS::URLSuffix` and `AWS::NoValue` (CloudFormation User Guide, "Intrinsic function reference" and
 * "Pseudo parameters reference"), and the cross-stack references to outputs of the assembly's other stacks
 * (`Fn::GetStackOutput`, `Fn::ImportValue`), which the assembly reader has replaced by a {@link CrossStackValue}. Template parameters are substituted by their defaults when the assembly is read
 * (see template-parameters.ts), so a `Ref` that reaches this module names a resource.
 */
import { CrossStackValue } from './cross-stack-value';
import type { FunctionModel, LocalNames } from './flow-model';

/** A template value that cannot be turned into a string locally; the message names where it is and the expression. */
export class UnresolvableValueError extends Error {
  /**
   * @param where what holds the value, e.g. `environment variable TABLE of function Stack/Fn (Stack/Fn/Resource)`
   * @param expression the value as the template has it
   * @param reason why it cannot be resolved
   */
  constructor(
    readonly where: string,
    readonly expression: unknown,
    reason: string,
  ) {
    super(`Cannot resolve ${where}: ${reason} (expression: ${describeExpression(expression)})`);
    this.name = 'UnresolvableValueError';
  }
}

/**
 * Resolves a template value to a string, using the local names. Numbers and booleans become their `String()`.
 * Throws {@link UnresolvableValueError} naming `where` and the expression when it cannot (for example
 * `Fn::ImportValue`, a resource without a local name, a list where a string is needed, or `AWS::NoValue`, which has
 * no value: it removes the property).
 */
export function resolveValue(value: unknown, stackName: string, names: LocalNames, where: string): string {
  return new Resolver(stackName, names, where, value).string(value);
}

/**
 * Resolves a function's `Environment.Variables`. A variable whose value is `Ref AWS::NoValue` is left out, as
 * CloudFormation leaves it out. Errors name the function and the variable.
 */
export function resolveEnvironment(fn: FunctionModel, names: LocalNames): Record<string, string> {
  const resolved: Record<string, string> = {};
  const functionName = fn.constructPath === undefined ? fn.key : `${fn.key} (${fn.constructPath})`;
  for (const [variable, value] of Object.entries(fn.environment)) {
    if (isNoValue(value)) continue;
    resolved[variable] = resolveValue(value, fn.stackName, names, `environment variable ${variable} of function ${functionName}`);
  }
  return resolved;
}

/** True for `{ Ref: 'AWS::NoValue' }`, which removes the property (or list element) that holds it. */
export function isNoValue(value: unknown): boolean {
  return isObject(value) && Object.keys(value).length === 1 && value.Ref === 'AWS::NoValue';
}

/** A short JSON rendering of an expression for error messages. */
export function describeExpression(expression: unknown, maxLength = 200): string {
  const text = JSON.stringify(expression) ?? String(expression);
  return text.length > maxLength ? `${text.slice(0, maxLength)}...` : text;
}

const SUB_VARIABLE = /\$\{([^}]*)\}/g;

/** One resolution: carries the context every nested expression needs for its answer and its errors. */
class Resolver {
  constructor(
    private readonly stackName: string,
    private readonly names: LocalNames,
    private readonly where: string,
    private readonly whole: unknown,
  ) {}

  string(value: unknown): string {
    if (typeof value === 'string') return value;
    // evaluated in the stack whose output it is
    if (value instanceof CrossStackValue) return new Resolver(value.stackName, this.names, this.where, this.whole).string(value.value);
    if (typeof value === 'number' || typeof value === 'boolean') return String(value);
    if (Array.isArray(value)) this.fail(value, 'a list is not a string');
    if (!isObject(value)) this.fail(value, `${value === null ? 'null' : typeof value} is not a template value`);
    const [name, argument] = this.intrinsic(value);
    switch (name) {
      case 'Ref':
        return this.ref(argument, value);
      case 'Fn::GetAtt':
        return this.getAtt(argument, value);
      case 'Fn::Join':
        return this.join(argument, value);
      case 'Fn::Sub':
        return this.sub(argument, value);
      case 'Fn::Select':
        return this.select(argument, value);
      case 'Fn::Split':
        return this.fail(value, 'Fn::Split gives a list, not a string');
      case 'Fn::ImportValue':
        return this.fail(value, 'Fn::ImportValue names no export of a stack of the cloud assembly');
      case 'Fn::GetStackOutput':
        return this.fail(value, 'Fn::GetStackOutput names no output of a stack of the cloud assembly');
      default:
        return this.fail(value, `${name} is not supported by the simulator (supported: Ref, Fn::GetAtt, Fn::Join, Fn::Sub, Fn::Select, Fn::Split)`);
    }
  }

  /** A list argument (`Fn::Join`, `Fn::Select`): a literal list (`AWS::NoValue` elements dropped) or `Fn::Split`. */
  private list(value: unknown): string[] {
    if (Array.isArray(value)) return value.filter((element) => !isNoValue(element)).map((element) => this.string(element));
    if (isObject(value)) {
      const [name, argument] = this.intrinsic(value);
      if (name === 'Fn::Split') return this.split(argument, value);
    }
    return this.fail(value, 'expected a list (a literal list or Fn::Split)');
  }

  private intrinsic(value: Record<string, unknown>): [string, unknown] {
    const keys = Object.keys(value);
    if (keys.length !== 1 || (keys[0] !== 'Ref' && !keys[0].startsWith('Fn::'))) {
      this.fail(value, 'an object that is not an intrinsic function (one key: Ref or Fn::...)');
    }
    return [keys[0], value[keys[0]]];
  }

  private ref(target: unknown, expression: unknown): string {
    if (typeof target !== 'string') return this.fail(expression, 'Ref takes a logical id or pseudo parameter name');
    if (target.startsWith('AWS::')) return this.pseudoParameter(target, expression);
    return this.named(this.names.ref(`${this.stackName}/${target}`), expression, `${target} has no local name: it is not a resource the simulator created in stack ${this.stackName} (nor a template parameter with a default value)`);
  }

  private getAtt(argument: unknown, expression: unknown): string {
    let logicalId: string;
    let attribute: string;
    if (typeof argument === 'string') {
      const dot = argument.indexOf('.');
      if (dot <= 0 || dot === argument.length - 1) return this.fail(expression, 'Fn::GetAtt takes "LogicalId.Attribute"');
      logicalId = argument.slice(0, dot);
      attribute = argument.slice(dot + 1);
    } else if (Array.isArray(argument) && argument.length === 2 && typeof argument[0] === 'string') {
      logicalId = argument[0];
      attribute = this.string(argument[1]);
    } else {
      return this.fail(expression, 'Fn::GetAtt takes [LogicalId, Attribute] or "LogicalId.Attribute"');
    }
    return this.attribute(logicalId, attribute, expression);
  }

  private attribute(logicalId: string, attribute: string, expression: unknown): string {
    return this.named(
      this.names.getAtt(`${this.stackName}/${logicalId}`, attribute),
      expression,
      `${logicalId}.${attribute} has no local value: ${logicalId} is not a resource the simulator created in stack ${this.stackName}, or it has no attribute ${attribute} locally`,
    );
  }

  private join(argument: unknown, expression: unknown): string {
    if (!Array.isArray(argument) || argument.length !== 2 || typeof argument[0] !== 'string') {
      return this.fail(expression, 'Fn::Join takes [delimiter, list]');
    }
    return this.list(argument[1]).join(argument[0]);
  }

  private select(argument: unknown, expression: unknown): string {
    if (!Array.isArray(argument) || argument.length !== 2) return this.fail(expression, 'Fn::Select takes [index, list]');
    const indexText = this.string(argument[0]);
    const index = Number(indexText);
    const list = this.list(argument[1]);
    if (!Number.isInteger(index) || index < 0 || index >= list.length) {
      return this.fail(expression, `Fn::Select index ${indexText} is not within the list of ${list.length} element(s)`);
    }
    return list[index];
  }

  private split(argument: unknown, expression: unknown): string[] {
    if (!Array.isArray(argument) || argument.length !== 2 || typeof argument[0] !== 'string' || argument[0] === '') {
      return this.fail(expression, 'Fn::Split takes [non-empty delimiter, string]');
    }
    return this.string(argument[1]).split(argument[0]);
  }

  /** `Fn::Sub`: `${Name}` is a variable, pseudo parameter or `Ref`; `${Name.Attr}` a `Fn::GetAtt`; `${!Text}` a literal `${Text}`. */
  private sub(argument: unknown, expression: unknown): string {
    let text: unknown = argument;
    let variables: Record<string, unknown> = {};
    if (Array.isArray(argument)) {
      if (argument.length !== 2 || !isObject(argument[1])) return this.fail(expression, 'Fn::Sub takes a string or [string, { variables }]');
      [text, variables] = [argument[0], argument[1]];
    }
    if (typeof text !== 'string') return this.fail(expression, 'Fn::Sub takes a string or [string, { variables }]');
    return text.replace(SUB_VARIABLE, (_match, content: string) => {
      if (content.startsWith('!')) return `\${${content.slice(1)}}`;
      const name = content.trim();
      if (Object.prototype.hasOwnProperty.call(variables, name)) return this.string(variables[name]);
      if (name.startsWith('AWS::')) return this.pseudoParameter(name, expression);
      const dot = name.indexOf('.');
      if (dot > 0) return this.attribute(name.slice(0, dot), name.slice(dot + 1), expression);
      return this.ref(name, expression);
    });
  }

  private pseudoParameter(name: string, expression: unknown): string {
    // a stack of a run that spans environments resolves to its own account and Region (./stack-environments.ts)
    const environment = this.names.environmentOf?.(this.stackName);
    const region = environment?.region ?? this.names.region;
    const accountId = environment?.account ?? this.names.accountId;
    switch (name) {
      case 'AWS::Region':
        return region;
      case 'AWS::AccountId':
        return accountId;
      case 'AWS::Partition':
        return partitionOf(region);
      case 'AWS::URLSuffix':
        return region.startsWith('cn-') ? 'amazonaws.com.cn' : 'amazonaws.com';
      case 'AWS::StackName':
        return this.stackName;
      case 'AWS::StackId':
        return `arn:${partitionOf(region)}:cloudformation:${region}:${accountId}:stack/${this.stackName}/00000000-0000-0000-0000-000000000000`;
      case 'AWS::NoValue':
        return this.fail(expression, 'AWS::NoValue has no value: it removes the property that holds it');
      default:
        return this.fail(expression, `pseudo parameter ${name} is not supported by the simulator`);
    }
  }

  private named(found: string | undefined, expression: unknown, reason: string): string {
    return found ?? this.fail(expression, reason);
  }

  private fail(expression: unknown, reason: string): never {
    const part = expression === this.whole ? '' : ` in ${describeExpression(expression)}`;
    throw new UnresolvableValueError(this.where, this.whole, `${reason}${part}`);
  }
}

/** The partition of a region: `aws-cn` for China, `aws-us-gov` for GovCloud, `aws` otherwise. */
function partitionOf(region: string): string {
  if (region.startsWith('cn-')) return 'aws-cn';
  if (region.startsWith('us-gov-')) return 'aws-us-gov';
  return 'aws';
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof CrossStackValue);
}
