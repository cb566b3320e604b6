/**
 * `createAggregateConsumer`: idempotency by optimistic concurrency on one item (seed 000, "Idempotency Using Optimistic
 * Concurrency Control"). The aggregate carries a version and the ids of the messages it recently applied; one
 * conditional write both checks that nothing changed since the read and applies the change with this message's id.
 * There is no inbox.
 */
import { assertProcessingMode, ConfigurationError, loadConsumerBaseConfig, type ConsumerBaseConfig } from '../config';
import { PROCESSING_MODE } from '../contract/environment';
import { consumerLogger, createBatchHandler, type ConsumerOptions, type SqsBatchHandler } from '../consumer/create-consumer';
import { derivedEventsInOutbox } from '../consumer/inbox';
import type { HandlerContext, MessageContext } from '../consumer/process-message';
import type { EventEnvelope } from '../envelope';
import { ConcurrentModificationError, PayloadMismatchError, PermanentError } from '../errors';
import { CONSUMER_METRICS } from '../contract/metric-names';
import { consumerOutbox, emittedEventPreparer, readyEvents } from '../producer/emitted-events';
import type { NewEvent } from '../producer/new-event';
import type { Outbox } from '../producer/outbox';
import { isContention } from '../transaction/contention-retry';
import { toDocumentClient } from '../transaction/document-client';
import { identity } from '../transaction/item-identity';
import { assertLocation, assertOwnAggregate, AggregateStore, describeLocation, RUNTIME_OWNED_ATTRIBUTES, type AggregateLocation, type AggregateSnapshot } from './aggregate-store';
import { appendAndDrop, evictedUpToAfter, evictionSign, findProcessed, PROCESSED_MESSAGES_LIMITS, processedMessageFor } from './processed-messages';
import { withRuntimeMessage } from '../redact';

/** What a handler returns: the aggregate's new state and, optionally, events to emit in the same write. */
export interface AggregateChange<TState> {
  /**
   * The aggregate's new state: every attribute except the key and the runtime-owned `aggregateVersion` and
   * `processedMessages`. It replaces the stored attributes (an attribute left out is removed).
   */
  readonly state: TState;
  /**
   * Events to emit, written in one transaction with the aggregate. An event without an id gets one derived from the
   * subscriber, the consumed event and its position, so processing the message again cannot emit a second copy.
   * @default no events
   */
  readonly events?: readonly NewEvent[];
}

/**
 * An aggregate consumer's business logic: the aggregate's next state from its current state (`undefined` when the item
 * does not exist yet) and the event. It may be called more than once per message (after losing a race with a
 * concurrent writer it runs again on the newer state), so it must not act outside its return value.
 */
export type AggregateHandler<TData, TState> = (
  current: TState | undefined,
  envelope: EventEnvelope<TData>,
  context: HandlerContext,
) => AggregateChange<TState> | Promise<AggregateChange<TState>>;

