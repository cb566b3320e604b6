import type { _Record } from '@aws-sdk/client-dynamodb-streams';
import { describe, expect, test } from 'vitest';
import { toDynamoDbJson, toPipeStreamEvent } from '../../../simulator/aws/stream-record';
import { eventIdOf } from '../../../simulator/aws/message-ids';

const CONTEXT = { region: 'eu-west-1', streamArn: 'arn:aws:dynamodb:ddblocal:000000000000:table/Outbox/stream/2024-01-01T00:00:00.000' };

describe('toPipeStreamEvent', () => {
  test('an INSERT as the pipe receives it: region and source ARN of the pipe, creation time in epoch seconds', () => {
    const record: _Record = {
      eventID: 'e-1',
      eventName: 'INSERT',
      eventVersion: '1.1',
      eventSource: 'aws:dynamodb',
      awsRegion: 'ddblocal',
      dynamodb: {
        ApproximateCreationDateTime: new Date('2024-05-06T07:08:09.999Z'),
        Keys: { pk: { S: 'k' } },
        NewImage: { pk: { S: 'k' }, n: { N: '1.5' } },
        SequenceNumber: '000000000000000000007',
        SizeBytes: 12,
        StreamViewType: 'NEW_IMAGE',
      },
    };
    expect(JSON.stringify(toPipeStreamEvent(record, CONTEXT))).toBe(
      JSON.stringify({
        eventID: 'e-1',
        eventName: 'INSERT',
        eventVersion: '1.1',
        eventSource: 'aws:dynamodb',
        awsRegion: 'eu-west-1',
        dynamodb: {
          ApproximateCreationDateTime: Date.parse('2024-05-06T07:08:09Z') / 1000,
          Keys: { pk: { S: 'k' } },
          NewImage: { pk: { S: 'k' }, n: { N: '1.5' } },
          SequenceNumber: '000000000000000000007',
          SizeBytes: 12,
          StreamViewType: 'NEW_IMAGE',
        },
        eventSourceARN: CONTEXT.streamArn,
      }),
    );
  });

  test('a MODIFY keeps both images; absent images are absent keys', () => {
    const event = toPipeStreamEvent(
      { eventID: 'm', eventName: 'MODIFY', dynamodb: { Keys: { pk: { S: 'k' } }, OldImage: { v: { N: '1' } }, NewImage: { v: { N: '2' } }, SequenceNumber: '2' } },
      CONTEXT,
    );
    expect(event.dynamodb).toEqual({ Keys: { pk: { S: 'k' } }, NewImage: { v: { N: '2' } }, OldImage: { v: { N: '1' } }, SequenceNumber: '2' });
    expect(Object.keys(toPipeStreamEvent({ eventID: 'r', eventName: 'REMOVE', dynamodb: { Keys: { pk: { S: 'k' } }, SequenceNumber: '3' } }, CONTEXT).dynamodb)).toEqual([
      'Keys',
      'SequenceNumber',
    ]);
  });

  test('a deletion by Time to Live (DynamoDB Local names it UNKNOWN_TO_SDK_VERSION) becomes a REMOVE by the TTL service identity', () => {
    const event = toPipeStreamEvent(
      { eventID: 't', eventName: 'UNKNOWN_TO_SDK_VERSION' as never, eventVersion: '1.1', dynamodb: { Keys: { pk: { S: 'k' } }, SequenceNumber: '9' } },
      CONTEXT,
    );
    expect(event.eventName).toBe('REMOVE');
    expect(event.userIdentity).toEqual({ type: 'Service', principalId: 'dynamodb.amazonaws.com' });
  });

  test('a user identity sent with the record is kept, in the lower-case shape of the event', () => {
    const event = toPipeStreamEvent(
      { eventID: 't', eventName: 'REMOVE', userIdentity: { Type: 'Service', PrincipalId: 'dynamodb.amazonaws.com' }, dynamodb: { SequenceNumber: '9' } },
      CONTEXT,
    );
    expect(event.userIdentity).toEqual({ type: 'Service', principalId: 'dynamodb.amazonaws.com' });
  });

  test('a record without an eventID or sequence number is refused, naming the stream', () => {
    expect(() => toPipeStreamEvent({ eventName: 'INSERT', dynamodb: {} }, CONTEXT)).toThrow(`a stream record of ${CONTEXT.streamArn} has no eventID or SequenceNumber`);
  });
});

describe('toDynamoDbJson', () => {
  test('every attribute type, nested, back in DynamoDB JSON with binary as base64', () => {
    expect(
      toDynamoDbJson({
        M: {
          s: { S: 'x' },
          n: { N: '1' },
          b: { B: new Uint8Array([0, 255]) },
          ss: { SS: ['a', 'b'] },
          ns: { NS: ['1', '2'] },
          bs: { BS: [new Uint8Array([1]), new Uint8Array([2, 3])] },
          l: { L: [{ NULL: true }, { BOOL: false }] },
        },
      }),
    ).toEqual({
      M: {
        s: { S: 'x' },
        n: { N: '1' },
        b: { B: 'AP8=' },
        ss: { SS: ['a', 'b'] },
        ns: { NS: ['1', '2'] },
        bs: { BS: ['AQ==', 'AgM='] },
        l: { L: [{ NULL: true }, { BOOL: false }] },
      },
    });
  });

  test('a binary value that is a view into a larger buffer is encoded from its own bytes only', () => {
    const buffer = new Uint8Array([9, 9, 1, 2, 9]);
    expect(toDynamoDbJson({ B: buffer.subarray(2, 4) })).toEqual({ B: Buffer.from([1, 2]).toString('base64') });
  });
});

describe('eventIdOf on what a relay renders', () => {
  test('is the string id of a JSON object message, undefined otherwise', () => {
    expect(eventIdOf('{"id":"evt-1","type":"X"}')).toBe('evt-1');
    expect(eventIdOf('{"id":7}')).toBeUndefined();
    expect(eventIdOf('["evt-1"]')).toBeUndefined();
    expect(eventIdOf('"evt-1"')).toBeUndefined();
    expect(eventIdOf('not json')).toBeUndefined();
  });

  test('reads the id of an envelope the input template rendered as a JSON string', () => {
    expect(eventIdOf(JSON.stringify('{"id":"evt-2","type":"X"}'))).toBe('evt-2');
  });
});
