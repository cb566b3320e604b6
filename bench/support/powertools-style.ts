/**
 * The comparison baseline: the request sequence of Powertools for AWS Lambda's idempotency utility with its DynamoDB
 * persistence layer (`makeIdempotent` around a record handler), implemented minimally here so it can be measured the
 * same way. Per message:
 *
 *   1. PutItem of an INPROGRESS record, conditional: absent, or expired, or INPROGRESS past its in-progress expiry
 *      (`ReturnValuesOnConditionCheckFailure: ALL_OLD`, so a duplicate needs no extra read);
 *   2. the business write, as its own request (here: UpdateItem on the ledger);
 *   3. UpdateItem of the record to COMPLETED.
 *
 * A handler error deletes the record (DeleteItem) so the retry can run. A crash between 2 and 3 leaves an INPROGRESS
 * record; once its in-progress expiry passes, the redelivery runs step 2 again: the effect is applied twice.
 */
import { createHash } from 'node:crypto';
import {
  ConditionalCheckFailedException,
  DeleteItemCommand,
  PutItemCommand,
  UpdateItemCommand,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';

export type BaselineOutcome = 'processed' | 'duplicate' | 'in-progress';

/** Thrown to stand for the process dying at a given point. */
export class SimulatedCrash extends Error {
  public constructor(where: string) {
    super(`simulated crash ${where}`);
    this.name = 'SimulatedCrash';
  }
}

export interface PowertoolsStyleOptions {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  /** The key prefix (Powertools uses the function name). */
  readonly functionName: string;
  /** Record expiry (Powertools' `expiresAfterSeconds`, default 3600). */
  readonly expiresAfterSeconds: number;
  /** What Powertools takes from `context.getRemainingTimeInMillis()`. */
  readonly remainingTimeMillis: number;
  readonly now: () => Date;
}

export class PowertoolsStyleIdempotency {
  public constructor(private readonly options: PowertoolsStyleOptions) {}

  /** Powertools' key: `<function name>#<md5 of the JSON of the selected payload>` (here: the event id). */
  public key(eventId: string): string {
    return `${this.options.functionName}#${createHash('md5').update(JSON.stringify(eventId)).digest('hex')}`;
  }

  public async process(eventId: string, effect: () => Promise<void>, crash?: 'after-effect'): Promise<BaselineOutcome> {
    const { client, tableName } = this.options;
    const key = { id: { S: this.key(eventId) } };
    const nowMillis = this.options.now().getTime();
    const expiry = Math.floor(nowMillis / 1000) + this.options.expiresAfterSeconds;
    try {
      await client.send(
        new PutItemCommand({
          TableName: tableName,
          Item: {
            ...key,
            expiration: { N: String(expiry) },
            status: { S: 'INPROGRESS' },
            in_progress_expiration: { N: String(nowMillis + this.options.remainingTimeMillis) },
          },
          ConditionExpression:
            'attribute_not_exists(#id) OR #expiry < :now OR (#status = :inprogress AND attribute_exists(#in_progress_expiry) AND #in_progress_expiry < :now_in_millis)',
          ExpressionAttributeNames: { '#id': 'id', '#expiry': 'expiration', '#in_progress_expiry': 'in_progress_expiration', '#status': 'status' },
          ExpressionAttributeValues: { ':now': { N: String(nowMillis / 1000) }, ':now_in_millis': { N: String(nowMillis) }, ':inprogress': { S: 'INPROGRESS' } },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return error.Item?.status?.S === 'COMPLETED' ? 'duplicate' : 'in-progress';
      throw error;
    }
    try {
      await effect();
    } catch (error) {
      await client.send(new DeleteItemCommand({ TableName: tableName, Key: key }));
      throw error;
    }
    if (crash === 'after-effect') throw new SimulatedCrash('after the business write, before the COMPLETED update');
    await client.send(
      new UpdateItemCommand({
        TableName: tableName,
        Key: key,
        UpdateExpression: 'SET #expiry = :expiry, #status = :status',
        ExpressionAttributeNames: { '#expiry': 'expiration', '#status': 'status' },
        ExpressionAttributeValues: { ':expiry': { N: String(expiry) }, ':status': { S: 'COMPLETED' } },
      }),
    );
    return 'processed';
  }
}
