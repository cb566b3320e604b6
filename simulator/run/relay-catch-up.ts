/**
 * Reads a relay's stream until it has caught up with its table. DynamoDB Local makes a committed item's stream record
 * readable a moment after the commit, under load; a relay poll right after a commit can miss it, and the event then
 * reaches the queues a round later, which changes how messages batch and so which faults hit them. Polling until the
 * relay has read at least as many records as the table holds items makes every round see every commit before it, so a
 * seeded run replays the same way. (Outbox items are only ever inserted, so records read ≥ items is the right test;
 * a table that also updates or deletes items only makes the test pass sooner.)
 */
import { ScanCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SimulatedRelay } from '../aws/stream-relay';

/** How long one catch-up waits for the stream before it gives up for this round (the next round reads the rest). */
export const CATCH_UP_LIMIT_MS = 5_000;
const RETRY_DELAY_MS = 10;

async function countItems(client: DynamoDBClient, tableName: string): Promise<number> {
  let count = 0;
  let startKey: Record<string, never> | undefined;
  do {
    const page = await client.send(new ScanCommand({ TableName: tableName, Select: 'COUNT', ConsistentRead: true, ExclusiveStartKey: startKey }));
    count += page.Count ?? 0;
    startKey = page.LastEvaluatedKey as Record<string, never> | undefined;
  } while (startKey !== undefined);
  return count;
}

/** A relay that polls until it has read a record for every item of its source table. */
export class CatchingUpRelay {
  private recordsRead = 0;

  public constructor(
    private readonly relay: SimulatedRelay,
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  /** Polls until caught up (or {@link CATCH_UP_LIMIT_MS} passed); returns the records read. */
  public async poll(): Promise<number> {
    const deadline = Date.now() + CATCH_UP_LIMIT_MS;
    let read = await this.relay.poll();
    this.recordsRead += read;
    // a pipe IAM does not let read its stream never catches up: the run reports the denial and the events not relayed
    if (this.relay.readDenied) return read;
    while (this.recordsRead < (await countItems(this.client, this.tableName)) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, RETRY_DELAY_MS));
      const more = await this.relay.poll();
      this.recordsRead += more;
      read += more;
    }
    return read;
  }
}
