import { Duration } from 'aws-cdk-lib';
import { validateDurationInRange, validateNumberInRange, validateStringPattern } from './validate-props';

/**
 * Bounds that more than one construct checks (a part, and `IdempotentEventFlow`, which passes the same values under
 * its own prop names so its errors name what the user wrote). Defined once here so they cannot drift apart.
 */

/** The relay's tunables, as `OutboxRelay` names them. */
export interface RelaySettingsToValidate {
  readonly batchSize?: number;
  readonly maximumRetryAttempts?: number;
  readonly maximumRecordAge?: Duration;
  readonly parallelizationFactor?: number;
}

/**
 * Checks the relay's tunables: batch size 1-10 (SNS is a batch target of at most 10), 0-185 retries, a record age of
 * 1 minute to 23 hours (below the stream's 24-hour retention), parallelization 1-10.
 *
 * @param propName maps a setting to the prop name the user wrote (e.g. `batchSize` -> `relayBatchSize`)
 */
export function validateRelaySettings(
  owner: string,
  settings: RelaySettingsToValidate,
  propName: (setting: keyof RelaySettingsToValidate) => string = (setting) => setting,
): void {
  validateNumberInRange(owner, propName('batchSize'), settings.batchSize, { min: 1, max: 10, integer: true });
  validateNumberInRange(owner, propName('maximumRetryAttempts'), settings.maximumRetryAttempts, { min: 0, max: 185, integer: true });
  validateDurationInRange(owner, propName('maximumRecordAge'), settings.maximumRecordAge, {
    min: Duration.minutes(1),
    max: Duration.hours(23),
  });
  validateNumberInRange(owner, propName('parallelizationFactor'), settings.parallelizationFactor, { min: 1, max: 10, integer: true });
}

/** Checks the threshold of a subscriber's `OldestMessageAge` alarm: 1 minute to 14 days (the SQS retention maximum). */
export function validateMaxMessageAge(owner: string, maxMessageAge: Duration | undefined): void {
  validateDurationInRange(owner, 'maxMessageAge', maxMessageAge, { min: Duration.minutes(1), max: Duration.days(14) });
}

/** Checks the p99 end-to-end latency at which a subscriber's `EndToEndLatency` alarm fires: 1 second to 14 days. */
export function validateMaxEndToEndLatency(owner: string, maxEndToEndLatency: Duration | undefined): void {
  validateDurationInRange(owner, 'maxEndToEndLatency', maxEndToEndLatency, { min: Duration.seconds(1), max: Duration.days(14) });
}

/** A CloudEvents `source` is a non-empty URI-reference; whitespace is never valid in one. */
const EVENT_SOURCE_PATTERN = /^\S+$/u;

/** Checks a CloudEvents `source` (of an outbox table, or of a subscriber that publishes events). */
export function validateEventSource(owner: string, prop: string, eventSource: string | undefined): void {
  validateStringPattern(owner, prop, eventSource, EVENT_SOURCE_PATTERN, 'a non-empty URI-reference without whitespace');
}
