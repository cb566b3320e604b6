/**
 * One SQS queue, emulated in process on the simulation's {@link VirtualClock}, with the semantics the SQS Developer
 * Guide documents and the flow depends on:
 * - visibility timeout: a received message is invisible for `VisibilityTimeout` seconds, then visible again unless it
 *   was deleted (sqs-visibility-timeout.html);
 * - receipt handles: every receive gives a new one and only the latest deletes the message; an older one "succeeds,
 *   but the message will not be deleted" (DeleteMessage API reference);
 * - redrive: a message received `maxReceiveCount` times is moved to the dead-letter queue instead of being received
 *   again (sqs-dead-letter-queues.html); it keeps its message id, and, on a standard queue, its enqueue timestamp
 *   (setting-up-dead-letter-queue-retention.html; a FIFO dead-letter queue resets it);
 * - retention: a message older than `MessageRetentionPeriod` is gone;
 * - FIFO: messages of a group are received in order and none while another of the group is in flight; a message
 *   deduplication id seen in the last 5 minutes is accepted but not enqueued again (FIFO-queues-exactly-once-processing.html);
 *   a send needs a `MessageGroupId`, and a `MessageDeduplicationId` unless the queue has `ContentBasedDeduplication`
 *   (SendMessage API reference), else it is refused as SQS refuses it.
 *
 * Not emulated: delay queues and per-message delays, long polling (a receive answers at once), the sampling of short
 * polling (every visible message is a candidate), purging, message system attributes
 * (AWSTraceHeader), fair queues, KMS.
 */
import { createHash } from 'node:crypto';
import type { QueueModel } from '../model/flow-model';
import type { MessageOrigin, SimulationObserver } from '../observation/observer';
import type { VirtualClock } from './clock';
import { ContentIds } from './message-ids';
import { md5OfBody, md5OfMessageAttributes } from './sqs-md5';
import { SqsError } from './sqs-errors';
import { checkSqsMessage } from './sqs-message-validation';
import { checkQueueSettings, checkWithin, VISIBILITY_TIMEOUT_SECONDS } from './queue-settings';
import type { QueueAddress, ReceivedMessage, SendMessageInput, SendMessageResult, SqsMessageAttribute, StoredMessage } from './sqs-messages';
import { SIMULATED_SENDER_ID } from './sqs-messages';

/** How long a FIFO queue remembers a message deduplication id: 5 minutes. */
export const FIFO_DEDUPLICATION_INTERVAL_MS = 5 * 60 * 1000;

interface QueuedMessage {
  readonly messageId: string;
  readonly body: string;
  readonly md5OfBody: string;
  readonly messageAttributes: Readonly<Record<string, SqsMessageAttribute>>;
  readonly origin: MessageOrigin;
  readonly sentAt: number;
  readonly messageGroupId?: string;
  readonly messageDeduplicationId?: string;
  readonly sequenceNumber?: string;
  /** Set on a message SQS moved here from a source queue. */
  readonly deadLetterQueueSourceArn?: string;
  receiveCount: number;
  firstReceivedAt?: number;
  /** Virtual ms from which it can be received; in flight while in the future. */
  visibleAt: number;
  latestReceiptHandle?: string;
}

/** A message about to be enqueued. */
type NewMessage = Omit<QueuedMessage, 'md5OfBody' | 'receiveCount' | 'visibleAt' | 'firstReceivedAt' | 'latestReceiptHandle'> & { readonly receiveCount?: number };

/** An SQS queue on the virtual clock. */
export class SimulatedQueue {
  public readonly model: QueueModel;
  public readonly address: QueueAddress;
  /** Where messages go after `maxReceiveCount` receives, when the queue has a redrive policy. */
  public readonly deadLetterQueue?: SimulatedQueue;
  /** Virtual epoch ms the queue was created at (`CreatedTimestamp`). */
  public readonly createdAt: number;

  /** The clock the queue runs on; a message move task from it keeps the same time. */
  public readonly clock: VirtualClock;

