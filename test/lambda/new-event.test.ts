import { describe, expect, test } from 'vitest';
import type { ProducerConfig } from '../../lambda/config';
import { parseEnvelope } from '../../lambda/envelope';
import { EventTooLargeError, InvalidEventError } from '../../lambda/errors';
import { buildEnvelope } from '../../lambda/producer/new-event';
import { MAX_MESSAGE_BYTES, outboxPut } from '../../lambda/producer/outbox-item';

const now = new Date('2024-05-01T12:00:00.000Z');
const defaults = { source: 'orders', now: () => now, newId: () => 'generated-id' };
const config: ProducerConfig = {
  outboxTableName: 'Outbox',
  partitionKeyName: 'pk',
  sortKeyName: 'sk',
  timeToLiveAttributeName: 'expiresAt',
  eventRetentionSeconds: 3600,
  eventSource: 'orders',
};

describe('buildEnvelope', () => {
  test('applies the defaults and produces an envelope the consumer accepts', () => {
    const envelope = buildEnvelope({ type: 'OrderPlaced', data: { orderId: 'o1' } }, defaults);
    expect(envelope).toEqual({
      specversion: '1.0',
      id: 'generated-id',
      source: 'orders',
      type: 'OrderPlaced',
      time: '2024-05-01T12:00:00.000Z',
      datacontenttype: 'application/json',
      data: { orderId: 'o1' },
    });
    expect(parseEnvelope(JSON.stringify(envelope))).toEqual(envelope);
  });

  test('keeps the caller id, source, subject and time', () => {
    const time = new Date('2020-01-01T00:00:00Z');
    const envelope = buildEnvelope({ type: 'T', data: 1, id: 'mine', source: 'other', subject: 'o1', time }, defaults);
    expect([envelope.id, envelope.source, envelope.subject, envelope.time]).toEqual(['mine', 'other', 'o1', '2020-01-01T00:00:00.000Z']);
  });

  test.each<[string, Parameters<typeof buildEnvelope>[0], RegExp]>([
    ['an empty type', { type: '', data: 1 }, /event type must be a non-empty string, but was empty/],
    ['an empty id', { type: 'T', data: 1, id: '' }, /event id must be a non-empty string/],
    ['an empty subject', { type: 'T', data: 1, subject: '' }, /event subject must be a non-empty string/],
    ['an id cut in the middle of an emoji', { type: 'T', data: 1, id: 'order-1-😀'.slice(0, -1) }, /event id must be well-formed Unicode, but has an unpaired UTF-16 surrogate \(U\+D83D at index 8\)/],
    ['a type with a lone low surrogate', { type: 'Order\udfffPlaced', data: 1 }, /event type must be well-formed Unicode/],
    ['a subject with a lone surrogate', { type: 'T', data: 1, subject: '\ud800' }, /event subject must be well-formed Unicode/],
    ['undefined data', { type: 'T', data: undefined }, /event 'T' data must be a JSON value, but was undefined/],
    ['BigInt data', { type: 'T', data: { n: 1n } }, /event 'T' data cannot be serialized to JSON/],
    ['an invalid time', { type: 'T', data: 1, time: new Date('nope') }, /event 'T' time must be a valid Date/],
    // JSON.stringify writes a Map or a Set as {}: the stored event would silently lose its contents
    ['a Map in the data', { type: 'T', data: { lines: new Map([['a', 1]]) } }, /event 'T' data holds a Map at data\.lines, which JSON writes as \{\}: convert it .*Object\.fromEntries/],
    ['a Set in the data', { type: 'T', data: [new Set([1])] }, /event 'T' data holds a Set at data\[0\], which JSON writes as \{\}: convert it .*Array\.from/],
  ])('fails on %s', (_name, event, message) => {
    expect(() => buildEnvelope(event, defaults)).toThrow(InvalidEventError);
    expect(() => buildEnvelope(event, defaults)).toThrow(message);
  });
});

describe('an event dated in the future (issue 28, finding 2)', () => {
  test('a time more than 5 minutes ahead of the producer\'s clock fails, naming the bound and the value', () => {
    const ahead = new Date(now.getTime() + 45 * 86_400_000);
    expect(() => buildEnvelope({ type: 'OrderPlaced', data: 1, time: ahead }, defaults)).toThrow(InvalidEventError);
    expect(() => buildEnvelope({ type: 'OrderPlaced', data: 1, time: ahead }, defaults)).toThrow(
      `event 'OrderPlaced' time must be at most 5 minutes ahead of the producer's clock (${now.toISOString()}), but ${ahead.toISOString()} was given`,
    );
  });

  test('a time up to 5 minutes ahead (clock skew between hosts) and any past time are accepted', () => {
    const skewed = new Date(now.getTime() + 5 * 60_000);
    expect(buildEnvelope({ type: 'T', data: 1, time: skewed }, defaults).time).toBe(skewed.toISOString());
    expect(buildEnvelope({ type: 'T', data: 1, time: new Date(0) }, defaults).time).toBe('1970-01-01T00:00:00.000Z');
  });
});

