/**
 * The hand-written inbox the batch-size comparison measures our transactional mode against (issue 19, defect 7): what a
 * careful team writes without a library. Per record, one TransactWriteItems of the ledger credit and a conditional inbox
 * Put (`attribute_not_exists`); a cancellation on the inbox Put is a duplicate. No batch read, no payload fingerprint,
 * no item locks, no conflict retry: the same requests as our runtime's otherwise. The batch's records run one after
 * another, as a hand-written loop does (run concurrently, records of one customer refuse each other's transactions
 * under AWS's conflict rule, and a batch of 10 at 20 % redeliveries still had records failing after 5 redeliveries),
 * and a record whose transaction fails for another reason is reported as a batch item failure.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from '../../../lambda/index';
import type { OrderPlaced } from '../fixtures';

/** Options of {@link createHandWrittenInbox}. */
export interface HandWrittenInboxOptions {
  readonly client: DynamoDBClient;
  readonly inboxTable: string;
  readonly ledgerTable: string;
  /** Called once per run of the business logic (staging the credit). */
  readonly onRun: () => void;
  /**
   * Commit the batch at its round-trip floor: the records of one customer one after another, the customers' lanes at
   * once (no read, no checks, nothing else), so a batch takes as many sequential round trips as the most records it has
   * on one customer's item, the fewest an exactly-once commit needs (DynamoDB refuses a transaction on an item another
   * ongoing transaction holds). @default false: every record one after another, as a hand-written loop does
   */
  readonly lanes?: boolean;
}

/** True for a transaction cancelled because the inbox Put (its last action) found the id already recorded. */
function inboxTaken(error: unknown): boolean {
  const reasons = (error as { CancellationReasons?: ReadonlyArray<{ Code?: string }> }).CancellationReasons;
  return (error as Error).name === 'TransactionCanceledException' && reasons?.at(-1)?.Code === 'ConditionalCheckFailed';
}

/** The SQS batch handler of the hand-written inbox. */
export function createHandWrittenInbox(options: HandWrittenInboxOptions): (event: SQSEvent) => Promise<SQSBatchResponse> {
  const documents = DynamoDBDocumentClient.from(options.client, { marshallOptions: { removeUndefinedValues: true } });
  const commit = async (record: SQSRecord): Promise<string | undefined> => {
    const envelope = JSON.parse(record.body) as { id: string; data: OrderPlaced };
    options.onRun();
    try {
      await documents.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: options.ledgerTable,
                Key: { pk: `CUSTOMER#${envelope.data.customerId}` },
                UpdateExpression: 'ADD balanceCents :amount',
                ExpressionAttributeValues: { ':amount': envelope.data.totalCents },
              },
            },
            { Put: { TableName: options.inboxTable, Item: { pk: `Billing#${envelope.id}` }, ConditionExpression: 'attribute_not_exists(pk)' } },
          ],
        }),
      );
      return undefined;
    } catch (error) {
      return inboxTaken(error) ? undefined : record.messageId;
    }
  };
  const inOrder = async (records: readonly SQSRecord[]): Promise<Array<string | undefined>> => {
    const failures: Array<string | undefined> = [];
    for (const record of records) failures.push(await commit(record));
    return failures;
  };
  return async (event) => {
    let failures: Array<string | undefined>;
    if (options.lanes === true) {
      const lanes = new Map<string, SQSRecord[]>();
      for (const record of event.Records) {
        const customer = String((JSON.parse(record.body) as { data: OrderPlaced }).data.customerId);
        lanes.set(customer, [...(lanes.get(customer) ?? []), record]);
      }
      failures = (await Promise.all([...lanes.values()].map(inOrder))).flat();
    } else {
      failures = await inOrder(event.Records);
    }
    return { batchItemFailures: failures.flatMap((id) => (id === undefined ? [] : [{ itemIdentifier: id }])) };
  };
}
