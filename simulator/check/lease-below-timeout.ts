/**
 * A warning, not a violation: a lease or multi-step subscriber whose lease, as its runtime wrote it on the processing
 * records, is shorter than its function's timeout. Lambda lets an invocation run until its timeout; a duplicate of its
 * message delivered meanwhile (SNS and SQS deliver at least once; a standard queue may hand out a copy while the first
 * is in flight) finds the lease over once it expired and takes it (`onExpiredLease: 'retry'`: the effect runs twice,
 * the first run still working) or blocks the message for an operator (`'block'`). The construct's default lease is the
 * function's timeout, and it warns at synth when `leaseDuration` is set below it; a lease set in the handler's code
 * (`createLeaseConsumer({ config: { leaseDurationSeconds } })`) or in the function's environment bypasses that warning,
 * and this tells it. A warning because the run cannot tell whether a handle outlasts the lease (the run's clock does not
 * move inside an invocation, docs/SIMULATOR.md "Processing time"), and a handle that finishes well within its lease
 * (reading `context.leaseExpiresAtEpochMilliseconds`) is correct: the construct's own rule says "unless you mean this".
 */
import { ENV, PROCESSING_MODE } from '../../lambda/contract/environment';

/** A lease written shorter than its function's timeout (see the module comment), as `--json` writes it in `warnings`. */
export interface LeaseBelowTimeoutWarning {
  readonly kind: 'lease-below-timeout';
  readonly subscriber: string;
  /**
   * The lease the runtime wrote, in seconds, named as it was set: `leaseDurationSeconds` (the handler's config) when it
   * is not the environment's, else `IEF_LEASE_DURATION_SECONDS`.
   */
  readonly setting: { readonly name: string; readonly value: number };
  /** The function's `Timeout`, in seconds: the least the lease must be. */
  readonly functionTimeoutSeconds: number;
  /** The change to make, in a sentence. */
  readonly fix: string;
}

/** A warning of the run: what it saw that is no violation of this run, but is one deployed under timing it does not simulate. */
export type RunWarning = LeaseBelowTimeoutWarning;

/** What the warning reads of a subscriber. */
export interface LeaseTimeoutFacts {
  readonly subscriber: string;
  /** Its consumer's environment, overrides included. */
  readonly environment: Readonly<Record<string, string>>;
  /** Its function's timeout, in seconds. */
  readonly functionTimeoutSeconds: number;
  /** The longest lease its runtime wrote on a processing record in the run, in seconds. @default none: the run saw no lease written, nothing is told */
  readonly writtenLeaseSeconds?: number;
}

/** The change a lease below the function's timeout asks for. */
export const LEASE_BELOW_TIMEOUT_FIX =
  "set the lease to at least the function's timeout (remove the override: the construct's default lease is the timeout), so no duplicate delivery takes the lease over, or blocks the message, while an invocation still works";

/** The warning of a subscriber whose written lease is shorter than its function's timeout; undefined otherwise. */
export function leaseBelowTimeout(facts: LeaseTimeoutFacts): LeaseBelowTimeoutWarning | undefined {
  const mode = facts.environment[ENV.PROCESSING_MODE];
  if (mode !== PROCESSING_MODE.LEASE && mode !== PROCESSING_MODE.MULTI_STEP) return undefined;
  const written = facts.writtenLeaseSeconds;
  if (written === undefined || written >= facts.functionTimeoutSeconds) return undefined;
  const name = written === Number(facts.environment[ENV.LEASE_DURATION_SECONDS]) ? ENV.LEASE_DURATION_SECONDS : 'leaseDurationSeconds';
  return { kind: 'lease-below-timeout', subscriber: facts.subscriber, setting: { name, value: written }, functionTimeoutSeconds: facts.functionTimeoutSeconds, fix: LEASE_BELOW_TIMEOUT_FIX };
}

/** The report's line of a warning. */
export function warningText(warning: RunWarning): string {
  const { subscriber, setting, functionTimeoutSeconds, fix } = warning;
  const where = setting.name === ENV.LEASE_DURATION_SECONDS ? `${setting.name} in its function's environment` : `${setting.name} set in its handler's config`;
  return (
    `warning: ${subscriber}: its lease (${setting.value} s, ${where}) is shorter than its function's timeout (${functionTimeoutSeconds} s): ` +
    `deployed, an invocation still working after ${setting.value} s loses its lease to a duplicate delivery, which takes it over and runs the effect again ` +
    `(onExpiredLease 'retry') or blocks the message ('block'); this run cannot show it, as its clock does not move inside an invocation: ${fix}`
  );
}
