/**
 * The ordered outbox table's past images for the ordered model's point-in-time restore (review ro12, RO12-9): what a
 * DynamoDB point-in-time restore brings back is the table as it was at one time, every head item as it was then and
 * the table's generation item with them. The model once wrote each head's current item back with a smaller sequence,
 * keeping its current generation and base, a head no restore makes (#4 of a generation based at #3 became #2 based at
 * #3, and the producer wrote #3 based at #3).
 */
import { DeleteCommand, GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ProducerConfig } from '../../../lambda/config';
import { ORDERED_OUTBOX_ITEM, orderedGenerationKey, orderedHeadKey } from '../../../lambda/contract/ordered-wire-format';

type Item = Record<string, unknown>;

/** The table's ordered items at one time: each aggregate's head (absent: none) and the generation item (absent: none). */
interface Image {
  readonly heads: ReadonlyMap<string, Item | undefined>;
  readonly generation: Item | undefined;
}

/** A head's sequence in an image (0 when the aggregate has no head). */
function sequenceOf(item: Item | undefined): number {
  return (item?.[ORDERED_OUTBOX_ITEM.SEQUENCE_ATTRIBUTE] as number | undefined) ?? 0;
}

/** The ordered outbox table's images, one per time the world looked at it and found it changed, oldest first. */
export class OutboxImages {
  /** The empty table the run starts with first. */
  private readonly images: Image[] = [{ heads: new Map(), generation: undefined }];

  /**
   * @param reader reads and writes the table directly (no faults)
   * @param outbox the ordered outbox table
   * @param aggregates the aggregates whose heads an image holds
   */
  public constructor(
    private readonly reader: DynamoDBDocumentClient,
    private readonly outbox: ProducerConfig,
    private readonly aggregates: readonly string[],
  ) {}

  /** Reads the table's heads and generation item now and keeps them as an image when they changed. */
  public async record(): Promise<void> {
    const heads = new Map<string, Item | undefined>();
    for (const aggregate of this.aggregates) heads.set(aggregate, await this.read(orderedHeadKey(aggregate)));
    const image = { heads, generation: await this.read(orderedGenerationKey()) };
    if (JSON.stringify(this.key(image)) !== JSON.stringify(this.key(this.images[this.images.length - 1]!))) this.images.push(image);
  }

  /**
   * Restores the table to the latest time its every head stood at least `back` sequences below where it stands now
   * (some may go further back: one time for the whole table), each head and the generation item as they were then.
   * Returns each aggregate's head sequence before and after.
   */
  public async restore(back: number): Promise<ReadonlyMap<string, { readonly from: number; readonly to: number }>> {
    await this.record();
    const now = this.images[this.images.length - 1]!;
    const target = new Map(this.aggregates.map((aggregate) => [aggregate, Math.max(0, sequenceOf(now.heads.get(aggregate)) - back)]));
    // the first image (the empty table) always fits
    let index = this.images.length - 1;
    while (index > 0 && this.aggregates.some((aggregate) => sequenceOf(this.images[index]!.heads.get(aggregate)) > target.get(aggregate)!)) index -= 1;
    const then = this.images[index]!;
    const moved = new Map<string, { readonly from: number; readonly to: number }>();
    for (const aggregate of this.aggregates) {
      await this.write(orderedHeadKey(aggregate), then.heads.get(aggregate));
      moved.set(aggregate, { from: sequenceOf(now.heads.get(aggregate)), to: sequenceOf(then.heads.get(aggregate)) });
    }
    await this.write(orderedGenerationKey(), then.generation);
    this.images.push(then);
    return moved;
  }

  /** What an image compares by (its items, in the aggregates' order). */
  private key(image: Image): unknown {
    return [this.aggregates.map((aggregate) => image.heads.get(aggregate) ?? null), image.generation ?? null];
  }

  private itemKey(key: string): Item {
    const { partitionKeyName, sortKeyName } = this.outbox;
    return { [partitionKeyName]: key, ...(sortKeyName === undefined ? {} : { [sortKeyName]: key }) };
  }

  private async read(key: string): Promise<Item | undefined> {
    return (await this.reader.send(new GetCommand({ TableName: this.outbox.outboxTableName, Key: this.itemKey(key), ConsistentRead: true }))).Item;
  }

  /** Puts `item` under `key`, or deletes what is there when the image had none. */
  private async write(key: string, item: Item | undefined): Promise<void> {
    if (item === undefined) await this.reader.send(new DeleteCommand({ TableName: this.outbox.outboxTableName, Key: this.itemKey(key) }));
    else await this.reader.send(new PutCommand({ TableName: this.outbox.outboxTableName, Item: item }));
  }
}
