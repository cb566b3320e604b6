/**
 * The step ledger of the ordered tests: a business table keyed by `pk` (the event's subject, the aggregate) whose
 * `steps` list an ordered subscriber appends each applied event's `data.step` to, in the transaction that records the
 * event in its inbox. What a test reads back is what the subscriber applied, in order, and how often. Not a test file.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { ConsumerConfig } from '../../lambda/config';
import type { SqsBatchHandler } from '../../lambda/consumer/create-consumer';
import type { EventHandler } from '../../lambda/consumer/transactional-consumer';
import { createLogger } from '../../lambda/logger';
import { createOrderedConsumer, type OrderedConsumerOptions } from '../../lambda/ordered/ordered-consumer';

/** The data of a step event: the step the ledger appends. */
export interface StepData {
  /** The step, appended to the ledger item's `steps` as it is. */
  readonly step: string;
}

/** The handler that stages, in the subscriber's transaction, the append of the event's `data.step` to `steps` of the ledger item of its subject. */
export function appendStep(ledgerTable: string): EventHandler<StepData> {
  return (event, tx) =>
    tx.update({
      TableName: ledgerTable,
      Key: { pk: event.subject as string },
      UpdateExpression: 'SET steps = list_append(if_not_exists(steps, :none), :step)',
      ExpressionAttributeValues: { ':none': [], ':step': [event.data.step] },
    });
}

/** What {@link stepLedgerConsumer} takes of the ordered consumer's options besides its inbox and handler. */
export type StepLedgerConsumerOptions = Pick<OrderedConsumerOptions<StepData>, 'now' | 'deadLetter'>;

/**
 * The ordered consumer of the inbox table `inbox` that applies each event with {@link appendStep} into `ledgerTable`,
 * logging and measuring nothing. `options` adds the consumer's clock or dead-letter publisher.
 * @default options: none (the consumer's own clock and dead-letter publisher)
 */
export function stepLedgerConsumer(client: DynamoDBClient, inbox: ConsumerConfig, ledgerTable: string, options: StepLedgerConsumerOptions = {}): SqsBatchHandler {
  return createOrderedConsumer<StepData>({
    client,
    config: inbox,
    ...options,
    logger: createLogger({ sink: () => undefined }),
    metricsSink: () => undefined,
    handle: appendStep(ledgerTable),
  });
}

/** The steps the ledger holds for `aggregateId` (a consistent read): none when it has no item of it. */
export async function ledgerSteps(client: DynamoDBClient, ledgerTable: string, aggregateId: string): Promise<string[]> {
  const item = (await DynamoDBDocumentClient.from(client).send(new GetCommand({ TableName: ledgerTable, Key: { pk: aggregateId }, ConsistentRead: true }))).Item;
  return (item?.steps as string[] | undefined) ?? [];
}
