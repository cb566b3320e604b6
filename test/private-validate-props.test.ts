import { Duration, Lazy } from 'aws-cdk-lib';
import { describe, expect, test } from 'vitest';
import {
  validateDurationAtLeast,
  validateDurationCoversSum,
  validateDurationInRange,
  validateDurationLessThan,
  validateNumberInRange,
  validateStringPattern,
  validateWholeSeconds,
} from '../lib/private/validate-props';

describe('validateNumberInRange', () => {
  test('fails below the minimum, naming prop, bound and value', () => {
    expect(() => validateNumberInRange("Subscriber 'Billing'", 'maxReceiveCount', 0, { min: 1 })).toThrow(
      "Subscriber 'Billing': maxReceiveCount must be 1 or more, but 0 was provided",
    );
  });
  test('fails above the maximum', () => {
    expect(() => validateNumberInRange('X', 'batchSize', 11, { min: 1, max: 10 })).toThrow(/batchSize must be 10 or less, but 11 was provided/);
  });
  test('fails on a fraction when a whole number is required', () => {
    expect(() => validateNumberInRange('X', 'batchSize', 1.5, { integer: true })).toThrow(/must be a whole number, but 1.5/);
  });
  test('accepts the bounds themselves and skips tokens', () => {
    expect(() => validateNumberInRange('X', 'n', 1, { min: 1, max: 10 })).not.toThrow();
    expect(() => validateNumberInRange('X', 'n', 10, { min: 1, max: 10 })).not.toThrow();
    const token = Lazy.number({ produce: () => 0 });
    expect(() => validateNumberInRange('X', 'n', token, { min: 1 })).not.toThrow();
  });
});

describe('validateDurationInRange', () => {
  test('fails above the maximum in human units', () => {
    expect(() => validateDurationInRange('X', 'maximumRecordAge', Duration.hours(25), { max: Duration.hours(23) })).toThrow(
      'X: maximumRecordAge must be 23 hours or less, but 1 day 1 hour was provided',
    );
  });
  test('fails below the minimum', () => {
    expect(() => validateDurationInRange('X', 'd', Duration.seconds(30), { min: Duration.minutes(1) })).toThrow(
      /must be 1 minute or more, but 30 seconds was provided/,
    );
  });
});

describe('validateDurationAtLeast', () => {
  test('fails when the value is below the relation', () => {
    expect(() =>
      validateDurationAtLeast('X', 'visibilityTimeout', Duration.seconds(60), Duration.seconds(180), '6 x timeout'),
    ).toThrow('X: visibilityTimeout must be at least 6 x timeout (3 minutes), but 1 minute was provided');
  });
  test('accepts equality', () => {
    expect(() => validateDurationAtLeast('X', 'v', Duration.seconds(180), Duration.minutes(3), 'r')).not.toThrow();
  });
});

describe('validateDurationCoversSum', () => {
  const terms = [
    { prop: 'a', value: Duration.days(1) },
    { prop: 'b', value: Duration.hours(36) },
  ];
  test('fails below the sum, naming every term, its value, the sum and the value given', () => {
    expect(() => validateDurationCoversSum('X', 'window', Duration.days(2), Duration.days(30), terms)).toThrow(
      'X: window must be at least a + b (1 day + 1 day 12 hours = 2 days 12 hours), but 2 days was provided',
    );
  });
  test('checks the default when no value is given, and says so', () => {
    expect(() => validateDurationCoversSum('X', 'window', undefined, Duration.days(2), terms)).toThrow(
      'X: window must be at least a + b (1 day + 1 day 12 hours = 2 days 12 hours), but the default of 2 days applies',
    );
  });
  test('accepts the sum itself and more', () => {
    expect(() => validateDurationCoversSum('X', 'window', Duration.hours(60), Duration.days(1), terms)).not.toThrow();
    expect(() => validateDurationCoversSum('X', 'window', undefined, Duration.days(3), terms)).not.toThrow();
  });
  test('skips tokens, in the value or in a term', () => {
    const token = Duration.seconds(Lazy.number({ produce: () => 1 }));
    expect(() => validateDurationCoversSum('X', 'window', token, Duration.days(1), terms)).not.toThrow();
    expect(() => validateDurationCoversSum('X', 'window', Duration.seconds(1), Duration.days(1), [...terms, { prop: 'c', value: token }])).not.toThrow();
  });
});

describe('validateDurationLessThan', () => {
  test('fails on equality, naming the bound, the reason and the value', () => {
    expect(() =>
      validateDurationLessThan('X', 'leaseDuration', Duration.minutes(3), Duration.seconds(180), 'visibilityTimeout', 'so it expires'),
    ).toThrow('X: leaseDuration must be less than visibilityTimeout (3 minutes) (so it expires), but 3 minutes was provided');
  });
  test('fails above the bound without a reason', () => {
    expect(() => validateDurationLessThan('X', 'd', Duration.seconds(61), Duration.minutes(1), 'b')).toThrow(
      'X: d must be less than b (1 minute), but 1 minute 1 second was provided',
    );
  });
  test('accepts a smaller value and skips tokens and undefined', () => {
    expect(() => validateDurationLessThan('X', 'd', Duration.seconds(59), Duration.minutes(1), 'b')).not.toThrow();
    const token = Duration.seconds(Lazy.number({ produce: () => 600 }));
    expect(() => validateDurationLessThan('X', 'd', token, Duration.minutes(1), 'b')).not.toThrow();
    expect(() => validateDurationLessThan('X', 'd', Duration.hours(1), token, 'b')).not.toThrow();
    expect(() => validateDurationLessThan('X', 'd', undefined, Duration.minutes(1), 'b')).not.toThrow();
  });
});

describe('validateWholeSeconds', () => {
  test('fails on a fraction of a second', () => {
    expect(() => validateWholeSeconds('X', 'leaseDuration', Duration.millis(1001))).toThrow(
      'X: leaseDuration must be a whole number of seconds, but 1 second 1 milli was provided',
    );
  });
  test('accepts whole seconds, tokens and undefined', () => {
    expect(() => validateWholeSeconds('X', 'd', Duration.millis(2000))).not.toThrow();
    expect(() => validateWholeSeconds('X', 'd', Duration.seconds(Lazy.number({ produce: () => 1.5 })))).not.toThrow();
    expect(() => validateWholeSeconds('X', 'd', undefined)).not.toThrow();
  });
});

describe('validateStringPattern', () => {
  test('fails on a mismatch, quoting the value', () => {
    expect(() => validateStringPattern('X', 'subscriberName', 'a b', /^[A-Za-z0-9]+$/, 'alphanumeric')).toThrow(
      "X: subscriberName must be alphanumeric, but 'a b' was provided",
    );
  });
});
