/**
 * Reading typed property values of a template resource: CloudFormation accepts numbers and booleans as strings too
 * (`"VisibilityTimeout": "180"`), so both forms are read. A value that breaks the bounds the service documents is an
 * {@link InvalidTemplateValueError} (the template would not deploy); a value the reader cannot evaluate (an intrinsic
 * function left after parameter substitution, such as `Fn::If`) makes the resource a {@link NotSimulatedError}.
 */
import { CrossStackValue } from './cross-stack-value';
import { describeExpression } from './intrinsics';

/** What a value reader needs to know of the resource, for its messages. */
export interface ResourceLabel {
  /** `<type> <stack>/<logical id> (<construct path>)` */
  readonly label: string;
}

/** A property value that would not deploy (out of the documented range, wrong type, unknown enum value). */
export class InvalidTemplateValueError extends Error {
  constructor(resource: ResourceLabel, property: string, value: unknown, expectation: string) {
    super(`${resource.label}: ${property} is ${describeExpression(value)}; ${expectation}`);
    this.name = 'InvalidTemplateValueError';
  }
}

/** The resource is well formed but the simulator cannot run it; the message is its line in `notSimulated`. */
export class NotSimulatedError extends Error {
  constructor(resource: ResourceLabel, reason: string) {
    super(`${resource.label}: ${reason}`);
    this.name = 'NotSimulatedError';
  }
}

/** Integer bounds, inclusive, as the service documents them. */
export interface IntegerBounds {
  readonly min: number;
  readonly max: number;
}

/** True for an intrinsic function or `Ref`: an object whose one key is `Ref` or starts with `Fn::`. */
export function isIntrinsic(value: unknown): value is Record<string, unknown> {
  if (value instanceof CrossStackValue) return true;
  if (!isPlainObject(value)) return false;
  const keys = Object.keys(value);
  return keys.length === 1 && (keys[0] === 'Ref' || keys[0].startsWith('Fn::'));
}

/** True for a JSON object (not an array, not null, not a {@link CrossStackValue}). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof CrossStackValue);
}

/** Throws {@link NotSimulatedError} when `value` is an intrinsic function the reader cannot evaluate. */
export function requireLiteral(resource: ResourceLabel, property: string, value: unknown): void {
  if (isIntrinsic(value)) {
    throw new NotSimulatedError(resource, `${property} is ${describeExpression(value)}, an expression the reader does not evaluate`);
  }
}

/** An integer property within `bounds`, or `defaultValue` when absent. */
export function readInteger(resource: ResourceLabel, property: string, value: unknown, bounds: IntegerBounds, defaultValue: number): number;
/** An integer property within `bounds`, or undefined when absent. */
export function readInteger(resource: ResourceLabel, property: string, value: unknown, bounds: IntegerBounds): number | undefined;
export function readInteger(resource: ResourceLabel, property: string, value: unknown, bounds: IntegerBounds, defaultValue?: number): number | undefined {
  if (value === undefined || value === null) return defaultValue;
  requireLiteral(resource, property, value);
  const number = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : Number.NaN;
  if (!Number.isInteger(number) || number < bounds.min || number > bounds.max) {
    throw new InvalidTemplateValueError(resource, property, value, `it must be an integer from ${bounds.min} to ${bounds.max}`);
  }
  return number;
}

/** A boolean property (`true`, `false`, `"true"` or `"false"`), or `defaultValue` when absent. */
export function readBoolean(resource: ResourceLabel, property: string, value: unknown, defaultValue: boolean): boolean {
  if (value === undefined || value === null) return defaultValue;
  requireLiteral(resource, property, value);
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  throw new InvalidTemplateValueError(resource, property, value, 'it must be true or false');
}

/** A string property that must be one of `allowed`, or undefined when absent. */
export function readEnum<T extends string>(resource: ResourceLabel, property: string, value: unknown, allowed: readonly T[]): T | undefined {
  if (value === undefined || value === null) return undefined;
  requireLiteral(resource, property, value);
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  throw new InvalidTemplateValueError(resource, property, value, `it must be one of ${allowed.join(', ')}`);
}

/** A string property, or undefined when absent. */
export function readString(resource: ResourceLabel, property: string, value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  requireLiteral(resource, property, value);
  if (typeof value === 'string') return value;
  throw new InvalidTemplateValueError(resource, property, value, 'it must be a string');
}

/** A JSON object property that templates may also hold as a JSON string (`FilterPolicy`, `RedrivePolicy`). */
export function readJsonObject(resource: ResourceLabel, property: string, value: unknown): Record<string, unknown> | undefined {
  if (value === undefined || value === null) return undefined;
  requireLiteral(resource, property, value);
  let parsed: unknown = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value);
    } catch (error) {
      throw new InvalidTemplateValueError(resource, property, value, `it must be a JSON object (${(error as Error).message})`);
    }
  }
  if (!isPlainObject(parsed)) throw new InvalidTemplateValueError(resource, property, value, 'it must be a JSON object');
  return parsed;
}

/** An object property, or undefined when absent. */
export function readObject(resource: ResourceLabel, property: string, value: unknown): Record<string, unknown> | undefined {
  if (value === undefined || value === null) return undefined;
  requireLiteral(resource, property, value);
  if (isPlainObject(value)) return value;
  throw new InvalidTemplateValueError(resource, property, value, 'it must be an object');
}

/** A list property, or an empty list when absent. */
export function readList(resource: ResourceLabel, property: string, value: unknown): readonly unknown[] {
  if (value === undefined || value === null) return [];
  requireLiteral(resource, property, value);
  if (Array.isArray(value)) return value;
  throw new InvalidTemplateValueError(resource, property, value, 'it must be a list');
}
