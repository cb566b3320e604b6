/**
 * The outbox relay: the EventBridge Pipe from the outbox table's DynamoDB stream to the SNS topic, emulated in process
 * over DynamoDB Local's Streams API.
 */
import { DescribeStreamCommand, GetRecordsCommand, GetShardIteratorCommand, type DynamoDBStreamsClient, type _Record } from '@aws-sdk/client-dynamodb-streams';
import type { FaultPlan } from '../faults/fault-plan';
import type { RelayModel, ResourceKey } from '../model/flow-model';
import type { SimulationObserver } from '../observation/observer';
import { eventIdOf } from './message-ids';
import type { SimulatedQueue } from './queue';
import { pipeRetryOutcome, STREAM_RETENTION_SECONDS, type PipeGiveUpCondition } from './retry-policies';
import { toPipeStreamEvent, type PipeStreamEvent } from './stream-record';

/** Where the relay publishes: the topic (`SimulatedTopic` satisfies it), or a queue (./relay-queue-target.ts). */
export interface RelayTarget {
  /** What the pipe sends to, as its errors name it. @default 'topic' */
  readonly kind?: 'topic' | 'queue';
  /**
   * Publishes one message (the rendered event); `sourceEvent` is the stream record's pipe event, which a queue
   * target's dynamic parameters are evaluated on. Throws when the target refuses the send ({@link refusal} names it).
   */
  publish(message: string, sourceEvent: PipeStreamEvent): { readonly messageId: string };
  /**
   * Why the target would refuse a PublishBatch of these messages (the pipe publishes each batch with one), or undefined.
   * @default it takes any batch
   */
  refusesBatch?(messages: readonly string[]): string | undefined;
  /**
   * What a refusal `error` thrown by {@link publish} says (`SQS refused the send: ...`), or undefined when `error` is
   * not one the target answers a send with. A refused send sends nothing and is refused again on every attempt.
   * @default no error of `publish` is a refusal (it rejects the poll)
   */
  refusal?(error: unknown): string | undefined;
}

/** What {@link SimulatedRelay} needs. */
export interface SimulatedRelayOptions {
  /** The pipe, as the template defines it. */
  readonly model: RelayModel;
  /** The ARN of the source table's stream in DynamoDB Local (`LatestStreamArn`); it is also the events' `eventSourceARN`. */
  readonly streamArn: string;
  /** A Streams client on DynamoDB Local's endpoint (DynamoDB Local serves the Streams API on the same endpoint). */
  readonly streams: DynamoDBStreamsClient;
  readonly target: RelayTarget;
  readonly faults: FaultPlan;
  /** The events' `awsRegion`. */
  readonly region: string;
  readonly observer?: SimulationObserver;
  /** The pipe's compiled filter patterns: a record passes if ANY matches, or when there are none. */
  readonly filters: readonly ((event: unknown) => boolean)[];
  /** Renders the pipe's input template (or the event itself, as JSON, when it has none) into the message. */
  readonly render: (event: unknown) => string;
  /** Whether IAM lets the pipe's role read the stream (undefined) or why not; a pipe that may not read it reads nothing. @default it may */
  readonly authorizeRead?: () => Promise<string | undefined>;
  /**
   * Whether IAM lets the pipe's role publish to the topic (and use its key): undefined, or why not. A denied publish
   * is not retried: the record goes straight to the dead-letter queue, as Pipes does with access errors. @default it may
   */
  readonly authorizePublish?: () => string | undefined;
  /** The pipe's dead-letter queue (`DeadLetterConfig`), where records go once retries run out. @default none: they are discarded */
  readonly deadLetterQueue?: SimulatedQueue;
  /** Whether IAM lets the pipe's role send to its dead-letter queue (and use its key): undefined, or why not. @default it may */
  readonly authorizeDeadLetter?: () => string | undefined;
  /** The pipe's ARN, named in its dead letters. @default a placeholder ARN */
  readonly pipeArn?: string;
  /**
   * The run's clock (its virtual clock): what the relay's dead letters are stamped with, and when each record it reads
   * was committed (the record's `ApproximateCreationDateTime`, see {@link SimulatedRelay}). @default Date.now
   */
  readonly now?: () => number;
}

