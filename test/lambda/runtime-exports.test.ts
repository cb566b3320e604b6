/**
 * The public runtime API (`@idempotent-event-flow/runtime`, lambda/index.ts) carries every type a user needs to write
 * and test a typed handler, and every type its public classes and options name. Checked by the type checker (`npm test`
 * runs tsc first): a type missing from the index fails to compile here.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { describe, expect, expectTypeOf, test } from 'vitest';
import * as runtime from '../../lambda/index';
import type {
  AggregateChange,
  AggregateHandler,
  AggregateLocation,
  EventEnvelope,
  EventHandler,
  EventPreparer,
  HandlerContext,
  KeySchema,
  LeaseHandlerContext,
  NewEvent,
  PayloadParser,
  PreparedEvent,
  ProcessingStep,
  SqsBatchHandler,
  TransactionBuilderOptions,
} from '../../lambda/index';

interface OrderPlaced {
  readonly orderId: string;
  readonly totalCents: number;
}

describe('lambda/index.ts', () => {
  test('types a handler of every mode from the index alone', () => {
    const parse: PayloadParser<OrderPlaced> = (data) => data as OrderPlaced;
    const billing: EventHandler<OrderPlaced> = (event: EventEnvelope<OrderPlaced>, tx, context: HandlerContext) => {
      tx.update({ TableName: 'Ledger', Key: { pk: event.data.orderId }, UpdateExpression: 'ADD c :c', ExpressionAttributeValues: { ':c': event.data.totalCents } });
      context.logger.info('staged');
    };
    const stats: AggregateHandler<OrderPlaced, { count: number }> = (current, event): AggregateChange<{ count: number }> => ({
      state: { count: (current?.count ?? 0) + 1 },
      events: [{ type: 'Counted', data: { orderId: event.data.orderId } } satisfies NewEvent],
    });
    const locate = (event: EventEnvelope<OrderPlaced>): AggregateLocation => ({ tableName: 'Stats', key: { pk: event.data.orderId } });
    const step: ProcessingStep<OrderPlaced> = { name: 'send', run: async (_event, context: LeaseHandlerContext) => ({ key: context.idempotencyKey }) };
    expect([parse, billing, stats, locate, step].every((part) => part !== undefined)).toBe(true);
  });

  test('names the types its public classes and options use', () => {
    const outbox = new runtime.Outbox({
      client: new DynamoDBClient({ region: 'us-east-1' }),
      config: { outboxTableName: 'Outbox', partitionKeyName: 'pk', eventRetentionSeconds: 60, eventSource: 'test' },
    });
    const schema: KeySchema = outbox.keySchema;
    const prepareEvent: EventPreparer = (event, index) => outbox.prepare({ ...event, id: `e-${index}` });
    const options: TransactionBuilderOptions = { prepareEvent };
    const tx = new runtime.TransactionBuilder(options);
    const emitted: PreparedEvent | undefined = (tx.emit({ type: 'Emitted', data: 1 }), tx.events[0]);

    expect(schema).toEqual({ partitionKey: 'pk', sortKey: undefined });
    expect(emitted?.envelope.id).toBe('e-0');
    expectTypeOf(runtime.createTransactionalConsumer<OrderPlaced>).returns.toEqualTypeOf<SqsBatchHandler>();
  });
});