/** Options of {@link createAggregateConsumer}. */
export interface AggregateConsumerOptions<TData, TState> extends ConsumerOptions<TData> {
  /**
   * Which item the event changes. It must name the same item on every delivery of an event (derive it from the event
   * alone, never from the clock or a lookup that can change): a redelivery is recognised only by the item that applied
   * it. A location without table name, or with a key value DynamoDB cannot take as a key (undefined, null, NaN, an
   * empty string, an object), dead-letters the message; a throw is treated like a throw from `apply` (`PermanentError`
   * dead-letters, anything else retries).
   */
  readonly locate: (envelope: EventEnvelope<TData>) => AggregateLocation;
  /**
   * The change. It runs once per attempt: again, on the newer state, each time a concurrent writer changed the
   * aggregate first (while the invocation's time allows, and at most `maxAttempts` times when given), each time with a fresh event parsed again from the message.
   */
  readonly apply: AggregateHandler<TData, TState>;
  /**
   * How many applied message ids the aggregate remembers (newest kept). A redelivery is recognised while its id is in
   * the list; one that arrives after this many NEWER messages changed the same aggregate is applied again (unless it
   * emits events: an event it emitted, with a derived id, still in the outbox shows it was applied). Each entry is one
   * string, `<eventId> <first 16 hex digits of the payload fingerprint>@<event time>`: about 61 bytes of item size with
   * UUID event ids. Every change rewrites the whole item and every read reads it: with 100 entries the list is about
   * 6.1 KB, so with a small state each change costs about 7 WCU (twice that when it emits events, in a transaction) and
   * each strongly consistent read 2 RCU; with about 15 entries or fewer a small item stays under 1 KB (1 WCU, 1 RCU). See
   * docs/BENCHMARKS.md. Lower it when the redelivery window allows.
   * @default 100 (from 1 to 1000)
   */
  readonly maxProcessedMessages?: number;
  /**
   * A bound on the attempts per delivery (from 1 to 100) before giving up with `ConcurrentModificationError` (retried
   * later), besides the time bound: a lost version race, a `TransactionConflict` or throttling is retried with jittered
   * back-off while the invocation's remaining time allows (the consumer's `contentionRetry`).
   * @default no bound but the time
   */
  readonly maxAttempts?: number;
  /** @default read from the environment once, at creation (`loadConsumerBaseConfig`); throws `ConfigurationError` if incomplete */
  readonly config?: ConsumerBaseConfig;
  /** Where emitted events go. @default `Outbox.fromEnvironment(client)` when IEF_OUTBOX_TABLE_NAME is set, else none */
  readonly outbox?: Outbox;
}


function wholeNumberIn(name: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigurationError(`${name} must be a whole number from ${min} to ${max}, but ${value} was given`);
  }
  return value;
}

/** The conditional write met a newer version of the aggregate: read again and retry (see `retryOnContention`). */
class LostVersionRace extends Error {
  public constructor() {
    super('the aggregate changed since it was read');
    this.name = 'LostVersionRace';
  }
}

/** Throws PermanentError when the handler's state names the key or a runtime-owned attribute, or is not an object. */
function assertOwnState(state: unknown, location: AggregateLocation, eventId: string): asserts state is Record<string, unknown> {
  if (typeof state !== 'object' || state === null || Array.isArray(state)) {
    throw withRuntimeMessage(new PermanentError(`apply must return { state } with state an object, but returned ${state === null ? 'null' : typeof state} for event '${eventId}'`));
  }
  const forbidden = Object.keys(state).filter((name) => Object.hasOwn(location.key, name) || RUNTIME_OWNED_ATTRIBUTES.includes(name));
  if (forbidden.length > 0) {
    // attribute names and the event id, no values
    throw withRuntimeMessage(new PermanentError(
      `apply returned state with ${forbidden.map((name) => `'${name}'`).join(', ')} for event '${eventId}', but the key (${Object.keys(location.key).join(', ')}) ` +
        `and ${RUNTIME_OWNED_ATTRIBUTES.join(', ')} are set by the runtime; return only the aggregate's own attributes`,
    ));
  }
}

/** The lane of an aggregate's messages: its item's identity (table and key; a number key the same as number, bigint or NumberValue). */
function laneKey(location: AggregateLocation): string {
  return identity(location.tableName, Object.keys(location.key).sort(), location.key) ?? `${location.tableName}\u0000${String(Object.keys(location.key))}`;
}

/**
 * Creates the Lambda handler of an aggregate consumer. For each message: a strongly consistent read of the aggregate
 * (none for a message that follows another to the same aggregate in the batch: it starts from the aggregate as that
 * one wrote or found it, and the version condition below still decides); if its `processedMessages` list holds the
 * event id, the message is a duplicate (or, when the payload fingerprint prefix the entry keeps differs, a
 * `PayloadMismatchError`); otherwise `apply` computes the new state and ONE conditional Put writes it with the next
 * `aggregateVersion` and the id appended, on the condition that the version is still the one read. With events, that Put and the events' outbox Puts are one transaction. A lost race re-reads and
 * retries (jittered back-off) while the invocation's time allows; then (or after `maxAttempts`) the message fails with `ConcurrentModificationError` and SQS delivers
 * it again.
 *
 * The bound: the list keeps the newest `maxProcessedMessages` ids, so a redelivery that arrives after that many newer
 * messages changed the same aggregate is no longer recognised and is applied again. Except when `apply` emits events
 * without choosing their ids: their derived ids are unique to this subscriber and event, so when the transaction fails
 * only because they are already in the outbox, the message is acknowledged as a duplicate (with a warning; its payload
 * cannot be compared then). Size the bound to the redelivery window times the aggregate's message rate.
 *
 * Call it at module scope: configuration is read once and a missing value fails the cold start.
 *
 * @typeParam TData - the type of the events' `data` (check it at run time with the `parse` option)
 * @typeParam TState - the aggregate's own attributes as `apply` sees and returns them: any object type, a plain
 *   `interface` included (no index signature needed)
 */
