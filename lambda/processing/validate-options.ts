/** Checks of the lease and multi-step factories' options, at creation. Pure: imports no AWS SDK. */
import { ConfigurationError } from '../config';
import type { LeaseProcessingOptions, ProcessingStep } from './types';

/** Most steps a multi-step consumer may have (each adds a write per message and bytes to the record). */
export const MAX_STEPS = 20;

/** What a step name may look like: it is persisted and shown to operators. */
export const STEP_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * Throws {@link ConfigurationError} when `steps` is empty, too long, or has a bad or repeated name (or one of
 * `Object.prototype`'s, such as `__proto__` or `constructor`) or no `run`.
 */
export function validateSteps(steps: readonly ProcessingStep<unknown>[] | undefined, factoryName: string): void {
  if (!Array.isArray(steps) || steps.length === 0) {
    throw new ConfigurationError(`${factoryName}: steps must list at least 1 step, but ${Array.isArray(steps) ? 'none' : 'no list'} was given`);
  }
  if (steps.length > MAX_STEPS) {
    throw new ConfigurationError(`${factoryName}: steps must list at most ${MAX_STEPS} steps, but ${steps.length} were given`);
  }
  const seen = new Set<string>();
  steps.forEach((step, index) => {
    const name: unknown = step?.name;
    if (typeof name !== 'string' || !STEP_NAME_PATTERN.test(name)) {
      throw new ConfigurationError(
        `${factoryName}: step ${index} name must be 1 to 64 characters of A-Z a-z 0-9 _ . -, but ${JSON.stringify(name) ?? String(name)} was given`,
      );
    }
    if (name in Object.prototype) {
      // the steps are kept in a map keyed by name: '__proto__' would not be stored, and 'constructor' would be found on every map
      throw new ConfigurationError(`${factoryName}: step ${index} name must not be '${name}', a name every JavaScript object already has`);
    }
    if (seen.has(name)) throw new ConfigurationError(`${factoryName}: step names must be unique, but '${name}' is given twice`);
    seen.add(name);
    if (typeof step.run !== 'function') throw new ConfigurationError(`${factoryName}: step '${name}' must have a run function`);
  });
}

/** Throws {@link ConfigurationError} on an invalid option shared by the lease and multi-step factories. */
export function validateLeaseOptions(options: LeaseProcessingOptions<unknown>, factoryName: string): void {
  if (options.onExpiredLease !== undefined && options.onExpiredLease !== 'block' && options.onExpiredLease !== 'retry') {
    throw new ConfigurationError(`${factoryName}: onExpiredLease must be 'block' or 'retry', but '${String(options.onExpiredLease)}' was given`);
  }
  const skew = options.clockSkewAllowanceSeconds;
  if (skew !== undefined && !(Number.isInteger(skew) && skew >= 0)) {
    throw new ConfigurationError(`${factoryName}: clockSkewAllowanceSeconds must be a whole number of seconds, 0 or more, but ${skew} was given`);
  }
  if (options.classifyError !== undefined && typeof options.classifyError !== 'function') {
    throw new ConfigurationError(`${factoryName}: classifyError must be a function`);
  }
  if (options.newOwnerToken !== undefined && typeof options.newOwnerToken !== 'function') {
    throw new ConfigurationError(`${factoryName}: newOwnerToken must be a function`);
  }
}
