/** The retry policies of the pipe and of SNS → SQS: what each service does once delivery attempts keep failing. */
import { describe, expect, test } from 'vitest';
import { ASSUMED_PIPE_BACKOFF, pipeRetryOutcome, SNS_SQS_DELIVERY_ATTEMPTS, snsDelivers, STREAM_RETENTION_SECONDS } from '../../../simulator/aws/retry-policies';

const FINITE = { maximumRetryAttempts: 10, maximumRecordAgeSeconds: 3600 };
const INFINITE = { maximumRetryAttempts: -1, maximumRecordAgeSeconds: -1 };

describe('pipeRetryOutcome', () => {
  test('publishes a record whose first attempt succeeds, with no retry', () => {
    expect(pipeRetryOutcome(0, FINITE)).toEqual({ kind: 'published', retries: 0 });
  });

  test('publishes after as many retries as attempts failed, up to MaximumRetryAttempts', () => {
    expect(pipeRetryOutcome(3, FINITE)).toEqual({ kind: 'published', retries: 3 });
    expect(pipeRetryOutcome(10, FINITE)).toEqual({ kind: 'published', retries: 10 });
  });

  test('gives up after MaximumRetryAttempts retries: the first attempt and each retry failed', () => {
    expect(pipeRetryOutcome(11, FINITE)).toEqual({ kind: 'gave-up', condition: 'RetryAttemptsExhausted', attempts: 11 });
    expect(pipeRetryOutcome(Number.POSITIVE_INFINITY, FINITE)).toEqual({ kind: 'gave-up', condition: 'RetryAttemptsExhausted', attempts: 11 });
    expect(pipeRetryOutcome(Number.POSITIVE_INFINITY, { ...FINITE, maximumRetryAttempts: 0 })).toEqual({ kind: 'gave-up', condition: 'RetryAttemptsExhausted', attempts: 1 });
  });

  test('with infinite retries, gives up once the record is older than MaximumRecordAgeInSeconds', () => {
    const outcome = pipeRetryOutcome(Number.POSITIVE_INFINITY, { maximumRetryAttempts: -1, maximumRecordAgeSeconds: 60 });
    expect(outcome).toMatchObject({ kind: 'gave-up', condition: 'RecordAgeExceeded' });
    // 1 + 2 + 4 + 8 + 16 + 32 = 63 s > 60 s: the 6th retry is past the age
    expect(outcome).toEqual({ kind: 'gave-up', condition: 'RecordAgeExceeded', attempts: 6 });
  });

  test('does not attempt a record already older than MaximumRecordAgeInSeconds', () => {
    expect(pipeRetryOutcome(0, { maximumRetryAttempts: 10, maximumRecordAgeSeconds: 60 }, 61)).toEqual({ kind: 'gave-up', condition: 'RecordAgeExceeded', attempts: 0 });
  });

  test('with both infinite, retries until the stream trims the record after 24 hours: lost', () => {
    const outcome = pipeRetryOutcome(Number.POSITIVE_INFINITY, INFINITE);
    expect(outcome.kind).toBe('trimmed');
    // the retries of 24 hours at the assumed backoff: a few seconds at first, then one every maxSeconds
    const attempts = (outcome as { attempts: number }).attempts;
    expect(attempts).toBeGreaterThan(STREAM_RETENTION_SECONDS / ASSUMED_PIPE_BACKOFF.maxSeconds - 10);
    expect(attempts).toBeLessThan(STREAM_RETENTION_SECONDS / ASSUMED_PIPE_BACKOFF.maxSeconds + 10);
  });

  test('a maximum record age beyond the stream retention still loses the record at the trim', () => {
    expect(pipeRetryOutcome(Number.POSITIVE_INFINITY, { maximumRetryAttempts: -1, maximumRecordAgeSeconds: 604_800 }).kind).toBe('trimmed');
  });

  test('infinite settings publish any record whose failures end', () => {
    expect(pipeRetryOutcome(500, INFINITE)).toEqual({ kind: 'published', retries: 500 });
  });
});

describe('snsDelivers', () => {
  test('delivers unless every attempt of the SQS delivery policy failed', () => {
    expect(snsDelivers(0)).toBe(true);
    expect(snsDelivers(SNS_SQS_DELIVERY_ATTEMPTS - 1)).toBe(true);
    expect(snsDelivers(SNS_SQS_DELIVERY_ATTEMPTS)).toBe(false);
    expect(snsDelivers(Number.POSITIVE_INFINITY)).toBe(false);
  });
});
