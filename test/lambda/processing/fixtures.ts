/** Shared fixtures of the lease and multi-step tests. Not a test file (vitest only runs `*.test.ts`). */
import { GetItemCommand, type DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
import { PROCESSING_RECORD, TABLE_SCHEMA } from '../../../lambda/wire-format';
import { createTable, localClient } from '../../support/dynamodb-client';
import { envelopeObject } from '../helpers';

/** Creates an inbox table with the sparse `BlockedMessages` index, as the InboxTable construct does for lease modes. */
export async function createInboxTable(client: DynamoDBClient, tableName: string): Promise<void> {
  await createTable(
    client,
    tableName,
    { partitionKey: TABLE_SCHEMA.PARTITION_KEY },
    {
      AttributeDefinitions: [
        { AttributeName: TABLE_SCHEMA.PARTITION_KEY, AttributeType: 'S' },
        { AttributeName: PROCESSING_RECORD.BLOCKED_SUBSCRIBER_ATTRIBUTE, AttributeType: 'S' },
        { AttributeName: PROCESSING_RECORD.BLOCKED_AT_ATTRIBUTE, AttributeType: 'S' },
      ],
      GlobalSecondaryIndexes: [
        {
          IndexName: PROCESSING_RECORD.BLOCKED_INDEX_NAME,
          KeySchema: [
            { AttributeName: PROCESSING_RECORD.BLOCKED_SUBSCRIBER_ATTRIBUTE, KeyType: 'HASH' },
            { AttributeName: PROCESSING_RECORD.BLOCKED_AT_ATTRIBUTE, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
      ],
    },
  );
}

/** A clock the test moves by hand, e.g. past a lease. */
export class FakeClock {
  private epochMilliseconds: number;

  public constructor(start = Date.parse('2024-05-01T12:00:00.000Z')) {
    this.epochMilliseconds = start;
  }

  public readonly now = (): Date => new Date(this.epochMilliseconds);

  public advanceSeconds(seconds: number): void {
    this.epochMilliseconds += seconds * 1000;
  }
}

/** A message: its envelope id, data and SQS body. */
export interface TestMessage {
  readonly id: string;
  readonly envelope: Record<string, unknown>;
  readonly body: string;
}

/** A new message with a unique id (or the given one) and data. */
export function newMessage(data: Record<string, unknown> = { invoiceFor: 'order-1', amountCents: 1200 }, overrides: Record<string, unknown> = {}): TestMessage {
  const envelope = envelopeObject({ id: `evt-${randomUUID()}`, type: 'OrderPaid', data, ...overrides });
  return { id: envelope.id as string, envelope, body: JSON.stringify(envelope) };
}

/** The raw item of a message's processing record (low-level attribute values), read consistently. */
export async function rawRecord(client: DynamoDBClient, tableName: string, subscriber: string, eventId: string) {
  const response = await client.send(
    new GetItemCommand({ TableName: tableName, Key: { [TABLE_SCHEMA.PARTITION_KEY]: { S: `${subscriber}#${eventId}` } }, ConsistentRead: true }),
  );
  return response.Item;
}

/** What {@link interruptibleClient} returns. */
export interface InterruptibleClient {
  readonly client: DynamoDBClient;
  /** From now on every request fails before it is sent (the process "crashed"). */
  crash(): void;
  /** Called before every request with the command name; may throw to fail that request before it is sent. */
  beforeSend?: (commandName: string) => void;
}

/**
 * A DynamoDB client whose requests can be made to fail before they leave the process: a Lambda invocation that
 * crashed, seen from DynamoDB (nothing more arrives from it). The failure happens before the SDK's retry step, so it
 * is not retried.
 */
export function interruptibleClient(overrides: DynamoDBClientConfig = {}): InterruptibleClient {
  const client = localClient(overrides);
  let crashed = false;
  const controls: InterruptibleClient = {
    client,
    crash: () => {
      crashed = true;
    },
  };
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (crashed) throw Object.assign(new Error('the invocation crashed (simulated)'), { name: 'SimulatedCrash' });
      controls.beforeSend?.(String(context.commandName));
      return next(args);
    },
    { step: 'initialize', name: 'simulatedCrash' },
  );
  return controls;
}

/** A promise with its resolve function, to hold an effect until the test lets it go. */
export function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}