  private readonly observer: SimulationObserver;
  /** What runs before each operation: processes beside the queue that catch up with the clock (a message move task). */
  private readonly operationHooks = new Set<() => void>();
  /** Every message on the queue by id, in the order they were enqueued (the order FIFO groups keep). */
  private readonly stored = new Map<string, QueuedMessage>();
  /** Every receipt handle ever issued, with its message id, to tell a stale handle from one never issued. */
  private readonly issuedHandles = new Map<string, string>();
  /** FIFO: deduplication id → what the first send with it answered, and when. */
  private readonly deduplication = new Map<string, { readonly result: SendMessageResult; readonly at: number }>();
  /** Keyed on the event a message carries (else its body), so the faults keyed on a message id follow the message, not the send order. */
  private readonly messageIds: ContentIds;
  private sequenceNumbers = 0;
  /** Earliest time a message expires, to skip the retention scan until then. */
  private nextExpiryAt = Number.POSITIVE_INFINITY;

  public constructor(options: { model: QueueModel; address: QueueAddress; clock: VirtualClock; deadLetterQueue?: SimulatedQueue; observer?: SimulationObserver }) {
    const { model, deadLetterQueue } = options;
    checkQueueSettings(model, deadLetterQueue);
    this.model = model;
    this.address = options.address;
    this.deadLetterQueue = deadLetterQueue;
    this.clock = options.clock;
    this.observer = options.observer ?? {};
    this.messageIds = new ContentIds(`sqs:${options.address.arn}`);
    this.createdAt = options.clock.now();
  }

  /**
   * Runs `hook` before every operation that reads or changes this queue's messages (send, receive, change visibility,
   * delete, and the counts and listings), so that a process running on the clock beside the queue (a message move
   * task) has done what it was due to do by then. Returns what removes the hook.
   */
  public beforeEachOperation(hook: () => void): () => void {
    this.operationHooks.add(hook);
    return () => {
      this.operationHooks.delete(hook);
    };
  }

  /** SendMessage. Throws an {@link SqsError} for a message SQS would refuse. */
  public send(input: SendMessageInput): SendMessageResult {
    this.runOperationHooks();
    return this.sendAt(input, this.clock.now());
  }

  /** SendMessage as of `now` (virtual ms; now, or a moment since the last operation on this queue). */
  private sendAt(input: SendMessageInput, now: number): SendMessageResult {
    this.expire(now);
    checkSqsMessage(input.body, input.messageAttributes);
    const messageAttributes = { ...(input.messageAttributes ?? {}) };
    if (!this.model.fifo) {
      if (input.messageDeduplicationId !== undefined) {
        throw new SqsError('InvalidParameterValueException', `MessageDeduplicationId applies to FIFO queues only; queue ${this.address.name} is a standard queue`);
      }
      return this.enqueue({ ...input, messageAttributes, sentAt: now, messageId: this.messageIds.next(idKey(input)) });
    }
    if (input.messageGroupId === undefined || input.messageGroupId.length === 0) {
      throw new SqsError('MissingRequiredParameterException', `the request must contain the parameter MessageGroupId (queue ${this.address.name} is FIFO)`);
    }
    if (input.messageDeduplicationId === undefined && this.model.contentBasedDeduplication !== true) {
      // the SendMessage API reference: without one, and without ContentBasedDeduplication, "the action fails with an error"
      throw new SqsError(
        'InvalidParameterValueException',
        `The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly (queue ${this.address.name})`,
      );
    }
    const deduplicationId = input.messageDeduplicationId ?? contentDeduplicationId(input.body);
    this.forgetDeduplicationIdsBefore(now - FIFO_DEDUPLICATION_INTERVAL_MS);
    const seen = this.deduplication.get(deduplicationId);
    if (seen !== undefined) return seen.result;
    this.sequenceNumbers += 1;
    const result = this.enqueue({
      ...input,
      messageAttributes,
      sentAt: now,
      messageId: this.messageIds.next(idKey(input)),
      messageDeduplicationId: deduplicationId,
      sequenceNumber: String(this.sequenceNumbers).padStart(20, '0'),
    });
    this.deduplication.set(deduplicationId, { result, at: now });
    return result;
  }

