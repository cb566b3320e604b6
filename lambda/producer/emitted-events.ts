/**
 * Events a consumer emits while processing a message: they go into the consumer's own commit (the inbox transaction,
 * or the aggregate's conditional write), with ids derived from the consumed message so a re-run names them the same.
 */
import { ENV } from '../contract/environment';
import { InvalidEventError } from '../errors';
import { derivedEventId } from '../fingerprint';
import type { DynamoDBClientLike } from '../transaction/document-client';
import type { NewEvent } from './new-event';
import { Outbox, type PreparedEvent } from './outbox';

/**
 * Turns the `index`-th event (0-based) emitted for one consumed message into its envelope and outbox Put, or throws
 * when it cannot (no outbox configured, an invalid or too large event).
 */
export type EventPreparer = (event: NewEvent, index: number) => PreparedEvent;

/** The error of emitting without an outbox: a deployment problem no retry cures, so the message is dead-lettered. */
export function noOutboxError(eventType: string, subscriberName?: string): InvalidEventError {
  const subscriber = subscriberName === undefined ? 'this subscriber' : `subscriber '${subscriberName}'`;
  return new InvalidEventError(
    `cannot emit event '${eventType}': ${subscriber} has no outbox. Deploy the subscriber with \`publishesEvents: true\` ` +
      '(which grants it the outbox table and sets IEF_OUTBOX_TABLE_NAME), or pass `outbox` to the consumer factory',
  );
}

/** What {@link emittedEventPreparer} needs. */
export interface EmittedEventsOptions {
  /** Where the events go; absent when the subscriber does not publish events. */
  readonly outbox?: Outbox;
  readonly subscriberName: string;
  /** The id of the message being processed. */
  readonly consumedEventId: string;
}

/**
 * The preparer of the events emitted for one consumed message. An event without an id gets
 * `derivedEventId(subscriberName, consumedEventId, index)`: deterministic, so processing the message again (after a
 * lost commit response, or a lost race) emits the same ids, and the outbox's conditional Put never writes a second copy.
 */
export function emittedEventPreparer(options: EmittedEventsOptions): EventPreparer {
  const { outbox, subscriberName, consumedEventId } = options;
  return (event, index) => {
    if (outbox === undefined) throw noOutboxError(event.type, subscriberName);
    return outbox.prepareEmitted({ ...event, id: event.id ?? derivedEventId(subscriberName, consumedEventId, index) });
  };
}

/**
 * The outbox of a consumer: the caller's, or the one the environment describes (when IEF_OUTBOX_TABLE_NAME is set, as
 * the constructs do for a subscriber deployed with `publishesEvents: true`), or none. Call it once, at cold start.
 *
 * @throws ConfigurationError when IEF_OUTBOX_TABLE_NAME is set but the rest of the producer environment is not
 */
export function consumerOutbox(outbox: Outbox | undefined, client: DynamoDBClientLike, now: () => Date): Outbox | undefined {
  if (outbox !== undefined) return outbox;
  const tableName = process.env[ENV.OUTBOX_TABLE_NAME];
  return tableName === undefined || tableName.trim() === '' ? undefined : Outbox.fromEnvironment(client, { now });
}

/**
 * The emitted events ready to commit: an event whose data is being offloaded (`ready`, see `Outbox.prepareEmitted`) is
 * replaced by its prepared event once its S3 write is done. Call it right before the commit.
 * @throws the S3 client's error when a write failed (nothing is committed: the message is retried)
 */
export async function readyEvents(events: readonly PreparedEvent[]): Promise<PreparedEvent[]> {
  return Promise.all(events.map((event) => event.ready ?? event));
}
