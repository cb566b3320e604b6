import { Duration, Token } from 'aws-cdk-lib';
import { validationError } from './validation-error';

/**
 * Token-aware checks for construct props. Each error names the prop, the bound and the value given, e.g.
 * `Subscriber 'Billing': maxReceiveCount must be 1 or more, but 0 was provided`.
 * A value that is a CDK token (not known until deployment) is not checked.
 */

/** Fails unless `value` lies within `[min, max]` (either bound may be omitted). */
export function validateNumberInRange(
  owner: string,
  prop: string,
  value: number | undefined,
  bounds: { min?: number; max?: number; integer?: boolean },
): void {
  if (value === undefined || Token.isUnresolved(value)) return;
  if (Number.isNaN(value)) {
    throw validationError(`${owner}: ${prop} must be a number, but NaN was provided`);
  }
  if (bounds.integer && !Number.isInteger(value)) {
    throw validationError(`${owner}: ${prop} must be a whole number, but ${value} was provided`);
  }
  if (bounds.min !== undefined && value < bounds.min) {
    throw validationError(`${owner}: ${prop} must be ${bounds.min} or more, but ${value} was provided`);
  }
  if (bounds.max !== undefined && value > bounds.max) {
    throw validationError(`${owner}: ${prop} must be ${bounds.max} or less, but ${value} was provided`);
  }
}

/** Fails unless `value` lies within `[min, max]`, comparing in seconds and reporting in the unit given. */
export function validateDurationInRange(
  owner: string,
  prop: string,
  value: Duration | undefined,
  bounds: { min?: Duration; max?: Duration },
): void {
  if (value === undefined || value.isUnresolved()) return;
  const seconds = value.toSeconds({ integral: false });
  if (bounds.min !== undefined && seconds < bounds.min.toSeconds({ integral: false })) {
    throw validationError(`${owner}: ${prop} must be ${bounds.min.toHumanString()} or more, but ${value.toHumanString()} was provided`);
  }
  if (bounds.max !== undefined && seconds > bounds.max.toSeconds({ integral: false })) {
    throw validationError(`${owner}: ${prop} must be ${bounds.max.toHumanString()} or less, but ${value.toHumanString()} was provided`);
  }
}

/**
 * Fails unless `value` is at least `factor` times `reference` (e.g. visibility timeout ≥ 6 × function timeout).
 * `relation` explains the bound in the message, e.g. `6 x timeout`.
 */
export function validateDurationAtLeast(
  owner: string,
  prop: string,
  value: Duration | undefined,
  minimum: Duration | undefined,
  relation: string,
): void {
  if (value === undefined || minimum === undefined || value.isUnresolved() || minimum.isUnresolved()) return;
  if (value.toSeconds({ integral: false }) < minimum.toSeconds({ integral: false })) {
    throw validationError(
      `${owner}: ${prop} must be at least ${relation} (${minimum.toHumanString()}), but ${value.toHumanString()} was provided`,
    );
  }
}

/** One term of a sum a prop must cover: the prop it comes from and its value (given or default). */
export interface DurationTerm {
  readonly prop: string;
  readonly value: Duration;
}

/**
 * Fails unless `value` (or, when it is not given, `defaultValue`) is at least the sum of `terms`, e.g. a deduplication
 * window that must outlast every retention a message can wait out. The message names every term's prop and value and the
 * sum: `deduplicationWindow must be at least a + b (1 day + 2 days = 3 days), but 2 days was provided` (or `but the
 * default of 2 days applies`). Nothing is checked when any of them is a token.
 */
export function validateDurationCoversSum(
  owner: string,
  prop: string,
  value: Duration | undefined,
  defaultValue: Duration,
  terms: readonly DurationTerm[],
): void {
  const effective = value ?? defaultValue;
  if (effective.isUnresolved() || terms.some((term) => term.value.isUnresolved())) return;
  const sumSeconds = terms.reduce((sum, term) => sum + term.value.toSeconds({ integral: false }), 0);
  if (effective.toSeconds({ integral: false }) < sumSeconds) {
    const names = terms.map((term) => term.prop).join(' + ');
    const values = terms.map((term) => term.value.toHumanString()).join(' + ');
    const given = value === undefined ? `the default of ${defaultValue.toHumanString()} applies` : `${value.toHumanString()} was provided`;
    throw validationError(`${owner}: ${prop} must be at least ${names} (${values} = ${Duration.seconds(sumSeconds).toHumanString()}), but ${given}`);
  }
}

/**
 * Fails unless `value` is strictly less than `bound` (e.g. a lease shorter than the queue's visibility timeout).
 * `relation` names the bound in the message, e.g. `visibilityTimeout`; `why` (optional) says why it matters.
 */
export function validateDurationLessThan(
  owner: string,
  prop: string,
  value: Duration | undefined,
  bound: Duration | undefined,
  relation: string,
  why?: string,
): void {
  if (value === undefined || bound === undefined || value.isUnresolved() || bound.isUnresolved()) return;
  if (value.toSeconds({ integral: false }) >= bound.toSeconds({ integral: false })) {
    const reason = why === undefined ? '' : ` (${why})`;
    throw validationError(
      `${owner}: ${prop} must be less than ${relation} (${bound.toHumanString()})${reason}, but ${value.toHumanString()} was provided`,
    );
  }
}

/** Fails unless `value` is a whole number of seconds (what the runtime's `*_SECONDS` variables carry). */
export function validateWholeSeconds(owner: string, prop: string, value: Duration | undefined): void {
  if (value === undefined || value.isUnresolved()) return;
  if (!Number.isInteger(value.toSeconds({ integral: false }))) {
    throw validationError(`${owner}: ${prop} must be a whole number of seconds, but ${value.toHumanString()} was provided`);
  }
}

/** Fails unless a string matches `pattern`; `description` says what is allowed. */
export function validateStringPattern(
  owner: string,
  prop: string,
  value: string | undefined,
  pattern: RegExp,
  description: string,
): void {
  if (value === undefined || Token.isUnresolved(value)) return;
  if (!pattern.test(value)) {
    throw validationError(`${owner}: ${prop} must be ${description}, but '${value}' was provided`);
  }
}