  /**
   * ReceiveMessage: up to maxMessages visible messages; each becomes invisible for the visibility timeout (the
   * queue's, or `visibilityTimeoutSeconds` as the request's `VisibilityTimeout` sets it) and its receive count grows.
   */
  public receive(maxMessages: number, visibilityTimeoutSeconds?: number): ReceivedMessage[] {
    if (!Number.isInteger(maxMessages) || maxMessages < 1) throw new RangeError(`receive from queue ${this.model.key}: maxMessages must be a positive integer, got ${maxMessages}`);
    this.runOperationHooks();
    const now = this.clock.now();
    this.expire(now);
    const busyGroups = this.model.fifo ? this.groupsInFlight(now) : undefined;
    const received: ReceivedMessage[] = [];
    for (const message of this.stored.values()) {
      if (received.length >= maxMessages) break;
      if (message.visibleAt > now) continue;
      if (busyGroups !== undefined && message.messageGroupId !== undefined && busyGroups.has(message.messageGroupId)) continue;
      if (this.model.redrive !== undefined && message.receiveCount >= this.model.redrive.maxReceiveCount) {
        this.redrive(message, now);
        continue;
      }
      received.push(this.deliver(message, now, visibilityTimeoutSeconds));
    }
    return received;
  }

  /**
   * ChangeMessageVisibility: the message of `receiptHandle` becomes visible `visibilityTimeoutSeconds` from now (0: at
   * once). As SQS: only the latest receipt handle of a message in flight changes it; a handle never issued is refused.
   */
  public changeVisibility(receiptHandle: string, visibilityTimeoutSeconds: number): void {
    checkWithin('VisibilityTimeout', visibilityTimeoutSeconds, VISIBILITY_TIMEOUT_SECONDS);
    const messageId = this.issuedHandles.get(receiptHandle);
    if (messageId === undefined) throw new SqsError('ReceiptHandleIsInvalid', `receipt handle '${receiptHandle}' was never issued by queue ${this.address.name}`);
    this.runOperationHooks();
    const now = this.clock.now();
    this.expire(now);
    const message = this.stored.get(messageId);
    if (message === undefined || message.latestReceiptHandle !== receiptHandle || message.visibleAt <= now) {
      throw new SqsError('MessageNotInflight', `the message of receipt handle '${receiptHandle}' is not in flight on queue ${this.address.name}`);
    }
    message.visibleAt = now + visibilityTimeoutSeconds * 1000;
  }

  /**
   * One step of a message move task (StartMessageMoveTask, ./message-move-task.ts) from this dead-letter queue, as of
   * `at` (virtual ms, not before the last operation on either queue): the first message visible then is sent to
   * `destination` as a NEW message (a new message id, the body and attributes kept, enqueued at `at`) and removed here.
   * Returns false when no message was visible to move.
   */
  public moveFirstVisibleTo(destination: SimulatedQueue, at: number): boolean {
    this.expire(at);
    for (const message of this.stored.values()) {
      if (message.visibleAt > at) continue;
      destination.sendAt(
        { body: message.body, messageAttributes: message.messageAttributes, messageGroupId: message.messageGroupId, origin: { ...message.origin, via: 'moved-back' } },
        at,
      );
      this.stored.delete(message.messageId);
      this.observer.onDeleted?.(this.model.key, { messageId: message.messageId, origin: message.origin, receiveCount: message.receiveCount });
      return true;
    }
    return false;
  }

  /**
   * The SAME message received again by another poller right away (an SQS at-least-once duplicate): its receive count grows and it gets a new receipt handle, which is now the only one that deletes it.
   * It is not redriven here, even past maxReceiveCount (the next {@link receive} does that). Throws when the message is no longer on the queue, and on a FIFO queue.
   */
  public receiveAgain(message: ReceivedMessage): ReceivedMessage {
    if (this.model.fifo) {
      throw new Error(`queue ${this.model.key} is FIFO: SQS does not hand a FIFO message to a second poller while it is in flight, so receiveAgain does not apply`);
    }
    this.runOperationHooks();
    const now = this.clock.now();
    this.expire(now);
    const stored = this.stored.get(message.messageId);
    if (stored === undefined) {
      throw new Error(`message ${message.messageId} is no longer on queue ${this.model.key} (deleted, moved to the dead-letter queue or expired); it cannot be received again`);
    }
    return this.deliver(stored, now);
  }

