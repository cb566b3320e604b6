/**
 * An SQS event source mapping (`AWS::Lambda::EventSourceMapping`), with the semantics of
 * https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html and services-sqs-errorhandling.html, run in rounds:
 * each round receives the visible messages, invokes the function with them in concurrent batches, and deletes what
 * succeeded:
 * - the function returned: with `ReportBatchItemFailures`, every message not listed in `batchItemFailures` is deleted
 *   (an invalid response fails the whole batch, see batch-response.ts); without it, every message is deleted;
 * - the function threw, crashed or timed out: nothing is deleted; the messages come back after the queue's visibility
 *   timeout (and are redriven to the dead-letter queue after `maxReceiveCount` receives, by the queue).
 *
 * Faults of SQS's at-least-once delivery, decided by the {@link FaultPlan} with the `duplicate` rate:
 * - `concurrent-receive`: a message is also received by another poller at once (`receiveAgain`), and that copy is
 *   processed in ANOTHER batch of the same round, concurrently with the first;
 * - `lost-delete`: a delete never happens (as if the DeleteMessage call was lost), so the message comes back.
 *
 * A FIFO queue's batches keep each message group in one batch, in order, and get no concurrent copies (SQS does not
 * hand a FIFO message in flight to a second poller); different groups are processed in concurrent batches.
 *
 * Not emulated: the batching window (`MaximumBatchingWindowInSeconds`), the 6 MB payload limit of a batch, event
 * filtering (`FilterCriteria`), Lambda's scaling of pollers and its back-off after failures (the caller picks each
 * round's parallelism).
 */
import type { SimulatedQueue } from '../aws/queue';
import type { ReceivedMessage } from '../aws/sqs-messages';
import type { FaultPlan } from '../faults/fault-plan';
import type { EventSourceMappingModel } from '../model/flow-model';
import type { InvocationOutcome, SimulationObserver } from '../observation/observer';
import { readBatchResponse } from './batch-response';
import type { FunctionRunner } from './function-runner';
import { lambdaSqsEvent } from './sqs-event';

/** The queue a mapping polls: the parts of {@link SimulatedQueue} it uses. */
export type MappedQueue = Pick<SimulatedQueue, 'model' | 'address' | 'receive' | 'receiveAgain' | 'delete'>;

/** The function a mapping invokes: the part of {@link FunctionRunner} it uses. */
export type MappedFunction = Pick<FunctionRunner, 'invoke'>;

/** What a mapping needs. */
export interface SimulatedEventSourceMappingOptions {
  readonly model: EventSourceMappingModel;
  /** The queue of `model.queue`. */
  readonly queue: MappedQueue;
  /** The runner of `model.function`. */
  readonly runner: MappedFunction;
  /** Decides the `concurrent-receive` and `lost-delete` faults (with its `duplicate` rate). */
  readonly faults: FaultPlan;
  /** The `awsRegion` of the records. */
  readonly region: string;
  /** Hears each invocation (`onInvocation`) and each fault (`onFault`, with the queue's key as subject). @default nothing is reported */
  readonly observer?: SimulationObserver;
  /**
   * Whether IAM lets the mapping poll its queue under the function's role (undefined) or why not. A mapping that may
   * not poll receives nothing, as Lambda leaves such a mapping unable to read its source. @default it may
   */
  readonly authorizePolling?: () => Promise<string | undefined>;
}

/** The most messages one ReceiveMessage call returns. */
const SQS_RECEIVE_LIMIT = 10;

/** An event source mapping from a simulated queue to a function runner. */
export class SimulatedEventSourceMapping {
  public readonly model: EventSourceMappingModel;
  private readonly queue: MappedQueue;
  private readonly runner: MappedFunction;
  private readonly faults: FaultPlan;
  private readonly region: string;
  private readonly observer: SimulationObserver;

  public constructor(options: SimulatedEventSourceMappingOptions) {
    const { model, queue } = options;
    if (model.queue !== queue.model.key) throw new Error(`event source mapping ${model.key} polls queue ${model.queue}, but it was given queue ${queue.model.key}`);
    if (!Number.isInteger(model.batchSize) || model.batchSize < 1) {
      throw new RangeError(`BatchSize of event source mapping ${model.key} must be a whole number of at least 1, got ${model.batchSize}`);
    }
    this.model = model;
    this.queue = queue;
    this.runner = options.runner;
    this.faults = options.faults;
    this.region = options.region;
    this.observer = options.observer ?? {};
    this.authorizePolling = options.authorizePolling;
  }

  private readonly authorizePolling: (() => Promise<string | undefined>) | undefined;

  /**
   * Receives the visible messages (up to `parallelism` × `BatchSize`, `parallelism` capped by the mapping's
   * `MaximumConcurrency`), spreads them round-robin over up to `parallelism` batches (so two copies of one message
   * land in different, concurrent invocations; a concurrent copy may add a batch), invokes the batches concurrently,
   * then deletes what succeeded. Resolves with the number of invocations (0 when nothing was visible or the mapping is
   * disabled).
   */
  public async runRound(parallelism: number): Promise<number> {
    const run = await this.prepareRound(parallelism);
    return run();
  }

