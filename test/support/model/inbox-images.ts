/**
 * The ordered subscriber's inbox table's past images for the ordered model's inbox restore (review ro12, RO12-4): a
 * DynamoDB point-in-time restore brings back the whole table as it was at one time, its fences, inbox records, skip
 * records and window record alike, while the subscriber's business tables (the model's ledger) keep what it applied
 * since.
 */
import { DeleteCommand, PutCommand, ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { TABLE_SCHEMA } from '../../../lambda/contract/wire-format';

type Item = Record<string, unknown>;

/** Every item of `table` (one strongly consistent Scan; the model's tables are small), by key. */
async function itemsOf(reader: DynamoDBDocumentClient, table: string): Promise<Item[]> {
  const items: Item[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await reader.send(new ScanCommand({ TableName: table, ConsistentRead: true, ...(startKey === undefined ? {} : { ExclusiveStartKey: startKey }) }));
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey !== undefined);
  return items.sort((a, b) => String(a[TABLE_SCHEMA.PARTITION_KEY]).localeCompare(String(b[TABLE_SCHEMA.PARTITION_KEY])));
}

/** Makes `table` hold exactly `items`. */
async function replaceContents(reader: DynamoDBDocumentClient, table: string, items: readonly Item[]): Promise<void> {
  const keep = new Set(items.map((item) => String(item[TABLE_SCHEMA.PARTITION_KEY])));
  for (const item of await itemsOf(reader, table)) {
    if (!keep.has(String(item[TABLE_SCHEMA.PARTITION_KEY]))) await reader.send(new DeleteCommand({ TableName: table, Key: { [TABLE_SCHEMA.PARTITION_KEY]: item[TABLE_SCHEMA.PARTITION_KEY] } }));
  }
  for (const item of items) await reader.send(new PutCommand({ TableName: table, Item: item }));
}

/** The inbox table's images, one per time the world looked at it and found it changed, oldest first. */
export class InboxImages {
  /** The empty table the run starts with first. */
  private readonly images: Item[][] = [[]];

  public constructor(
    private readonly reader: DynamoDBDocumentClient,
    private readonly inboxTable: string,
  ) {}

  /** Reads the table now and keeps it as an image when it changed. */
  public async record(): Promise<void> {
    const items = await itemsOf(this.reader, this.inboxTable);
    if (JSON.stringify(items) !== JSON.stringify(this.images[this.images.length - 1])) this.images.push(items);
  }

  /**
   * Restores the table to its image `back` changes ago (the empty table at most), after copying what it holds now into
   * `restoredFrom` (the table a restore is made from keeps everything: the operator carries from it).
   */
  public async restore(back: number, restoredFrom: string): Promise<void> {
    await this.record();
    await replaceContents(this.reader, restoredFrom, this.images[this.images.length - 1]!);
    const then = this.images[Math.max(0, this.images.length - 1 - back)]!;
    await replaceContents(this.reader, this.inboxTable, then);
    this.images.push(then);
  }
}
