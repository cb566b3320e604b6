/** Every item of a DynamoDB Scan, page after page (the operator commands' reads of the outbox). */
import { ScanCommand, type DynamoDBDocumentClient, type ScanCommandInput } from '@aws-sdk/lib-dynamodb';

/** The items `input` scans, all pages, strongly consistent. */
export async function scanItems(client: DynamoDBDocumentClient, input: Omit<ScanCommandInput, 'ExclusiveStartKey' | 'ConsistentRead'>): Promise<Array<Record<string, unknown>>> {
  const items: Array<Record<string, unknown>> = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await client.send(new ScanCommand({ ...input, ConsistentRead: true, ...(startKey === undefined ? {} : { ExclusiveStartKey: startKey }) }));
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey !== undefined);
  return items;
}
