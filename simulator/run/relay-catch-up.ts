/**
 * Reads a relay's stream until it has caught up with its table. DynamoDB Local makes a committed item's stream record
 * readable a moment after the commit, and later the busier the machine; a relay poll right after a commit can miss it,
 * and the event then reaches the queues a round later, which changes how messages batch and so which faults hit them:
 * the machine's load, not the seed, would decide the run. So every round reads the stream until it holds, for every
 * item of the table (a strongly consistent Scan), a record of that item's current state, and for no other item a
 * record that it exists: then every commit before the round has been read, whatever the stream's lag.
 *
 * Counting records against items is not enough: the ordered outbox overwrites its aggregate's head item with each event
 * (docs/ORDERED-DELIVERY.md), so its stream has more records than its table has items, and "records read >= items"
 * said caught up while the last commit's records were still unread (a seed of the example did not replay beside two
 * busy loops). A stream without new images (`KEYS_ONLY`, `OLD_IMAGE`) is compared by keys alone.
 */
import { DescribeTableCommand, ScanCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { _Record } from '@aws-sdk/client-dynamodb-streams';
import type { SimulatedRelay } from '../aws/stream-relay';

/**
 * How long one catch-up waits for the stream, in real time, before it gives up for this round (the next round reads
 * the rest). Only a relay that can never catch up meets it (a pipe starting at `LATEST` on a table written before its
 * first poll): DynamoDB Local's lag under load is far below it, and a run that met it may not replay, so the run
 * reports each time it is met (`relay.catchUpLimitMet`).
 */
export const CATCH_UP_LIMIT_MS = 60_000;
const RETRY_DELAY_MS = 10;

/** What the catch-up needs of a relay. */
export type CatchUpRelay = Pick<SimulatedRelay, 'poll' | 'readDenied' | 'onRecordRead'>;

/** The last record read of an item: its new image (canonical), {@link NO_IMAGE} when the stream has none, or removed. */
type LastRead = string | typeof NO_IMAGE | typeof REMOVED;
const NO_IMAGE = Symbol('no image');
const REMOVED = Symbol('removed');

/** A JSON text of an attribute value (or a map of them) that is the same for the same value, whichever client read it. */
function canonical(value: unknown, setMembers = false): string {
  if (value instanceof Uint8Array) return JSON.stringify({ $binary: Buffer.from(value).toString('base64') });
  if (Array.isArray(value)) {
    const members = value.map((member) => canonical(member));
    return `[${(setMembers ? members.sort() : members).join(',')}]`;
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, member]) => member !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    // string, number and binary sets are sets: their members in any order are one value
    return `{${entries.map(([name, member]) => `${JSON.stringify(name)}:${canonical(member, name === 'SS' || name === 'NS' || name === 'BS')}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** A relay that polls until it has read the current state of every item of its source table. */
export class CatchingUpRelay {
  /** Item key (canonical) → the last record read of it. */
  private readonly lastRead = new Map<string, LastRead>();
  private keyNames: Promise<readonly string[]> | undefined;

  /**
   * `onLimitMet` is called each time a poll gives up after `limitMs` of real time without catching up (the run counts
   * it); `limitMs` is {@link CATCH_UP_LIMIT_MS} unless a test shortens it.
   */
  public constructor(
    private readonly relay: CatchUpRelay,
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
    private readonly onLimitMet: () => void = () => undefined,
    private readonly limitMs: number = CATCH_UP_LIMIT_MS,
  ) {
    relay.onRecordRead((record) => this.note(record));
  }

  /** Polls until caught up (or the limit passed: then it calls `onLimitMet`); returns the records read. */
  public async poll(): Promise<number> {
    const deadline = Date.now() + this.limitMs;
    let read = await this.relay.poll();
    // a pipe IAM does not let read its stream never catches up: the run reports the denial and the events not relayed
    if (this.relay.readDenied) return read;
    while (!(await this.caughtUp())) {
      if (Date.now() >= deadline) {
        this.onLimitMet();
        return read;
      }
      await new Promise((resolve) => setTimeout(resolve, RETRY_DELAY_MS));
      read += await this.relay.poll();
    }
    return read;
  }

  private note(record: _Record): void {
    const keys = record.dynamodb?.Keys;
    if (keys === undefined) return;
    const image = record.dynamodb?.NewImage;
    this.lastRead.set(canonical(keys), record.eventName === 'REMOVE' ? REMOVED : image === undefined ? NO_IMAGE : canonical(image));
  }

  /** Whether the records read show every item as the table holds it now, and no item it does not hold. */
  private async caughtUp(): Promise<boolean> {
    const keyNames = await (this.keyNames ??= this.readKeyNames());
    let items = 0;
    let startKey: Record<string, AttributeValue> | undefined;
    do {
      const page = await this.client.send(new ScanCommand({ TableName: this.tableName, ConsistentRead: true, ExclusiveStartKey: startKey }));
      for (const item of page.Items ?? []) {
        items += 1;
        const key = Object.fromEntries(keyNames.map((name) => [name, item[name]]));
        const last = this.lastRead.get(canonical(key));
        if (last === undefined || last === REMOVED) return false;
        if (last !== NO_IMAGE && last !== canonical(item)) return false;
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey !== undefined);
    let existing = 0;
    for (const last of this.lastRead.values()) if (last !== REMOVED) existing += 1;
    return existing === items;
  }

  private async readKeyNames(): Promise<readonly string[]> {
    const { Table: table } = await this.client.send(new DescribeTableCommand({ TableName: this.tableName }));
    return (table?.KeySchema ?? []).flatMap((element) => (element.AttributeName === undefined ? [] : [element.AttributeName]));
  }
}