describe('outboxPut', () => {
  test('builds the conditional Put in the wire format, TTL in epoch seconds', () => {
    const envelope = buildEnvelope({ type: 'OrderPlaced', data: { orderId: 'o1' }, id: 'e1' }, defaults);
    expect(outboxPut(envelope, config, now)).toEqual({
      Put: {
        TableName: 'Outbox',
        Item: {
          pk: 'OUTBOX#e1',
          sk: 'OUTBOX#e1',
          iefRecordType: 'OutboxEvent.v1',
          iefEnvelope: JSON.stringify(envelope),
          iefEventId: 'e1',
          iefEventType: 'OrderPlaced',
          iefWrittenAt: Date.parse('2024-05-01T12:00:00Z'),
          expiresAt: Date.parse('2024-05-01T12:00:00Z') / 1000 + 3600,
        },
        ConditionExpression: 'attribute_not_exists(#pk)',
        ExpressionAttributeNames: { '#pk': 'pk' },
      },
    });
  });

  test('uses the configured key names and omits the sort key and TTL when the table has none', () => {
    const envelope = buildEnvelope({ type: 'T', data: 1, id: 'e2' }, defaults);
    const put = outboxPut(envelope, { ...config, partitionKeyName: 'PK', sortKeyName: undefined, timeToLiveAttributeName: undefined }, now).Put;
    expect(Object.keys(put?.Item ?? {}).sort()).toEqual(['PK', 'iefEnvelope', 'iefEventId', 'iefEventType', 'iefRecordType', 'iefWrittenAt']);
    expect(put?.ExpressionAttributeNames).toEqual({ '#pk': 'PK' });
  });

  test('fails when the envelope exceeds the SNS/SQS message limit, naming limit and size', () => {
    const envelope = buildEnvelope({ type: 'T', data: 'x'.repeat(MAX_MESSAGE_BYTES), id: 'big' }, defaults);
    expect(() => outboxPut(envelope, config, now)).toThrow(EventTooLargeError);
    expect(() => outboxPut(envelope, config, now)).toThrow(/event 'big' \(T\) is too large: its envelope is 262,2\d\d bytes .* the SNS\/SQS message limit is 262,144 bytes/);
  });

  test('checks the double-encoded size, as the relay may deliver the envelope as a JSON string', () => {
    // 100,000 quotes: about 200 kB as JSON, about 400 kB once more JSON-encoded
    const envelope = buildEnvelope({ type: 'T', data: '"'.repeat(100_000), id: 'quotes' }, defaults);
    expect(Buffer.byteLength(JSON.stringify(envelope))).toBeLessThan(MAX_MESSAGE_BYTES);
    expect(() => outboxPut(envelope, config, now)).toThrow(/\(4\d\d,\d{3} bytes when delivered as a JSON string\)/);
  });

  test('fails when the outbox item exceeds the DynamoDB item limit although the envelope fits a message', () => {
    // the type is stored twice (in the envelope and as iefEventType): 205,000 bytes each is over 400 KB in total
    const envelope = buildEnvelope({ type: 'T'.repeat(205_000), data: {}, id: 'long-type' }, defaults);
    expect(Buffer.byteLength(JSON.stringify(JSON.stringify(envelope)))).toBeLessThan(MAX_MESSAGE_BYTES);
    let thrown: unknown;
    try {
      outboxPut(envelope, config, now);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(EventTooLargeError);
    expect((thrown as Error).message).toMatch(
      /^event 'long-type' \(T{100}…\) is too large: its outbox item is 410,\d{3} bytes, but the DynamoDB item size limit is 409,600 bytes \(400 KB\)/,
    );
    expect(thrown).toMatchObject({ eventId: 'long-type', limitBytes: 409_600 });
  });

  test('fails when the event id makes the outbox key longer than DynamoDB allows for a key', () => {
    const id = 'i'.repeat(1_018); // 'OUTBOX#' + 1,018 = 1,025 bytes: over the 1,024 bytes of a sort key value
    expect(() => outboxPut(buildEnvelope({ type: 'T', data: 1, id }, defaults), config, now)).toThrow(InvalidEventError);
    expect(() => outboxPut(buildEnvelope({ type: 'T', data: 1, id }, defaults), config, now)).toThrow(
      /has an id that is too long: its outbox key is 1,025 bytes, but DynamoDB allows at most 1,024 bytes for a sort key value/,
    );
    // without a sort key, the partition key's 2,048 bytes apply
    const withoutSortKey = { ...config, sortKeyName: undefined };
    expect(() => outboxPut(buildEnvelope({ type: 'T', data: 1, id }, defaults), withoutSortKey, now)).not.toThrow();
    expect(() => outboxPut(buildEnvelope({ type: 'T', data: 1, id: 'i'.repeat(2_042) }, defaults), withoutSortKey, now)).toThrow(/at most 2,048 bytes for a partition key value/);
  });
});