/** A stream record the relay is publishing: the record, its pipe event and the message it renders to. */
interface RelayedRecord {
  readonly record: _Record;
  readonly event: PipeStreamEvent;
  readonly message: string;
  readonly eventId?: string;
}

/** A record the pipe gave up on, and why. */
interface GivenUp extends RelayedRecord {
  readonly reason: string;
  readonly condition: PipeGiveUpCondition | 'AccessDenied';
  readonly attempts: number;
  /** Retried until the stream trimmed it: gone, with no dead letter whatever the pipe has. */
  readonly trimmed?: boolean;
}

/** GetRecords returns at most 1000 records (DynamoDB Streams API reference, `Limit`). */
const MAX_GET_RECORDS_LIMIT = 1000;

/** GetRecords errors after which a new iterator (after the last record read) is taken once. */
const RENEWABLE_ITERATOR_ERRORS: ReadonlySet<string> = new Set(['ExpiredIteratorException', 'TrimmedDataAccessException']);

/** Where the relay is in one shard. */
interface ShardCursor {
  readonly shardId: string;
  readonly parentShardId?: string;
  /** Where reading starts while nothing has been read from the shard. */
  readonly initialPosition: 'TRIM_HORIZON' | 'LATEST';
  /** The next GetRecords iterator; undefined when it must be (re)obtained. */
  iterator?: string;
  /** The sequence number of the last record handled: reading resumes after it. */
  lastSequenceNumber?: string;
  /** The shard is closed and every record of it was handled. */
  finished: boolean;
}

/**
 * What a record's fault decisions (a failed publish, a duplicate delivery) are keyed on: what the record is about, not
 * its stream eventID (DynamoDB Local draws those at random) nor its sequence number (DynamoDB Local counts every write
 * to every table, so concurrent consumers shift it). An INSERT is its item's first record: the pipe, the event name and
 * the item key name it. A MODIFY or REMOVE writes an item again (the ordered outbox rewrites its aggregate's head item
 * with each event, docs/ORDERED-DELIVERY.md): the event id its message carries tells each apart, so each event of an
 * aggregate draws its own faults instead of all of them sharing the first one's.
 */
function faultKeyOf(pipe: string, event: PipeStreamEvent, eventId: string | undefined): readonly string[] {
  const key = [pipe, event.eventName, JSON.stringify(event.dynamodb.Keys ?? {})];
  return event.eventName === 'INSERT' || eventId === undefined ? key : [...key, eventId];
}

/**
 * The EventBridge Pipe from a DynamoDB stream to a topic, as AWS documents it for DynamoDB stream sources: records are
 * read shard by shard, parents before children, in order within a shard; each becomes the documented stream event
 * (see ./stream-record.ts); it is published if it passes any filter pattern (or there are none), rendered by the input
 * template.
 *
 * At-least-once, as a pipe is: a published record is published a second time when the plan says so
 * (`duplicate-delivery`, as when the pipe retries a batch after a partial failure). If rendering or a filter throws,
 * {@link SimulatedRelay.poll} rejects and the next poll starts again at that record.
 *
 * Failures, as the pipe's retry policy handles them (./retry-policies.ts): the plan decides how many publish attempts
 * of a record fail (`relay-publish-failure`, each counted as a fault); the pipe retries up to `MaximumRetryAttempts` or
 * `MaximumRecordAgeInSeconds`, then puts the batch's metadata on its dead-letter queue (one message per record with
 * `AUTOMATIC_BISECT`), or discards the record without one; a record retried until the stream trims it is lost. A
 * publish IAM denies goes to the dead-letter queue at once. The same holds for every kind of target (the topic, or the
 * ordered relay's FIFO queue); a send the target refuses (SNS refuses a batch, SQS a message: `RelayTarget.refusal`)
 * fails every attempt and is given up by the same policy. Every record given up is reported (`onRelayGaveUp`).
 *
 * Time: DynamoDB Local stamps a record's `ApproximateCreationDateTime` with its own clock, the real one, which the run's
 * frozen clock does not follow (a run simulates whatever time it starts at, and a slow machine takes minutes of real
 * time for seconds of it). On AWS it is when the change was committed, and a pipe's dead letter names the first and last
 * record's (`approximateArrivalOf...`), from which `dlq list` derives the range to replay. So the relay stamps each
 * record with the run's clock when it reads it: the commit's time in the run, since every round reads each commit made
 * before it (simulator/run/relay-catch-up.ts) and the clock moves only between rounds with nothing to do. A pipe's dead
 * letter then names when its events were committed, not when the pipe gave up on them (its `timestamp`).
 *
 * Not emulated: retries take no simulated time and do not hold back the records behind them in the shard (a real
 * pipe keeps a shard's order, so a failing batch delays the rest of its shard); the parallelization factor; batching
 * windows (a poll reads everything available). With `StartingPosition` `LATEST`, the position is taken at the first
 * poll, which stands for the pipe's creation: call it before anything is written.
 */
