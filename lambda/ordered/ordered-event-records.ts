/**
 * What an ordered subscriber holds of one event, read as its consumer decides: a live inbox record (the event was
 * applied), or an operator's `fence skip` that dropped it (docs/ORDERED-DELIVERY.md, "Restoring the outbox table").
 * The redrive plan asks it for every dead letter at or below the fence: the fence keeps only its own sequence's event
 * id, so below it nothing else tells an applied event from a never-applied one whose sequence another event took.
 */
import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { toDocumentClient, type DynamoDBClientLike } from '../transaction/document-client';
import { recordKey, TABLE_SCHEMA } from '../contract/wire-format';
import { findSkip } from './skipped-events';
import type { OrderedPosition } from './ordered-position';

/** What the subscriber holds of an event: `applied` (a live inbox record), `skipped` (a fence skip dropped it), or nothing. */
export type OrderedEventRecord = 'applied' | 'skipped' | undefined;

/** Reads what a subscriber holds of an event (`OrderedEventRecords` does, on the inbox table). */
export interface IOrderedEventRecords {
  /** What the subscriber holds of the event `eventId` at `position`. */
  find(position: OrderedPosition, eventId: string): Promise<OrderedEventRecord>;
}

/** Options of {@link OrderedEventRecords}. */
export interface OrderedEventRecordsOptions {
  readonly client: DynamoDBClientLike;
  /** The subscriber's inbox table (its records, fences and skip records). */
  readonly tableName: string;
  readonly subscriberName: string;
  /** @default the system clock */
  readonly now?: () => Date;
}

/** Reads a subscriber's inbox record of an event (strongly consistent; an expired record counts as absent, as the inbox's condition does), then its skip record. */
export class OrderedEventRecords implements IOrderedEventRecords {
  private readonly client: DynamoDBDocumentClient;

  public constructor(private readonly options: OrderedEventRecordsOptions) {
    this.client = toDocumentClient(options.client);
  }

  public async find(position: OrderedPosition, eventId: string): Promise<OrderedEventRecord> {
    const { tableName, subscriberName } = this.options;
    const item = (await this.client.send(new GetCommand({ TableName: tableName, Key: { [TABLE_SCHEMA.PARTITION_KEY]: recordKey(subscriberName, eventId) }, ConsistentRead: true }))).Item;
    const nowSeconds = Math.floor((this.options.now ?? (() => new Date()))().getTime() / 1000);
    const expiresAt = item?.[TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE];
    if (item !== undefined && !(typeof expiresAt === 'number' && expiresAt < nowSeconds)) return 'applied';
    return (await findSkip(this.client, tableName, subscriberName, position, eventId, position.writtenAt)) === undefined ? undefined : 'skipped';
  }
}
