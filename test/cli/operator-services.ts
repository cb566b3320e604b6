/**
 * The local services the operator commands are tested against: the simulator's SQS (queues on a frozen virtual clock
 * behind its SQS endpoint, spoken to by the real @aws-sdk/client-sqs) and the shared DynamoDB Local. No mocks.
 */
import type { PayloadReader } from '../../lambda/claim-check/payload-store';
import { DynamoDBClient, ResourceNotFoundException } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { inject } from 'vitest';
import { main, type CliIo } from '../../simulator/cli/main';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { SqsBatchHandler } from '../../lambda/consumer/create-consumer';
import { createTransactionalConsumer } from '../../lambda/consumer/transactional-consumer';
import { PermanentError } from '../../lambda/errors';
import { createMultiStepConsumer } from '../../lambda/processing/multi-step-consumer';
import { SqsDeadLetterPublisher } from '../../lambda/consumer/dead-letter';
import type { VirtualClock } from '../../simulator/aws/clock';
import type { SimulatedQueue } from '../../simulator/aws/queue';
import { startSqsEndpoint, type SqsEndpoint, type SqsEndpointOptions } from '../../simulator/aws/sqs-endpoint';
import { recordingLogger } from '../lambda/helpers';
import { LOCAL_CREDENTIALS, localClient } from '../support/dynamodb-client';
import { frozenClock, makeQueue, queueModel } from '../simulator/aws/queue-test-kit';

