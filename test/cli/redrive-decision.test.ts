import { describe, expect, test } from 'vitest';
import { deadLetterView } from '../../operator/cli/dead-letters/dead-letter-view';
import type { QueueMessage } from '../../operator/cli/dead-letters/queue-messages';
import { decideRedrive, type RecordLookup, type RedriveRules } from '../../operator/cli/dead-letters/redrive-decision';

const NOW = Date.parse('2024-06-01T00:00:00.000Z');
const DAY_MS = 86_400_000;
const RETENTION_SECONDS = 4 * 86_400;
const RULES: RedriveRules = {
  deduplicationWindowSeconds: 30 * 86_400,
  safetyMarginSeconds: 3600,
  nowEpochMilliseconds: NOW,
  allowExpired: false,
  destination: { queueUrl: 'http://queue', retentionSeconds: RETENTION_SECONDS, known: true },
};
const NOT_LOOKED_UP: RecordLookup = { kind: 'not-looked-up' };

function message(options: { time?: string; sentAt?: number; errorName?: string; body?: string }): QueueMessage {
  const body = options.body ?? JSON.stringify({ specversion: '1.0', id: 'evt-1', source: 's', type: 'T', data: {}, ...(options.time !== undefined ? { time: options.time } : {}) });
  return {
    queueUrl: 'http://q',
    messageId: 'm-1',
    receiptHandle: 'h',
    body,
    attributes: options.sentAt === undefined ? {} : { SentTimestamp: String(options.sentAt) },
    messageAttributes: options.errorName === undefined ? {} : { iefErrorName: { DataType: 'String', StringValue: options.errorName } },
  };
}

describe('decideRedrive: the deduplication window rule', () => {
  test('redrives a dead letter whose age plus the queue\'s retention plus the margin stays within the window; refuses from there on', () => {
    const windowMs = 30 * DAY_MS;
    const refusedFromAge = windowMs - RETENTION_SECONDS * 1000 - 3600_000;
    const justInside = new Date(NOW - refusedFromAge + 1).toISOString();
    const atTheLimit = new Date(NOW - refusedFromAge).toISOString();
    expect(decideRedrive(deadLetterView(message({ time: justInside }), 'queue'), NOT_LOOKED_UP, RULES)).toEqual({ redrive: true });
    expect(decideRedrive(deadLetterView(message({ time: atTheLimit }), 'queue'), NOT_LOOKED_UP, RULES)).toMatchObject({
      redrive: false,
      refusal: expect.stringMatching(/^its event is 25 days 23 hours old .* can wait up to 4 days in http:\/\/queue .*passes the deduplication window of 30 days: .*--allow-expired redrives it anyway$/),
    });
  });

  test('a longer retention refuses younger dead letters: 14 days (assumed, as the retention could not be read) leaves 15 days 23 hours of a 30-day window', () => {
    const assumed: RedriveRules = { ...RULES, destination: { queueUrl: 'http://queue', retentionSeconds: 14 * 86_400, known: false } };
    const view = (ageMs: number) => deadLetterView(message({ time: new Date(NOW - ageMs).toISOString() }), 'queue');
    expect(decideRedrive(view(15 * DAY_MS), NOT_LOOKED_UP, assumed)).toEqual({ redrive: true });
    expect(decideRedrive(view(16 * DAY_MS - 3600_000), NOT_LOOKED_UP, assumed)).toMatchObject({ redrive: false, refusal: expect.stringContaining('can wait up to 14 days (assumed: the SQS maximum) in http://queue before it is consumed (its MessageRetentionPeriod could not be read)') });
    expect(decideRedrive(view(16 * DAY_MS - 3600_000), NOT_LOOKED_UP, { ...assumed, allowExpired: true })).toMatchObject({ redrive: true, warning: expect.stringContaining('could apply it twice') });
  });

  test('counts from the earlier of the event time and the send time (a producer clock ahead of SQS does not make a dead letter younger)', () => {
    const view = deadLetterView(message({ time: new Date(NOW).toISOString(), sentAt: NOW - 31 * DAY_MS }), 'queue');
    expect(decideRedrive(view, NOT_LOOKED_UP, RULES).redrive).toBe(false);
  });

  test('refuses when no time is known at all, and a body that is no envelope', () => {
    expect(decideRedrive(deadLetterView(message({}), 'queue'), NOT_LOOKED_UP, RULES)).toMatchObject({ redrive: false, refusal: expect.stringContaining('neither its event time nor its send time is known') });
    expect(decideRedrive(deadLetterView(message({ body: 'not json', sentAt: NOW }), 'queue'), NOT_LOOKED_UP, RULES)).toMatchObject({ redrive: false, refusal: expect.stringContaining('not an event envelope') });
  });

  test('a blocked message: refused without the record, or while the record is BLOCKED; redriven once it is resolved', () => {
    const view = deadLetterView(message({ time: new Date(NOW).toISOString(), errorName: 'MessageBlockedError' }), 'queue');
    expect(decideRedrive(view, NOT_LOOKED_UP, RULES).redrive).toBe(false);
    expect(decideRedrive(view, { kind: 'found', item: { status: 'BLOCKED' } }, RULES).redrive).toBe(false);
    expect(decideRedrive(view, { kind: 'found', item: { status: 'IN_PROGRESS' } }, RULES).redrive).toBe(true);
  });

  test('relay dead letters are never redriven', () => {
    expect(decideRedrive(deadLetterView(message({ body: '{"DDBStreamBatchInfo":{}}', sentAt: NOW }), 'relay'), NOT_LOOKED_UP, RULES)).toMatchObject({ redrive: false, refusal: expect.stringContaining('replay') });
  });
});
