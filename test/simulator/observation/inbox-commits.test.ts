import { marshall } from '@aws-sdk/util-dynamodb';
import { describe, expect, it } from 'vitest';
import { INBOX_ITEM, PROCESSING_RECORD, recordKey, TABLE_SCHEMA } from '../../../lambda/contract/wire-format';
import { committedInboxEvents } from '../../../simulator/observation/inbox-commits';

const inboxRecord = (subscriber: string, eventId: string, extra: Record<string, string> = {}) =>
  marshall({ [TABLE_SCHEMA.PARTITION_KEY]: recordKey(subscriber, eventId), [INBOX_ITEM.EVENT_ID_ATTRIBUTE]: eventId, [INBOX_ITEM.SUBSCRIBER_ATTRIBUTE]: subscriber, ...extra });
const body = (request: unknown) => Buffer.from(JSON.stringify(request));

describe('committedInboxEvents', () => {
  it("names the events whose inbox records a transaction or a Put wrote, in the request's order; business items, fences and processing records are not inbox records", () => {
    const transaction = body({
      TransactItems: [
        { Put: { TableName: 'Shipments', Item: marshall({ pk: 'SHIPMENT#e2', eventId: 'e2' }) } },
        { Put: { TableName: 'Inbox', Item: inboxRecord('Shipping', 'e2') } },
        { Put: { TableName: 'Inbox', Item: marshall({ pk: 'Shipping#fence#order-1', appliedEventId: 'e2', subscriber: 'Shipping' }) } },
        { Update: { TableName: 'Inbox', Key: marshall({ pk: recordKey('Shipping', 'e9') }) } },
        { Put: { TableName: 'Inbox', Item: inboxRecord('Shipping', 'e1') } },
      ],
    });
    expect(committedInboxEvents('TransactWriteItems', transaction)).toEqual(['e2', 'e1']);
    expect(committedInboxEvents('PutItem', body({ TableName: 'Inbox', Item: inboxRecord('Billing', 'e3') }))).toEqual(['e3']);
    expect(committedInboxEvents('PutItem', body({ TableName: 'Inbox', Item: inboxRecord('Billing', 'e4', { [PROCESSING_RECORD.RECORD_TYPE_ATTRIBUTE]: PROCESSING_RECORD.RECORD_TYPE_VALUE }) }))).toEqual([]);
  });

  it('reads nothing from other operations or a body that is not JSON', () => {
    expect(committedInboxEvents('GetItem', body({ Key: inboxRecord('Shipping', 'e1') }))).toEqual([]);
    expect(committedInboxEvents('PutItem', Buffer.from('not json'))).toEqual([]);
  });
});
