import { describe, expect, test } from 'vitest';
import type { ProducerConfig } from '../../lambda/config';
import { MAX_STAGED_WRITES, TransactionBuilder } from '../../lambda/consumer/transaction-builder';
import { EventTooLargeError, InvalidEventError, TransactionLimitError } from '../../lambda/errors';
import { derivedEventId } from '../../lambda/fingerprint';
import { emittedEventPreparer } from '../../lambda/producer/emitted-events';
import { Outbox } from '../../lambda/producer/outbox';
import { localClient } from '../support/dynamodb-client';

const outboxConfig: ProducerConfig = {
  outboxTableName: 'Outbox',
  partitionKeyName: 'pk',
  sortKeyName: 'sk',
  eventRetentionSeconds: 3600,
  eventSource: 'billing',
};
const now = new Date('2024-05-01T12:00:00.000Z');
/** An outbox that is never sent to: emit only builds Puts. */
const outbox = new Outbox({ client: localClient(), config: outboxConfig, now: () => now });

function emittingBuilder(consumedEventId = 'consumed-1'): TransactionBuilder {
  return new TransactionBuilder({ prepareEvent: emittedEventPreparer({ outbox, subscriberName: 'billing', consumedEventId }) });
}

describe('TransactionBuilder', () => {
  test('stages each kind of write, in order, DocumentClient style', () => {
    const tx = new TransactionBuilder();
    tx.put({ TableName: 'T', Item: { pk: 'a' } });
    tx.update({ TableName: 'T', Key: { pk: 'b' }, UpdateExpression: 'ADD n :one', ExpressionAttributeValues: { ':one': 1 } });
    tx.delete({ TableName: 'T', Key: { pk: 'c' } });
    tx.conditionCheck({ TableName: 'T', Key: { pk: 'd' }, ConditionExpression: 'attribute_exists(pk)' });
    expect(tx.items.map((action) => Object.keys(action)[0])).toEqual(['Put', 'Update', 'Delete', 'ConditionCheck']);
    expect(tx.items[1]?.Update?.Key).toEqual({ pk: 'b' });
  });

  test('fails at the write that leaves no room for the inbox record', () => {
    const tx = new TransactionBuilder();
    for (let i = 0; i < MAX_STAGED_WRITES; i++) tx.delete({ TableName: 'T', Key: { pk: String(i) } });
    expect(MAX_STAGED_WRITES).toBe(99);
    expect(() => tx.delete({ TableName: 'T', Key: { pk: 'one-too-many' } })).toThrow(TransactionLimitError);
    expect(() => tx.delete({ TableName: 'T', Key: { pk: 'one-too-many' } })).toThrow(
      'a handler may stage at most 99 writes and events together (DynamoDB allows 100 actions per transaction and the inbox record takes one), but it staged write number 100 (99 writes and 0 events before it)',
    );
    expect(tx.items).toHaveLength(99);
  });

  test('emit stages the outbox Put of an event with an id derived from subscriber, consumed event and position', () => {
    const tx = emittingBuilder('consumed-1');
    const first = tx.emit({ type: 'InvoiceCreated', data: { n: 1 } });
    const second = tx.emit({ type: 'InvoiceSent', data: { n: 2 } });
    expect([first.id, second.id]).toEqual([derivedEventId('billing', 'consumed-1', 0), derivedEventId('billing', 'consumed-1', 1)]);
    expect(first).toMatchObject({ source: 'billing', type: 'InvoiceCreated', time: '2024-05-01T12:00:00.000Z', data: { n: 1 } });
    expect(tx.items).toEqual([]);
    expect(tx.events.map((event) => event.action.Put?.Item?.pk)).toEqual([`OUTBOX#${first.id}`, `OUTBOX#${second.id}`]);
    // the same message processed again names its events the same
    expect(emittingBuilder('consumed-1').emit({ type: 'InvoiceCreated', data: { n: 1 } }).id).toBe(first.id);
    expect(emittingBuilder('consumed-2').emit({ type: 'InvoiceCreated', data: { n: 1 } }).id).not.toBe(first.id);
  });

  test('emit keeps an id the handler chose', () => {
    expect(emittingBuilder().emit({ type: 'T', data: 1, id: 'mine' }).id).toBe('mine');
  });

  test('fails at emit when the subscriber has no outbox, saying how to deploy it', () => {
    const tx = new TransactionBuilder();
    expect(() => tx.emit({ type: 'InvoiceCreated', data: {} })).toThrow(InvalidEventError);
    expect(() => tx.emit({ type: 'InvoiceCreated', data: {} })).toThrow(
      /cannot emit event 'InvoiceCreated': this subscriber has no outbox\. Deploy the subscriber with `publishesEvents: true`/,
    );
    const named = new TransactionBuilder({ prepareEvent: emittedEventPreparer({ subscriberName: 'billing', consumedEventId: 'c' }) });
    expect(() => named.emit({ type: 'T', data: {} })).toThrow(/subscriber 'billing' has no outbox/);
  });

  test('fails at emit on an invalid or too large event', () => {
    const tx = emittingBuilder();
    expect(() => tx.emit({ type: '', data: {} })).toThrow(InvalidEventError);
    expect(() => tx.emit({ type: 'Huge', data: 'x'.repeat(300_000) })).toThrow(EventTooLargeError);
    expect(tx.events).toEqual([]);
  });

  test('counts emitted events against the 99 actions beside the inbox record', () => {
    const tx = emittingBuilder();
    for (let i = 0; i < 90; i++) tx.delete({ TableName: 'T', Key: { pk: String(i) } });
    for (let i = 0; i < 9; i++) tx.emit({ type: 'T', data: i });
    expect(() => tx.emit({ type: 'T', data: 'one too many' })).toThrow(
      'a handler may stage at most 99 writes and events together (DynamoDB allows 100 actions per transaction and the inbox record takes one), but it staged event number 100 (90 writes and 9 events before it)',
    );
    expect(() => tx.put({ TableName: 'T', Item: { pk: 'x' } })).toThrow(/staged write number 100/);
  });
});