  /** DeleteMessage. As SQS documents: a receipt handle that is not the latest for the message succeeds but deletes nothing. Returns whether it deleted. */
  public delete(receiptHandle: string): boolean {
    const messageId = this.issuedHandles.get(receiptHandle);
    if (messageId === undefined) {
      throw new SqsError('ReceiptHandleIsInvalid', `receipt handle '${receiptHandle}' was never issued by queue ${this.address.name}`);
    }
    this.runOperationHooks();
    this.expire(this.clock.now());
    const message = this.stored.get(messageId);
    if (message === undefined || message.latestReceiptHandle !== receiptHandle) return false;
    this.stored.delete(messageId);
    this.observer.onDeleted?.(this.model.key, { messageId, origin: message.origin, receiveCount: message.receiveCount });
    return true;
  }

  /** Earliest time (virtual ms) an in-flight message becomes visible again, or undefined when none is in flight. */
  public nextVisibleAt(): number | undefined {
    this.runOperationHooks();
    const now = this.clock.now();
    this.expire(now);
    let earliest: number | undefined;
    for (const message of this.stored.values()) {
      if (message.visibleAt > now && (earliest === undefined || message.visibleAt < earliest)) earliest = message.visibleAt;
    }
    return earliest;
  }

  /** How many messages are visible, in flight, and on the queue in all. */
  public counts(): { readonly visible: number; readonly inFlight: number; readonly total: number } {
    this.runOperationHooks();
    const now = this.clock.now();
    this.expire(now);
    let inFlight = 0;
    for (const message of this.stored.values()) if (message.visibleAt > now) inFlight += 1;
    return { visible: this.stored.size - inFlight, inFlight, total: this.stored.size };
  }

  /** Every message still on the queue (visible or in flight), for the end-of-run inspection of dead-letter queues. */
  public messages(): readonly StoredMessage[] {
    this.runOperationHooks();
    this.expire(this.clock.now());
    return [...this.stored.values()].map((message) => ({
      messageId: message.messageId,
      body: message.body,
      messageAttributes: message.messageAttributes,
      receiveCount: message.receiveCount,
      sentAt: message.sentAt,
      origin: message.origin,
    }));
  }

  private runOperationHooks(): void {
    for (const hook of [...this.operationHooks]) hook();
  }

  private enqueue(message: NewMessage): SendMessageResult {
    const queued: QueuedMessage = {
      messageId: message.messageId,
      body: message.body,
      md5OfBody: md5OfBody(message.body),
      messageAttributes: message.messageAttributes,
      origin: message.origin,
      sentAt: message.sentAt,
      messageGroupId: message.messageGroupId,
      messageDeduplicationId: message.messageDeduplicationId,
      sequenceNumber: message.sequenceNumber,
      deadLetterQueueSourceArn: message.deadLetterQueueSourceArn,
      receiveCount: message.receiveCount ?? 0,
      visibleAt: Number.NEGATIVE_INFINITY,
    };
    this.stored.set(queued.messageId, queued);
    this.nextExpiryAt = Math.min(this.nextExpiryAt, this.expiresAt(queued));
    this.observer.onEnqueued?.(this.model.key, { messageId: queued.messageId, origin: queued.origin });
    const md5OfAttributes = md5OfMessageAttributes(queued.messageAttributes);
    return {
      messageId: queued.messageId,
      md5OfBody: queued.md5OfBody,
      ...(md5OfAttributes === undefined ? {} : { md5OfMessageAttributes: md5OfAttributes }),
      ...(queued.sequenceNumber === undefined ? {} : { sequenceNumber: queued.sequenceNumber }),
    };
  }