  /**
   * The first half of {@link runRound}: checks that the mapping may poll and receives the round's batches; resolves
   * with the second half, which invokes them (its first invocation begins before it returns its promise). A run
   * prepares every mapping's round before it runs any, so what the seeded scheduler's first turns can choose from does
   * not depend on how long a mapping's polling check took in real time (IAM's first evaluation of it, say).
   */
  public async prepareRound(parallelism: number): Promise<() => Promise<number>> {
    if (!Number.isInteger(parallelism) || parallelism < 1) {
      throw new RangeError(`runRound of event source mapping ${this.model.key}: parallelism must be a whole number of at least 1, got ${parallelism}`);
    }
    if (!this.model.enabled) return async () => 0;
    if (this.authorizePolling !== undefined && (await this.authorizePolling()) !== undefined) return async () => 0;
    const concurrency = Math.min(parallelism, this.model.maximumConcurrency ?? parallelism);
    const batches = this.queue.model.fifo ? this.fifoBatches(concurrency) : this.standardBatches(concurrency);
    return async () => {
      if (concurrency === 1) {
        // no concurrency asked for: the round's batches (a received copy's included) run one after another, so a run
        // with --concurrency 1 has no races and replays figure for figure from its seed
        for (const batch of batches) await this.process(batch);
      } else {
        await Promise.all(batches.map((batch) => this.process(batch)));
      }
      return batches.length;
    };
  }

  /** Standard queue: receive, add the concurrent copies next to their originals, deal round-robin. */
  private standardBatches(concurrency: number): ReceivedMessage[][] {
    const received = this.receive(concurrency * this.model.batchSize);
    const queueKey = this.queue.model.key;
    const items: ReceivedMessage[] = [];
    let copies = 0;
    for (const message of received) {
      items.push(message);
      if (this.faults.happens(this.faults.rates.duplicate, 'concurrent-receive', queueKey, message.messageId, message.receiveCount)) {
        items.push(this.queue.receiveAgain(message));
        copies += 1;
        this.observer.onFault?.('concurrent-receive', queueKey);
      }
    }
    if (items.length === 0) return [];
    const batchCount = Math.max(Math.min(concurrency, items.length), Math.ceil(items.length / this.model.batchSize), copies > 0 ? 2 : 1);
    const batches: ReceivedMessage[][] = Array.from({ length: batchCount }, () => []);
    items.forEach((message, index) => batches[index % batchCount].push(message));
    return batches;
  }

  /**
   * FIFO queue: receive in calls of at most `BatchSize` messages (the queue hands out no message of a group already in
   * flight, so a group comes whole from one call and is never larger than a batch), then give each group, in order,
   * to the batch with the fewest messages so far. A batch can exceed `BatchSize` when whole groups do not fit evenly.
   */
  private fifoBatches(concurrency: number): ReceivedMessage[][] {
    const received = this.receive(concurrency * this.model.batchSize, Math.min(SQS_RECEIVE_LIMIT, this.model.batchSize));
    const groups = new Map<string, ReceivedMessage[]>();
    for (const message of received) {
      const group = message.attributes.MessageGroupId ?? '';
      groups.set(group, [...(groups.get(group) ?? []), message]);
    }
    const batches: ReceivedMessage[][] = Array.from({ length: Math.min(concurrency, groups.size) }, () => []);
    for (const group of groups.values()) {
      const smallest = batches.reduce((least, batch) => (batch.length < least.length ? batch : least));
      smallest.push(...group);
    }
    return batches;
  }

  /** Up to `count` visible messages, in ReceiveMessage calls of at most `perCall` (10, the SQS maximum). */
  private receive(count: number, perCall: number = SQS_RECEIVE_LIMIT): ReceivedMessage[] {
    const received: ReceivedMessage[] = [];
    while (received.length < count) {
      const messages = this.queue.receive(Math.min(perCall, count - received.length));
      if (messages.length === 0) break;
      received.push(...messages);
    }
    return received;
  }

  /** Invokes the function with one batch, reports the invocation, deletes what succeeded. */
  private async process(batch: readonly ReceivedMessage[]): Promise<void> {
    const [first] = batch;
    const invocationKey = `${this.model.key}|${first.messageId}|${first.receiveCount}`;
    const output: string[] = [];
    const outcome = await this.runner.invoke(lambdaSqsEvent(batch, this.queue.address.arn, this.region), invocationKey, (line) => output.push(line));
    const failedMessageIds = this.failedMessageIdsOf(outcome, batch);
    this.observer.onInvocation?.(this.model.key, {
      functionKey: this.model.function,
      messages: batch.map(({ messageId, origin, receiveCount }) => ({ messageId, origin, receiveCount })),
      outcome,
      failedMessageIds,
      output,
    });
    const failed = new Set(failedMessageIds);
    for (const message of batch) {
      if (!failed.has(message.messageId)) this.deleteMessage(message);
    }
  }

  /** Which messages of the batch failed: all of them unless the function returned (see the class comment). */
  private failedMessageIdsOf(outcome: InvocationOutcome, batch: readonly ReceivedMessage[]): readonly string[] {
    const batchIds = [...new Set(batch.map((message) => message.messageId))];
    if (outcome.kind !== 'returned') return batchIds;
    if (!this.model.reportBatchItemFailures) return [];
    const verdict = readBatchResponse(outcome.response, batchIds);
    return verdict.kind === 'invalid' ? batchIds : verdict.failedMessageIds;
  }

  private deleteMessage(message: ReceivedMessage): void {
    const queueKey = this.queue.model.key;
    if (this.faults.happens(this.faults.rates.duplicate, 'lost-delete', queueKey, message.messageId, message.receiveCount)) {
      this.observer.onFault?.('lost-delete', queueKey, { messageId: message.messageId });
      return;
    }
    this.queue.delete(message.receiptHandle);
  }
}
