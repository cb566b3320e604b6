/**
 * `verify --cleanup`: removes what the run created and only that: the items that carry the run id (its ids are unique
 * to it: ./run-ids.ts) or the id of one of its derived events (./derived-events.ts: an inbox record of such an event
 * carries no run id) in the stacks' DynamoDB tables (the producer's business items, the outbox events, the
 * subscribers' effects and inbox records), and the dead letters of the run's events in the subscribers' dead-letter
 * queues. Another run's items carry neither and stay; nothing else is deleted; no queue is purged. Says what it
 * removed, per table and queue.
 */
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { DeleteMessageCommand } from '@aws-sdk/client-sqs';
import { DEAD_LETTER_ATTRIBUTE } from '../../lambda/consumer/dead-letter';
import { eventIdOf } from '../aws/message-ids';
import { receiveMessages, releaseMessages } from '../cli/dead-letters/queue-messages';
import type { VerifyClients } from './clients';
import type { DeployedFlow } from './deployed-flow';
import { deadLetterQueuesOf } from './observe';

/** What the cleanup removed: `<count> from <table or queue>` lines. */
export async function cleanUpRun(clients: VerifyClients, flow: DeployedFlow, runId: string, runEventIds: ReadonlySet<string>): Promise<string[]> {
  const removed: string[] = [];
  const marks = [runId, ...[...runEventIds].filter((id) => !id.includes(runId))];
  const tables = [...new Set(flow.resources.filter((resource) => resource.type === 'AWS::DynamoDB::Table' || resource.type === 'AWS::DynamoDB::GlobalTable').map((resource) => resource.physicalId))];
  for (const tableName of tables) {
    const described = await clients.dynamoDb.send(new DescribeTableCommand({ TableName: tableName }));
    const keyNames = (described.Table?.KeySchema ?? []).map((key) => key.AttributeName!);
    let count = 0;
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await clients.documents.send(new ScanCommand({ TableName: tableName, ExclusiveStartKey: startKey, ConsistentRead: true }));
      for (const item of page.Items ?? []) {
        const text = JSON.stringify(item);
        if (!marks.some((mark) => text.includes(mark))) continue;
        await clients.documents.send(new DeleteCommand({ TableName: tableName, Key: Object.fromEntries(keyNames.map((name) => [name, item[name]])) }));
        count += 1;
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey !== undefined);
    if (count > 0) removed.push(`${count} item(s) of the run from table ${tableName}`);
  }
  for (const queueUrl of [...new Set(flow.subscribers.flatMap(deadLetterQueuesOf))]) {
    const messages = await receiveMessages(clients.sqs, queueUrl);
    const ofRun = messages.filter((message) => runEventIds.has(message.messageAttributes[DEAD_LETTER_ATTRIBUTE.EVENT_ID]?.StringValue ?? eventIdOf(message.body) ?? ''));
    for (const message of ofRun) await clients.sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.receiptHandle }));
    await releaseMessages(clients.sqs, messages.filter((message) => !ofRun.includes(message)));
    if (ofRun.length > 0) removed.push(`${ofRun.length} dead letter(s) of the run's events from ${queueUrl}`);
  }
  return removed;
}