const silentLogger = { trace: () => {}, debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

/** One subscriber's queues and a relay dead-letter queue, on one SQS endpoint. */
export interface OperatorServices {
  readonly clock: VirtualClock;
  readonly endpoint: SqsEndpoint;
  readonly queue: SimulatedQueue;
  readonly deadLetterQueue: SimulatedQueue;
  readonly subscriptionDeadLetterQueue: SimulatedQueue;
  readonly relayDeadLetterQueue: SimulatedQueue;
  /** An SQS client of the endpoint, as the runtime's dead-letter publisher uses it. */
  readonly sqs: SQSClient;
  /** Sends dead letters to `deadLetterQueue` through the endpoint, with the runtime's own publisher. */
  readonly deadLetterPublisher: SqsDeadLetterPublisher;
  stop(): Promise<void>;
}

/**
 * Starts the endpoint with a fresh set of queues (names unique to `prefix`); the queue moves a message to its DLQ after
 * 3 receives. `authorize` is the endpoint's IAM decision (its AccessDenied message, or undefined to allow).
 */
/** How the subscriber's queues are configured (CloudFormation's defaults otherwise). */
export interface QueueSettings {
  /** @default 3 */
  readonly maxReceiveCount?: number;
  /** The subscriber queue's MessageRetentionPeriod. @default 4 days */
  readonly queueRetentionSeconds?: number;
  /** The dead-letter queue's MessageRetentionPeriod. @default 14 days */
  readonly deadLetterRetentionSeconds?: number;
}

export async function startOperatorServices(
  prefix: string,
  clock: VirtualClock = frozenClock(),
  authorize?: SqsEndpointOptions['authorize'],
  settings: QueueSettings = {},
): Promise<OperatorServices> {
  const byUrl = new Map<string, SimulatedQueue>();
  const byArn = new Map<string, SimulatedQueue>();
  const endpoint = await startSqsEndpoint({ resolveQueue: (url) => byUrl.get(url), resolveQueueArn: (arn) => byArn.get(arn), ...(authorize === undefined ? {} : { authorize }) });
  const baseUrl = endpoint.endpoint;
  const deadLetterQueue = makeQueue(queueModel(`${prefix}Dlq`, { messageRetentionSeconds: settings.deadLetterRetentionSeconds ?? 1_209_600 }), { clock, baseUrl });
  const queue = makeQueue(
    queueModel(`${prefix}Queue`, {
      redrive: { deadLetterQueue: `Stack/${prefix}Dlq`, maxReceiveCount: settings.maxReceiveCount ?? 3 },
      ...(settings.queueRetentionSeconds === undefined ? {} : { messageRetentionSeconds: settings.queueRetentionSeconds }),
    }),
    { clock, baseUrl, deadLetterQueue },
  );
  const subscriptionDeadLetterQueue = makeQueue(queueModel(`${prefix}SubscriptionDlq`, { messageRetentionSeconds: 1_209_600 }), { clock, baseUrl });
  const relayDeadLetterQueue = makeQueue(queueModel(`${prefix}RelayDlq`, { messageRetentionSeconds: 1_209_600 }), { clock, baseUrl });
  for (const each of [queue, deadLetterQueue, subscriptionDeadLetterQueue, relayDeadLetterQueue]) {
    byUrl.set(each.address.url, each);
    byArn.set(each.address.arn, each);
  }
  const sqs = new SQSClient({ region: 'us-east-1', endpoint: baseUrl, credentials: LOCAL_CREDENTIALS, maxAttempts: 1, logger: silentLogger, useQueueUrlAsEndpoint: false });
  return {
    clock,
    endpoint,
    queue,
    deadLetterQueue,
    subscriptionDeadLetterQueue,
    relayDeadLetterQueue,
    sqs,
    deadLetterPublisher: new SqsDeadLetterPublisher({ queueUrl: deadLetterQueue.address.url, client: sqs }),
    stop: async () => {
      sqs.destroy();
      await endpoint.stop();
    },
  };
}

/**
 * Hands the queue's visible messages to `handler` as Lambda's event source mapping does (attributes and message
 * attributes included) and deletes those it did not report as failures. Returns how many it delivered.
 */
export async function deliverOnce(queue: SimulatedQueue, handler: SqsBatchHandler): Promise<number> {
  const received = queue.receive(10);
  if (received.length === 0) return 0;
  const response = await handler({
    Records: received.map((message) => ({
      messageId: message.messageId,
      body: message.body,
      attributes: { ApproximateReceiveCount: String(message.receiveCount) },
      messageAttributes: Object.fromEntries(Object.entries(message.messageAttributes).map(([name, value]) => [name, { stringValue: value.StringValue, dataType: value.DataType }])),
    })),
  });
  const failed = new Set(response.batchItemFailures.map((failure) => failure.itemIdentifier));
  for (const message of received) if (!failed.has(message.messageId)) queue.delete(message.receiptHandle);
  return received.length;
}

/** What the CLI runs against: the SQS endpoint and its clock (DynamoDB Local is the suite's). */
export type CliServices = Pick<OperatorServices, 'clock' | 'endpoint'>;

/** Runs the CLI in-process against the endpoint and DynamoDB Local, at the services' virtual time. */
export async function cli(services: CliServices, ...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return cliAt(services, {}, ...argv);
}

/** How {@link cliAt} runs the CLI. */
export interface CliRun {
  /** An operator at a terminal who answers the command's questions. @default none: no prompt */
  readonly confirm?: (question: string) => Promise<boolean>;
  /**
   * Called after each SQS request of the CLI got its answer, with the command's name (`StartMessageMoveTaskCommand`):
   * lets a test move the services' clock between two requests, as time passes between them on AWS.
   * @default nothing
   */
  readonly afterSqsRequest?: (commandName: string) => void;
  /** What reads offloaded events' data (`dlq show --fetch`). @default the CLI's own: S3 */
  readonly payloadReader?: PayloadReader;
  /**
   * Tables of another account: the CLI's own DynamoDB client (the operator's credentials) is answered
   * `ResourceNotFoundException` for them (with the message AWS gives a GetItem or Scan: "Requested resource not
   * found"), as AWS resolves a table name in the caller's account. Only a client of
   * another profile (`--flow-profile`, with `--endpoint`) reaches them. @default none
   */
  readonly tablesOfAnotherAccount?: readonly string[];
  /**
   * A table's creation time as the test's clock has it, answered in DescribeTable's `CreationDateTime` (a model that
   * restores a table in place, at its own virtual time, as DynamoDB restores into a new table: review ro13, RO13-9);
   * undefined for a table: DynamoDB Local's own. @default DynamoDB Local's for every table
   */
  readonly tableCreatedAt?: (tableName: string) => Date | undefined;
  /**
   * The table a table was restored from, as the ARN DescribeTable's `RestoreSummary.SourceTableArn` names (DynamoDB
   * Local restores nothing, so says none); undefined for a table: none. @default none for every table
   */
  readonly restoredFrom?: (tableName: string) => string | undefined;
  /**
   * DynamoDB commands (`DescribeTimeToLiveCommand`) answered `AccessDeniedException`, as AWS answers a role whose
   * policy does not allow them. @default none
   */
  readonly deniedDynamoDbCommands?: readonly string[];
  /** Collects the Region of each DynamoDB client the CLI creates (the options it asks for). @default not collected */
  readonly clientRegions?: Array<string | undefined>;
}

/** {@link cli} with an operator at a terminal who answers `confirm`'s questions, or time that passes between requests. */
export async function cliAt(services: CliServices, terminal: CliRun, ...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const io: CliIo = {
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
    createClient: (options) => {
      terminal.clientRegions?.push(options.region);
      const client = new DynamoDBClient({ region: 'us-east-1', endpoint: inject('dynamoDbEndpoint'), credentials: LOCAL_CREDENTIALS, maxAttempts: 1 });
      const elsewhere = terminal.tablesOfAnotherAccount ?? [];
      if (elsewhere.length > 0) {
        client.middlewareStack.add(
          (next) => async (args) => {
            const table = (args.input as { TableName?: unknown }).TableName;
            if (typeof table === 'string' && elsewhere.includes(table)) {
              throw new ResourceNotFoundException({ message: 'Requested resource not found', $metadata: {} });
            }
            return next(args);
          },
          { step: 'initialize', name: 'tablesOfAnotherAccount' },
        );
      }
      const denied = terminal.deniedDynamoDbCommands ?? [];
      if (denied.length > 0) {
        client.middlewareStack.add(
          (next, handlerContext) => async (args) => {
            const command = handlerContext.commandName ?? '';
            if (denied.includes(command)) {
              const error = new Error(`User: arn:aws:sts::111111111111:assumed-role/oncall/alice is not authorized to perform: dynamodb:${command.replace(/Command$/, '')}`);
              error.name = 'AccessDeniedException';
              throw error;
            }
            return next(args);
          },
          { step: 'initialize', name: 'deniedDynamoDbCommands' },
        );
      }
      const createdAt = terminal.tableCreatedAt;
      const restoredFrom = terminal.restoredFrom;
      if (createdAt !== undefined || restoredFrom !== undefined) {
        client.middlewareStack.add(
          (next, context) => async (args) => {
            const result = await next(args);
            const table = (result.output as { Table?: { TableName?: string; CreationDateTime?: Date; RestoreSummary?: { SourceTableArn?: string; RestoreDateTime?: Date; RestoreInProgress?: boolean } } }).Table;
            if (context.commandName !== 'DescribeTableCommand' || table?.TableName === undefined) return result;
            const created = createdAt?.(table.TableName);
            if (created !== undefined) table.CreationDateTime = created;
            const source = restoredFrom?.(table.TableName);
            if (source !== undefined) table.RestoreSummary = { SourceTableArn: source, RestoreDateTime: table.CreationDateTime ?? new Date(0), RestoreInProgress: false };
            return result;
          },
          { step: 'initialize', name: 'describedTable' },
        );
      }
      return client;
    },
    createSqsClient: (options) => {
      const client = new SQSClient({ region: 'us-east-1', endpoint: options.sqsEndpoint, credentials: LOCAL_CREDENTIALS, maxAttempts: 1, logger: silentLogger, useQueueUrlAsEndpoint: false });
      const after = terminal.afterSqsRequest;
      if (after !== undefined) {
        client.middlewareStack.add(
          (next, context) => async (args) => {
            const output = await next(args);
            after(context.commandName ?? '');
            return output;
          },
          { step: 'initialize', name: 'afterSqsRequest' },
        );
      }
      return client;
    },
    now: () => new Date(services.clock.now()),
    user: 'alice',
    ...(terminal.confirm !== undefined ? { confirm: terminal.confirm } : {}),
    ...(terminal.payloadReader !== undefined ? { createPayloadReader: () => terminal.payloadReader as PayloadReader } : {}),
  };
  const code = await main([...argv, '--sqs-endpoint', services.endpoint.endpoint], io);
  return { code, stdout, stderr };
}

/**
 * A multi-step consumer of subscriber `subscriberName` whose one step, `email-invoice`, always ends with an unknown
 * outcome: every message it takes is blocked for an operator, and its dead letter sent to the services' dead-letter queue.
 */
export function blockingConsumer(
  services: OperatorServices,
  options: { readonly subscriberName: string; readonly inboxTableName: string; readonly keepBlockedMessageBody?: boolean },
): SqsBatchHandler {
  return createMultiStepConsumer({
    steps: [
      {
        name: 'email-invoice',
        run: () => {
          throw new Error('SMTP timeout after DATA');
        },
      },
    ],
    client: localClient(),
    config: { ...options, deduplicationWindowSeconds: 30 * 86_400, leaseDurationSeconds: 60 },
    deadLetter: services.deadLetterPublisher,
    logger: recordingLogger().logger,
    metricsSink: () => undefined,
    now: () => new Date(services.clock.now()),
  });
}

/** Where {@link countingConsumer} keeps its records and effects. */
export interface CountingConsumerTables {
  readonly subscriber: string;
  readonly inboxTable: string;
  /** Its business table: one counter per event id (`effect#<id>`). */
  readonly effectsTable: string;
}

/**
 * A transactional consumer whose effect is a counter per event id (ADD 1 in its transaction), with the runtime's own
 * dead-letter publisher on the services' dead-letter queue, failing permanently for the ids in `poison` (a set the test
 * may change: "the bug is fixed"). `applied(...ids)` reads the counters; `drain()` delivers until the queue is empty.
 */
export function countingConsumer(s: OperatorServices, tables: CountingConsumerTables, poison: ReadonlySet<string> = new Set()) {
  const effectKey = (id: string) => ({ pk: `effect#${id}` });
  const handler = createTransactionalConsumer({
    client: localClient(),
    config: { subscriberName: tables.subscriber, inboxTableName: tables.inboxTable, deduplicationWindowSeconds: 30 * 86_400 },
    deadLetter: s.deadLetterPublisher,
    logger: recordingLogger().logger,
    metricsSink: () => undefined,
    now: () => new Date(s.clock.now()),
    handle: (envelope, tx) => {
      if (poison.has(envelope.id)) throw new PermanentError(`order ${envelope.id} has no customer`);
      tx.update({ TableName: tables.effectsTable, Key: effectKey(envelope.id), UpdateExpression: 'ADD applied :one', ExpressionAttributeValues: { ':one': 1 } });
    },
  });
  const applied = async (...ids: string[]): Promise<Record<string, number>> => {
    const documents = DynamoDBDocumentClient.from(localClient());
    const counts: Record<string, number> = {};
    for (const id of ids) counts[id] = ((await documents.send(new GetCommand({ TableName: tables.effectsTable, Key: effectKey(id), ConsistentRead: true }))).Item?.applied as number | undefined) ?? 0;
    return counts;
  };
  const drain = async (): Promise<void> => {
    while ((await deliverOnce(s.queue, handler)) > 0);
  };
  return { handler, applied, drain };
}