export class SimulatedRelay {
  private readonly options: SimulatedRelayOptions;
  private readonly shards = new Map<string, ShardCursor>();
  private discovered = false;
  private queue: Promise<unknown> = Promise.resolve();

  public constructor(options: SimulatedRelayOptions) {
    const { batchSize, startingPosition, key } = options.model;
    if (!Number.isInteger(batchSize) || batchSize < 1) throw new RangeError(`relay ${key}: BatchSize must be a positive integer, got ${batchSize}`);
    if (startingPosition !== 'TRIM_HORIZON' && startingPosition !== 'LATEST') {
      throw new RangeError(`relay ${key}: StartingPosition must be TRIM_HORIZON or LATEST for a DynamoDB stream, got '${startingPosition}'`);
    }
    this.options = options;
  }

  /** The relay's resource key. */
  public get key(): ResourceKey {
    return this.options.model.key;
  }

  /**
   * Reads every record available now on every shard (DescribeStream, following new and child shards; TRIM_HORIZON or
   * LATEST per the model's starting position), in order, converts each to the pipe's DynamoDB stream event shape and
   * publishes those that pass the filter. Returns how many records were read. Concurrent calls run one after another.
   */
  public poll(): Promise<number> {
    const run = this.queue.then(() => this.readAvailable());
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Set once IAM refused the pipe's role the stream: nothing is read. */
  public readDenied = false;

  private readonly recordListeners: ((record: _Record) => void)[] = [];

  /** Calls `listener` with every record the relay reads from now on, in the order it reads them (after relaying it). */
  public onRecordRead(listener: (record: _Record) => void): void {
    this.recordListeners.push(listener);
  }

  private async readAvailable(): Promise<number> {
    if (this.options.authorizeRead !== undefined && (await this.options.authorizeRead()) !== undefined) {
      this.readDenied = true;
      return 0;
    }
    await this.discoverShards();
    const readThisPoll = new Set<string>();
    let read = 0;
    for (;;) {
      const next = [...this.shards.values()].find((shard) => !shard.finished && !readThisPoll.has(shard.shardId) && this.parentIsDone(shard));
      if (next === undefined) return read;
      readThisPoll.add(next.shardId);
      read += await this.readShard(next);
    }
  }

  /** A child shard is read once its parent is read to its end (or the parent is gone from the stream). */
  private parentIsDone(shard: ShardCursor): boolean {
    const parent = shard.parentShardId === undefined ? undefined : this.shards.get(shard.parentShardId);
    return parent === undefined || parent.finished;
  }

  /** Adds the shards DescribeStream lists that the relay does not know yet. */
  private async discoverShards(): Promise<void> {
    const startAtLatest = !this.discovered && this.options.model.startingPosition === 'LATEST';
    let exclusiveStartShardId: string | undefined;
    do {
      const { StreamDescription: stream } = await this.send('DescribeStream', () =>
        this.options.streams.send(new DescribeStreamCommand({ StreamArn: this.options.streamArn, ExclusiveStartShardId: exclusiveStartShardId })),
      );
      for (const shard of stream?.Shards ?? []) {
        if (shard.ShardId === undefined || this.shards.has(shard.ShardId)) continue;
        const closed = shard.SequenceNumberRange?.EndingSequenceNumber !== undefined;
        this.shards.set(shard.ShardId, {
          shardId: shard.ShardId,
          ...(shard.ParentShardId !== undefined && { parentShardId: shard.ParentShardId }),
          // LATEST: what was written before the pipe existed is never read; shards created later are read from their start.
          initialPosition: startAtLatest ? 'LATEST' : 'TRIM_HORIZON',
          finished: startAtLatest && closed,
        });
      }
      exclusiveStartShardId = stream?.LastEvaluatedShardId;
    } while (exclusiveStartShardId !== undefined);
    this.discovered = true;
  }

  /** Reads a shard until it has no more records now (or is closed and read to its end). */
  private async readShard(shard: ShardCursor): Promise<number> {
    const limit = Math.min(this.options.model.batchSize, MAX_GET_RECORDS_LIMIT);
    let read = 0;
    let renewedExpiredIterator = false;
    for (;;) {
      shard.iterator ??= await this.iteratorFor(shard);
      let page;
      try {
        page = await this.options.streams.send(new GetRecordsCommand({ ShardIterator: shard.iterator, Limit: limit }));
      } catch (error) {
        shard.iterator = undefined;
        // DynamoDB Local answers TrimmedDataAccessException for the iterator an empty shard returned once records
        // arrive; like an expired iterator, a fresh one from the last record read resumes without loss or repeat
        if (RENEWABLE_ITERATOR_ERRORS.has(errorName(error) ?? '') && !renewedExpiredIterator) {
          renewedExpiredIterator = true;
          continue;
        }
        throw this.failure(`GetRecords on shard ${shard.shardId}`, error);
      }
      const records = page.Records ?? [];
      // a page is one batch of the pipe (its Limit is the batch size): what fails in it is dead-lettered together, and
      // what passes the filters is published with one PublishBatch, which the topic refuses when it is too large
      const givenUp: GivenUp[] = [];
      let refusal: string | undefined;
      try {
        refusal = this.refusedBatch(records);
      } catch (error) {
        shard.iterator = undefined;
        throw this.failure(`relaying a batch of ${records.length} stream records of shard ${shard.shardId}`, error);
      }
      for (const record of records) {
        try {
          const failed = this.relay(record, refusal);
          if (failed !== undefined) givenUp.push(failed);
        } catch (error) {
          shard.iterator = undefined;
          throw this.failure(`relaying stream record ${String(record.eventID)} (sequence number ${String(record.dynamodb?.SequenceNumber)})`, error);
        }
        shard.lastSequenceNumber = record.dynamodb?.SequenceNumber ?? shard.lastSequenceNumber;
        read += 1;
        for (const listener of this.recordListeners) listener(record);
      }
      this.deadLetter(shard.shardId, givenUp);
      shard.iterator = page.NextShardIterator;
      if (page.NextShardIterator === undefined) {
        shard.finished = true;
        return read;
      }
      if (records.length === 0) return read;
    }
  }

  private async iteratorFor(shard: ShardCursor): Promise<string> {
    const position =
      shard.lastSequenceNumber !== undefined
        ? { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER' as const, SequenceNumber: shard.lastSequenceNumber }
        : { ShardIteratorType: shard.initialPosition };
    const { ShardIterator: iterator } = await this.send(`GetShardIterator (${position.ShardIteratorType}) on shard ${shard.shardId}`, () =>
      this.options.streams.send(new GetShardIteratorCommand({ StreamArn: this.options.streamArn, ShardId: shard.shardId, ...position })),
    );
    if (iterator === undefined) throw this.failure(`GetShardIterator on shard ${shard.shardId}`, new Error('no ShardIterator returned'));
    return iterator;
  }

  /**
   * Why the topic refuses the PublishBatch of the records of a batch that pass the filters, or undefined. What a pipe
   * does with a batch SNS refuses is not documented; a refused batch is refused again on every retry, so the simulator
   * gives its records up as when every attempt fails (see {@link relay}), naming SNS's reason.
   */
  private refusedBatch(records: readonly _Record[]): string | undefined {
    const { target } = this.options;
    if (target.refusesBatch === undefined) return undefined;
    const messages = records.flatMap((record) => {
      const event = this.pipeEvent(record);
      return this.passes(event) ? [this.options.render(event)] : [];
    });
    const refusal = messages.length === 0 ? undefined : target.refusesBatch(messages);
    return refusal === undefined ? undefined : `SNS refused its batch: ${refusal}`;
  }

  /** The pipe's event of a record read now, committed at the run's time now (see {@link SimulatedRelay}: Time). */
  private pipeEvent(record: _Record): PipeStreamEvent {
    const event = toPipeStreamEvent(record, { region: this.options.region, streamArn: this.options.streamArn });
    const committedAt = Math.floor((this.options.now ?? Date.now)() / 1000);
    return { ...event, dynamodb: { ...event.dynamodb, ApproximateCreationDateTime: committedAt } };
  }

  private passes(event: PipeStreamEvent): boolean {
    const { filters } = this.options;
    return filters.length === 0 || filters.some((matches) => matches(event));
  }

  /**
   * Filters, renders and publishes one record (twice when the plan injects a duplicate delivery); reports it. A record
   * whose publish attempts fail until the pipe's retry policy gives up (or that IAM does not let it publish, whose batch
   * the topic refuses: `batchRefusal`, or whose send the target refuses) is returned, to be dead-lettered with its batch.
   */
  private relay(record: _Record, batchRefusal?: string): GivenUp | undefined {
    let refusal = batchRefusal;
    const { model, render, target, faults, observer } = this.options;
    const event = this.pipeEvent(record);
    if (!this.passes(event)) {
      observer?.onStreamRecord?.(model.key, { published: false, duplicate: false });
      return undefined;
    }
    const message = render(event);
    const eventId = eventIdOf(message);
    const relayed: RelayedRecord = { record, event, message, ...(eventId !== undefined && { eventId }) };
    const recordKey = faultKeyOf(model.key, event, eventId);
    const denied = this.options.authorizePublish?.();
    if (denied !== undefined) {
      // Pipes sends what fails on an access error straight to the dead-letter queue, without retries
      observer?.onStreamRecord?.(model.key, { ...(eventId !== undefined && { eventId }), published: false, duplicate: false });
      return { ...relayed, reason: `the pipe may not ${target.kind === 'queue' ? 'send to its target queue' : 'publish to its topic'}: ${denied}`, condition: 'AccessDenied', attempts: 1 };
    }
    const failedAttempts = refusal !== undefined ? Number.POSITIVE_INFINITY : faults.failedAttempts(faults.rates.relayFailure ?? 0, 'relay-publish-failure', ...recordKey);
    let outcome = pipeRetryOutcome(failedAttempts, model);
    if (outcome.kind === 'published') {
      // the attempt that is not failed by the plan is made; a target that refuses the send refuses it on every attempt
      // (a target error, which the pipe retries as it does any failed attempt: eb-pipes-error-troubleshooting.html)
      try {
        target.publish(message, event);
      } catch (error) {
        refusal = target.refusal?.(error);
        if (refusal === undefined) throw error;
        outcome = pipeRetryOutcome(Number.POSITIVE_INFINITY, model);
      }
    }
    const failures = outcome.kind === 'published' ? outcome.retries : outcome.attempts;
    if (failures > 0 && refusal === undefined) observer?.onFault?.('relay-publish-failure', model.key, { count: failures });
    if (outcome.kind !== 'published') {
      observer?.onStreamRecord?.(model.key, { ...(eventId !== undefined && { eventId }), published: false, duplicate: false });
      const retries = `MaximumRetryAttempts ${model.maximumRetryAttempts}, MaximumRecordAgeInSeconds ${model.maximumRecordAgeSeconds}`;
      const refused = refusal === undefined ? '' : ` (${refusal})`;
      if (outcome.kind === 'trimmed') {
        return {
          ...relayed,
          reason: `every publish attempt failed${refused} and the pipe retried it until DynamoDB Streams trimmed it after ${STREAM_RETENTION_SECONDS / 3600} hours (${retries}: both infinite)`,
          condition: 'RecordAgeExceeded',
          attempts: outcome.attempts,
          trimmed: true,
        };
      }
      const why = outcome.condition === 'RetryAttemptsExhausted' ? 'its retries ran out' : 'it grew older than the maximum record age';
      const failed = refusal === undefined ? 'failed (injected)' : `failed${refused}`;
      return { ...relayed, reason: `${outcome.attempts} publish attempt(s) ${failed} and ${why} (${retries})`, condition: outcome.condition, attempts: outcome.attempts };
    }
    // keyed on what the record is about (see faultKeyOf): a seed then replays the same duplicates
    const duplicate = faults.happens(faults.rates.duplicate, 'duplicate-delivery', ...recordKey);
    if (duplicate) {
      target.publish(message, event);
      observer?.onFault?.('duplicate-delivery', model.key);
    }
    observer?.onStreamRecord?.(model.key, { ...(eventId !== undefined && { eventId }), published: true, duplicate });
    return undefined;
  }

  /**
   * Puts what the pipe gave up on in a batch on its dead-letter queue: one message per record when the pipe bisects
   * failing batches (the halving ends with the failing record alone), else one for the batch. A record retried until
   * the stream trimmed it is lost whatever the pipe has; so is one the pipe has no dead-letter queue for, or may not
   * send there.
   */
  private deadLetter(shardId: string, givenUp: readonly GivenUp[]): void {
    if (givenUp.length === 0) return;
    const { model, deadLetterQueue, observer } = this.options;
    for (const item of givenUp) if (item.trimmed === true) observer?.onRelayGaveUp?.(model.key, { eventIds: idsOf([item]), reason: item.reason });
    const remaining = givenUp.filter((item) => item.trimmed !== true);
    const batches = model.bisectOnFailure ? remaining.map((item) => [item]) : remaining.length > 0 ? [remaining] : [];
    for (const batch of batches) {
      const reason = batch[0]!.reason;
      const eventIds = idsOf(batch);
      if (deadLetterQueue === undefined) {
        observer?.onRelayGaveUp?.(model.key, { eventIds, reason: `${reason}; and the pipe has no dead-letter queue (DeadLetterConfig), so the record is discarded` });
        continue;
      }
      const denied = this.options.authorizeDeadLetter?.();
      if (denied !== undefined) {
        observer?.onRelayGaveUp?.(model.key, { eventIds, reason: `${reason}; and ${denied}` });
        continue;
      }
      deadLetterQueue.send({
        body: JSON.stringify(this.batchInfo(shardId, batch)),
        origin: { via: 'pipe-dead-letter', ...(eventIds.length === 1 && { eventId: eventIds[0] }), deliveryFailure: reason },
      });
      observer?.onRelayGaveUp?.(model.key, { eventIds, reason, deadLetterQueue: deadLetterQueue.model.key });
    }
  }

  /**
   * The dead letter of a stream batch: metadata that points into the stream, not the records (they stay in the stream
   * until it trims them). Shaped as Lambda documents its on-failure record for DynamoDB streams
   * (`DDBStreamBatchInfo`); EventBridge documents no sample for pipes, so read only the batch info from it.
   */
  private batchInfo(shardId: string, batch: readonly GivenUp[]): Record<string, unknown> {
    const first = batch[0]!;
    const last = batch[batch.length - 1]!;
    const arrival = (item: GivenUp): string | undefined => {
      const seconds = item.event.dynamodb.ApproximateCreationDateTime;
      return typeof seconds === 'number' ? new Date(seconds * 1000).toISOString() : undefined;
    };
    return {
      requestContext: { pipeArn: this.options.pipeArn ?? `arn:aws:pipes:${this.options.region}:000000000000:pipe/${this.options.model.key}`, condition: first.condition, approximateInvokeCount: Math.max(...batch.map((item) => item.attempts)) },
      version: '1.0',
      timestamp: new Date((this.options.now ?? Date.now)()).toISOString(),
      DDBStreamBatchInfo: {
        shardId,
        startSequenceNumber: first.record.dynamodb?.SequenceNumber,
        endSequenceNumber: last.record.dynamodb?.SequenceNumber,
        approximateArrivalOfFirstRecord: arrival(first),
        approximateArrivalOfLastRecord: arrival(last),
        batchSize: batch.length,
        streamArn: this.options.streamArn,
      },
    };
  }

  private async send<T>(what: string, request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (error) {
      throw this.failure(what, error);
    }
  }

  private failure(what: string, error: unknown): Error {
    const reason = error instanceof Error ? error.message : String(error);
    return new Error(`relay ${this.options.model.key}: ${what} on stream ${this.options.streamArn} failed: ${reason}`, { cause: error });
  }
}

function idsOf(items: readonly RelayedRecord[]): string[] {
  return items.flatMap((item) => (item.eventId === undefined ? [] : [item.eventId]));
}

function errorName(error: unknown): string | undefined {
  return error instanceof Error ? error.name : undefined;
}