  private deliver(message: QueuedMessage, now: number, visibilityTimeoutSeconds = this.model.visibilityTimeoutSeconds): ReceivedMessage {
    message.receiveCount += 1;
    message.firstReceivedAt ??= now;
    message.visibleAt = now + visibilityTimeoutSeconds * 1000;
    const receiptHandle = Buffer.from(`${this.address.name}/${message.messageId}/${message.receiveCount}`, 'utf8').toString('base64');
    message.latestReceiptHandle = receiptHandle;
    this.issuedHandles.set(receiptHandle, message.messageId);
    const attributes: Record<string, string> = {
      ApproximateReceiveCount: String(message.receiveCount),
      SentTimestamp: String(message.sentAt),
      SenderId: SIMULATED_SENDER_ID,
      ApproximateFirstReceiveTimestamp: String(message.firstReceivedAt),
    };
    if (message.messageGroupId !== undefined) attributes.MessageGroupId = message.messageGroupId;
    if (message.messageDeduplicationId !== undefined) attributes.MessageDeduplicationId = message.messageDeduplicationId;
    if (message.sequenceNumber !== undefined) attributes.SequenceNumber = message.sequenceNumber;
    if (message.deadLetterQueueSourceArn !== undefined) attributes.DeadLetterQueueSourceArn = message.deadLetterQueueSourceArn;
    return {
      messageId: message.messageId,
      receiptHandle,
      body: message.body,
      md5OfBody: message.md5OfBody,
      attributes,
      messageAttributes: message.messageAttributes,
      receiveCount: message.receiveCount,
      origin: message.origin,
    };
  }

  /** Moves a message that has used up its receives to the dead-letter queue. */
  private redrive(message: QueuedMessage, now: number): void {
    const deadLetterQueue = this.deadLetterQueue;
    if (deadLetterQueue === undefined) return;
    this.stored.delete(message.messageId);
    deadLetterQueue.acceptRedriven(
      {
        messageId: message.messageId,
        body: message.body,
        messageAttributes: message.messageAttributes,
        origin: { ...message.origin, via: 'redrive', redrivenFrom: { queue: this.model.key, receiveCount: message.receiveCount } },
        // a standard queue keeps the enqueue timestamp, a FIFO one resets it (setting-up-dead-letter-queue-retention.html)
        sentAt: this.model.fifo ? now : message.sentAt,
        messageGroupId: message.messageGroupId,
        messageDeduplicationId: message.messageDeduplicationId,
        sequenceNumber: message.sequenceNumber,
        deadLetterQueueSourceArn: this.address.arn,
        receiveCount: message.receiveCount,
      },
      now,
    );
    this.observer.onRedriven?.(this.model.key, {
      messageId: message.messageId,
      origin: message.origin,
      receiveCount: message.receiveCount,
      deadLetterQueue: deadLetterQueue.model.key,
    });
  }

  private acceptRedriven(message: NewMessage, now: number): void {
    this.expire(now);
    this.enqueue(message);
  }

  private groupsInFlight(now: number): Set<string> {
    const groups = new Set<string>();
    for (const message of this.stored.values()) {
      if (message.visibleAt > now && message.messageGroupId !== undefined) groups.add(message.messageGroupId);
    }
    return groups;
  }

  private expiresAt(message: QueuedMessage): number {
    return message.sentAt + this.model.messageRetentionSeconds * 1000;
  }

  /** Drops the messages that outlived the retention period. */
  private expire(now: number): void {
    if (now < this.nextExpiryAt) return;
    this.nextExpiryAt = Number.POSITIVE_INFINITY;
    for (const message of [...this.stored.values()]) {
      const expiresAt = this.expiresAt(message);
      if (expiresAt <= now) {
        this.stored.delete(message.messageId);
        this.observer.onExpired?.(this.model.key, { messageId: message.messageId, origin: message.origin, expiredAt: expiresAt });
      } else {
        this.nextExpiryAt = Math.min(this.nextExpiryAt, expiresAt);
      }
    }
  }

  /** Forgets the deduplication ids first seen at or before `cutoff` (the map is in the order they were seen). */
  private forgetDeduplicationIdsBefore(cutoff: number): void {
    for (const [id, entry] of this.deduplication) {
      if (entry.at > cutoff) return;
      this.deduplication.delete(id);
    }
  }
}

/**
 * What a message id is keyed on: the event it carries and how it came (stable from run to run, where a body holds
 * timestamps of the run), else the body.
 */
function idKey(input: SendMessageInput): string {
  const { eventId, via, subscription } = input.origin;
  return eventId === undefined ? input.body : JSON.stringify([via, subscription ?? null, eventId]);
}

/** What content-based deduplication uses as the deduplication id: the SHA-256 of the body (hex). */
function contentDeduplicationId(body: string): string {
  return createHash('sha256').update(body, 'utf8').digest('hex');
}
