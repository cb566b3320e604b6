/**
 * The outbox relay: the EventBridge Pipe from the outbox table's DynamoDB stream to the SNS topic, emulated in process
 * over DynamoDB Local's Streams API.
 */
import { DescribeStreamCommand, GetRecordsCommand, GetShardIteratorCommand, type DynamoDBStreamsClient, type _Record } from '@aws-sdk/client-dynamodb-streams';
import type { FaultPlan } from '../faults/fault-plan';
import type { RelayModel, ResourceKey } from '../model/flow-model';
import type { SimulationObserver } from '../run/observer';
import { eventIdOf } from './message-ids';
import { toPipeStreamEvent, type PipeStreamEvent } from './stream-record';

/** Where the relay publishes: the topic. `SimulatedTopic` satisfies it. */
export interface RelayTarget {
  /** Publishes one message (the rendered event); never fails in the simulation. */
  publish(message: string): { readonly messageId: string };
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
   * fails every retry, so the record is not relayed (the run reports the denial and the events not relayed). @default it may
   */
  readonly authorizePublish?: () => string | undefined;
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
 * The EventBridge Pipe from a DynamoDB stream to a topic, as AWS documents it for DynamoDB stream sources: records are
 * read shard by shard, parents before children, in order within a shard; each becomes the documented stream event
 * (see ./stream-record.ts); it is published if it passes any filter pattern (or there are none), rendered by the input
 * template.
 *
 * At-least-once, as a pipe is: a published record is published a second time when the plan says so
 * (`duplicate-delivery`, as when the pipe retries a batch after a partial failure). If publishing, rendering or a filter
 * throws, {@link SimulatedRelay.poll} rejects and the next poll starts again at that record.
 *
 * Not emulated: publishing is in process and does not fail, so the pipe's `MaximumRetryAttempts`, dead-letter queue,
 * `MaximumRecordAgeInSeconds`, bisection and parallelization factor are read from the template but never exercised;
 * batching windows do not exist (a poll reads everything available). With `StartingPosition` `LATEST`, the position is
 * taken at the first poll, which stands for the pipe's creation: call it before anything is written.
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
      for (const record of records) {
        try {
          this.relay(record);
        } catch (error) {
          shard.iterator = undefined;
          throw this.failure(`relaying stream record ${String(record.eventID)} (sequence number ${String(record.dynamodb?.SequenceNumber)})`, error);
        }
        shard.lastSequenceNumber = record.dynamodb?.SequenceNumber ?? shard.lastSequenceNumber;
        read += 1;
      }
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

  /** Filters, renders and publishes one record (twice when the plan injects a duplicate delivery); reports it. */
  private relay(record: _Record): void {
    const { model, streamArn, region, filters, render, target, faults, observer } = this.options;
    const event: PipeStreamEvent = toPipeStreamEvent(record, { region, streamArn });
    const passes = filters.length === 0 || filters.some((matches) => matches(event));
    if (!passes) {
      observer?.onStreamRecord?.(model.key, { published: false, duplicate: false });
      return;
    }
    const message = render(event);
    if (this.options.authorizePublish?.() !== undefined) {
      observer?.onStreamRecord?.(model.key, { published: false, duplicate: false });
      return;
    }
    target.publish(message);
    // keyed on what the record is about (its event name and item key), not on its eventID (DynamoDB Local draws those
    // at random) or its sequence number (DynamoDB Local counts every write to every table, so concurrent consumers
    // shift it): a seed then replays the same duplicates
    const duplicate = faults.happens(faults.rates.duplicate, 'duplicate-delivery', model.key, event.eventName, JSON.stringify(event.dynamodb.Keys ?? {}));
    if (duplicate) {
      target.publish(message);
      observer?.onFault?.('duplicate-delivery', model.key);
    }
    const eventId = eventIdOf(message);
    observer?.onStreamRecord?.(model.key, { ...(eventId !== undefined && { eventId }), published: true, duplicate });
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

function errorName(error: unknown): string | undefined {
  return error instanceof Error ? error.name : undefined;
}