export function createAggregateConsumer<TData = unknown, TState extends object = Record<string, unknown>>(
  options: AggregateConsumerOptions<TData, TState>,
): SqsBatchHandler {
  const config = options.config ?? loadConsumerBaseConfig();
  assertProcessingMode(config, PROCESSING_MODE.AGGREGATE, 'createAggregateConsumer');
  const maxProcessed = wholeNumberIn('maxProcessedMessages', options.maxProcessedMessages ?? PROCESSED_MESSAGES_LIMITS.DEFAULT, PROCESSED_MESSAGES_LIMITS.MIN, PROCESSED_MESSAGES_LIMITS.MAX);
  const maxAttempts = options.maxAttempts === undefined ? undefined : wholeNumberIn('maxAttempts', options.maxAttempts, 1, 100);
  const now = options.now ?? (() => new Date());
  const logger = consumerLogger(config, PROCESSING_MODE.AGGREGATE, options.logger);
  const client = toDocumentClient(options.client);
  const outbox = consumerOutbox(options.outbox, client, now);
  const store = new AggregateStore({ client, knownKeySchemas: outbox === undefined ? undefined : new Map([[outbox.tableName, outbox.keySchema]]) });

  const execute = async (envelope: EventEnvelope<TData>, context: MessageContext<TData>) => {
    const location = options.locate(envelope);
    assertLocation(location, envelope.id);
    // the aggregate as the previous message of this batch to it wrote it: no read needed (its version is checked by the write)
    const lane = laneKey(location);
    const handedOver = context.handOff.get(lane) as AggregateSnapshot | undefined;
    context.handOff.delete(lane);
    const prepareEvent = emittedEventPreparer({ outbox, subscriberName: config.subscriberName, consumedEventId: envelope.id });
    const received = processedMessageFor(envelope.id, context.fingerprint, envelope.time);
    let attempt = 0;
    const contended = (error: unknown): boolean => isContention(error) || error instanceof LostVersionRace;
    try {
      const { value, attempts } = await context.retryOnContention(async () => {
        attempt += 1;
        const read = attempt === 1 && handedOver !== undefined ? handedOver : await store.read(location);
        assertOwnAggregate(location, read, config.subscriberName, envelope.id);
        const seen = findProcessed(read.processed, envelope.id);
        if (seen !== undefined) {
          // compared on the 64-bit prefix the entry keeps (see processed-messages.ts for why that is enough)
          if (seen.fingerprintPrefix !== received.fingerprintPrefix) {
            throw new PayloadMismatchError({
              eventId: envelope.id,
              storedFingerprint: seen.fingerprintPrefix,
              receivedFingerprint: received.fingerprintPrefix,
              subscriber: config.subscriberName,
            });
          }
          context.handOff.set(lane, read); // unchanged: the next message to this aggregate starts from it too
          return { outcome: 'duplicate' as const, fields: { aggregateVersion: read.version } };
        }
        // a fresh event each attempt: an apply that changes its event in place must not change it twice
        const change = await options.apply(read.state as TState | undefined, context.freshEnvelope(), context);
        assertOwnState(change?.state, location, envelope.id);
        const events = await readyEvents((change.events ?? []).map((event, index) => prepareEvent(event, index)));
        const { kept, dropped } = appendAndDrop(read.processed, received, maxProcessed);
        const put = store.nextVersionPut(location, read, change.state, kept, evictedUpToAfter(read.evictedUpTo, dropped), config.subscriberName);
        const written = await store.write(location, put, events, { subscriberName: config.subscriberName, eventId: envelope.id });
        if (written.kind === 'written') {
          context.handOff.set(lane, store.snapshotAfter(location, put));
          const fields = { aggregateVersion: (read.version ?? 0) + 1, ...(events.length > 0 ? { emittedEvents: events.length } : {}) };
          const sign = evictionSign(read.processed, read.evictedUpTo, received, maxProcessed);
          if (sign === undefined) return { outcome: 'processed' as const, fields };
          const since = new Date(sign.epochSeconds * 1000).toISOString();
          context.logger.warn('redelivery past the processed-messages bound', {
            detail:
              `the event time ${envelope.time} is not newer than ` +
              (sign.basis === 'forgotten'
                ? `the newest of the ids aggregate ${describeLocation(location)} has forgotten (${since}; it remembers ${maxProcessed})`
                : `the oldest of the ${maxProcessed} ids aggregate ${describeLocation(location)} remembers (${since})`) +
              ': if this is a redelivery of a message the list has forgotten, it was applied again; raise maxProcessedMessages to cover the redelivery window',
          });
          return { outcome: 'processed' as const, fields, metrics: [CONSUMER_METRICS.EVICTED_REDELIVERY] };
        }
        if (written.kind === 'already-emitted') {
          const { eventIds } = written;
          context.logger.warn('redelivery recognised by its emitted events', {
            detail:
              `the event id is no longer among the ${maxProcessed} ids aggregate ${describeLocation(location)} remembers, but ${derivedEventsInOutbox(eventIds)}: ` +
              'the event was applied before; acknowledged as a duplicate (its payload could not be compared)',
            emittedEventIds: eventIds,
          });
          return { outcome: 'duplicate' as const, fields: { aggregateVersion: read.version } };
        }
        throw new LostVersionRace();
      }, { retryable: contended, ...(maxAttempts === undefined ? {} : { maxAttempts }) });
      return value.outcome === 'processed' ? { ...value, fields: { ...value.fields, attempts } } : value;
    } catch (error) {
      if (!contended(error)) throw error;
      throw new ConcurrentModificationError(
        `aggregate ${describeLocation(location)} was changed by other writers (or its write refused for contention) during all ${attempt} attempts to apply event '${envelope.id}' ` +
          "that the invocation's time allowed; nothing was applied, the message is retried later",
        { cause: error },
      );
    }
  };

  return createBatchHandler<TData>({
    config,
    processingMode: PROCESSING_MODE.AGGREGATE,
    options,
    logger,
    now,
    execute,
    additionalMetrics: [CONSUMER_METRICS.EVICTED_REDELIVERY],
    // an offloaded event whose object is missing: applied already if its aggregate's list holds it (R7-3). `locate`
    // sees the envelope without data; one that needs the data cannot answer, and the message is dead-lettered as missing
    appliedLookup: async (envelope, fingerprint) => {
      let location: AggregateLocation;
      try {
        location = options.locate(envelope as EventEnvelope<TData>);
        assertLocation(location, envelope.id);
      } catch {
        return undefined;
      }
      const read = await store.read(location);
      // another subscriber's aggregate says nothing of this one's applications
      if (read.subscriber !== undefined && read.subscriber !== config.subscriberName) return undefined;
      const seen = findProcessed(read.processed, envelope.id);
      if (seen === undefined) return undefined;
      const received = processedMessageFor(envelope.id, fingerprint, envelope.time);
      if (seen.fingerprintPrefix !== received.fingerprintPrefix) {
        throw new PayloadMismatchError({ eventId: envelope.id, storedFingerprint: seen.fingerprintPrefix, receivedFingerprint: received.fingerprintPrefix, subscriber: config.subscriberName });
      }
      return 'duplicate';
    },
    // messages of one aggregate run one after another: concurrently they would only lose version races
    laneOf: (envelope) => laneKey(options.locate(envelope as EventEnvelope<TData>)),
  });
}
