/**
 * The comparison consumer of the batch-latency bench: Powertools for AWS Lambda (TypeScript) as its documentation
 * combines batch processing and idempotency, the real packages, unchanged: `BatchProcessor` (SQS, records processed
 * with `Promise.all`, partial batch response) around a record handler made idempotent by `makeIdempotent` with the
 * `DynamoDBPersistenceLayer` (INPROGRESS PutItem, the handler, COMPLETED UpdateItem). The idempotency key is the event
 * id in the body (`powertools_json(body).id`), so a redelivery, which SQS gives a new message id, is recognised.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import { UpdateItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Context, SQSEvent, SQSRecord as LambdaSqsRecord } from 'aws-lambda';
import type { EventEnvelope, SqsBatchHandler } from '../../../lambda/index';
import type { OrderPlaced } from '../fixtures';

/** The Lambda context the handler is invoked with: only `getRemainingTimeInMillis` matters (the INPROGRESS expiry). */
function lambdaContext(functionName: string): Context {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId: 'bench',
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'bench',
    getRemainingTimeInMillis: () => 60_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/**
 * An SQS batch handler built the Powertools way on `client`, whose record handler credits the order total to the
 * customer's balance in `ledgerTable` (one UpdateItem `ADD`, the same business write as the transactional consumer's)
 * and calls `onRun` each time it runs. Idempotency records go to `idempotencyTable` (partition key `id`).
 */
export function createPowertoolsConsumer(options: { client: DynamoDBClient; idempotencyTable: string; ledgerTable: string; onRun: () => void }): SqsBatchHandler {
  const { client, idempotencyTable, ledgerTable, onRun } = options;
  const persistenceStore = new DynamoDBPersistenceLayer({ tableName: idempotencyTable, awsSdkV3Client: client });
  const config = new IdempotencyConfig({ eventKeyJmesPath: 'powertools_json(body).id' });
  const recordHandler = async (record: LambdaSqsRecord): Promise<void> => {
    onRun();
    const envelope = JSON.parse(record.body) as EventEnvelope<OrderPlaced>;
    await client.send(
      new UpdateItemCommand({
        TableName: ledgerTable,
        Key: { pk: { S: `CUSTOMER#${envelope.data.customerId}` } },
        UpdateExpression: 'ADD balanceCents :amount',
        ExpressionAttributeValues: { ':amount': { N: String(envelope.data.totalCents) } },
      }),
    );
  };
  const processIdempotently = makeIdempotent(recordHandler, { persistenceStore, config });
  const processor = new BatchProcessor(EventType.SQS);
  const context = lambdaContext('bench-powertools');
  return async (event) => {
    config.registerLambdaContext(context);
    return processPartialResponse(event as unknown as SQSEvent, processIdempotently, processor, { context });
  };
}
