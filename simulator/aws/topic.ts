/**
 * A standard SNS topic with SQS subscriptions, emulated in process: Publish fans a message out to every subscription
 * whose filter policy matches, as the SNS Developer Guide describes the delivery to SQS (sns-sqs-as-subscriber.html):
 * - without raw delivery the queue gets the SNS notification JSON (Type, MessageId, TopicArn, Message, Timestamp,
 *   SignatureVersion, Signature, SigningCertURL, UnsubscribeURL, and MessageAttributes when there are any);
 * - with `RawMessageDelivery` it gets the message itself, and the message attributes become SQS message attributes
 *   (sns-large-payload-raw-message-delivery.html);
 * - delivery is at least once: the fault plan decides when a delivery arrives twice (two SQS messages with the same
 *   SNS MessageId, as an SNS retry would give);
 * - delivery attempts fail when the plan says so (`sns-delivery-failure`, each counted as a fault) and are retried
 *   under the delivery policy for SQS endpoints; when it runs out (every attempt failed), or when IAM does not let SNS
 *   deliver (the queue's policy, its key's policy), the message goes to the subscription's dead-letter queue, or is
 *   lost (and reported) when there is none or SNS may not send there either.
 *
 * A FIFO topic (`FifoTopic`) takes a `MessageGroupId` on every publish and a `MessageDeduplicationId` (or content-based
 * deduplication, `ContentBasedDeduplication`); a deduplication id seen in the last 5 minutes is accepted and answered with
 * the first publish's message id but not delivered again (fifo-message-dedup.html); its subscriptions' FIFO queues get
 * each message with its group and deduplication id, in the order published (fifo-message-delivery.html), so a
 * duplicate delivery the plan injects is one the queue deduplicates.
 *
 * Not emulated: subscription protocols other than `sqs`, the delay of a retried delivery (it arrives at once), message signatures (the Signature
 * is a placeholder that does not verify), Subject, MessageStructure.
 */
import { createHash } from 'node:crypto';
import type { FaultPlan } from '../faults/fault-plan';
import type { SubscriptionModel, TopicModel } from '../model/flow-model';
import type { MessageOrigin, SimulationObserver } from '../observation/observer';
import type { VirtualClock } from './clock';
import { ContentIds, deterministicUuid, eventIdOf, eventSubjectOf } from './message-ids';
import type { SimulatedQueue } from './queue';
import type { SendMessageInput, SqsMessageAttribute } from './sqs-messages';
import { SNS_SQS_DELIVERY_ATTEMPTS, snsDelivers } from './retry-policies';

/** Largest message SNS Publish accepts, message and attributes together, unless the topic's `MaximumMessageSize` says otherwise: 256 KiB. */
export const MAX_SNS_MESSAGE_BYTES = 262_144;

/** The most messages one PublishBatch takes (SNS API reference, PublishBatch: `TooManyEntriesInBatchRequest` beyond). */
export const MAX_PUBLISH_BATCH_ENTRIES = 10;

/** How long a FIFO topic remembers a message deduplication id: 5 minutes (SNS Developer Guide, fifo-message-dedup.html). */
export const SNS_FIFO_DEDUPLICATION_INTERVAL_MS = 5 * 60 * 1000;

/** The options of a Publish besides the message. */
export interface PublishOptions {
  readonly messageAttributes?: Record<string, SqsMessageAttribute>;
  /** `MessageGroupId`: required on a FIFO topic. */
  readonly messageGroupId?: string;
  /** `MessageDeduplicationId`: FIFO topics only; required unless the topic has content-based deduplication. */
  readonly messageDeduplicationId?: string;
}

/** A subscription of the topic and the queue it delivers to. */
export interface TopicSubscriptionTarget {
  readonly model: SubscriptionModel;
  readonly queue: SimulatedQueue;
  /** The subscription's dead-letter queue (`RedrivePolicy`), where SNS puts what it cannot deliver. @default none */
  readonly deadLetterQueue?: SimulatedQueue;
  /**
   * Whether SNS may deliver to the queue (undefined) or why not (IAM: the queue's policy, its key's policy); each call
   * is one delivery attempt. A denied delivery fails every retry of SNS's delivery policy, so the message goes to the
   * dead-letter queue, or is lost when there is none or SNS may not send there either. @default every delivery is allowed
   */
  readonly authorizeDelivery?: () => string | undefined;
  /** The same for the dead-letter queue. @default allowed */
  readonly authorizeDeadLetter?: () => string | undefined;
}

/**
 * A subscription of the topic as SNS lists it (ListSubscriptionsByTopic): `subscriptionArn` is `PendingConfirmation`
 * while the endpoint's owner has not confirmed it.
 */
export interface ListedSubscription {
  readonly subscriptionArn: string;
  /** The account that owns the subscription. */
  readonly owner: string;
  /** `sqs`, `https`, `lambda`, ... */
  readonly protocol: string;
  /** For `sqs`, the queue's ARN. */
  readonly endpoint: string;
  /** Its `FilterPolicy` (GetSubscriptionAttributes answers it as JSON text). @default none: every message passes */
  readonly filterPolicy?: Readonly<Record<string, unknown>>;
  /** Its `FilterPolicyScope`. @default 'MessageAttributes', as SNS's */
  readonly filterPolicyScope?: 'MessageAttributes' | 'MessageBody';
  /** Its `RawMessageDelivery`. @default false */
  readonly rawMessageDelivery?: boolean;
  /** The ARN of its `RedrivePolicy`'s `deadLetterTargetArn`. @default no redrive policy */
  readonly deadLetterTargetArn?: string;
}

/** What a filter policy is matched against. */
export interface PublishedMessage {
  readonly body: string;
  readonly attributes: Readonly<Record<string, SqsMessageAttribute>>;
}

/** A Publish SNS would refuse. */
export class SnsPublishError extends Error {
  public constructor(
    /** The SNS error code, e.g. `InvalidParameter` */
    public readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'SnsPublishError';
  }
}

/** One attribute of the `MessageAttributes` of an SNS notification. */
interface NotificationAttribute {
  readonly Type: string;
  readonly Value: string;
}

function regionOf(topicArn: string): string {
  const region = topicArn.split(':')[3];
  if (region === undefined || region.length === 0) throw new Error(`topic ARN '${topicArn}' does not name a region (expected arn:aws:sns:<region>:<account>:<name>)`);
  return region;
}

/** A standard SNS topic whose subscriptions deliver to simulated SQS queues. */
export class SimulatedTopic {
  public readonly arn: string;
  public readonly model: TopicModel;

  private readonly subscriptions: readonly TopicSubscriptionTarget[];
  private readonly listed: readonly ListedSubscription[];
  private readonly faults: FaultPlan;
  private readonly clock: VirtualClock;
  private readonly observer: SimulationObserver;
  private readonly matches: (subscription: SubscriptionModel, message: PublishedMessage) => boolean;
  private readonly messageIds: ContentIds;
  private readonly region: string;
  /** FIFO: deduplication id → the message id its first publish got, and when (virtual ms), in the order seen. */
  private readonly deduplication = new Map<string, { readonly messageId: string; readonly at: number }>();

  public constructor(options: {
    model: TopicModel;
    arn: string;
    subscriptions: readonly TopicSubscriptionTarget[];
    faults: FaultPlan;
    clock: VirtualClock;
    observer?: SimulationObserver;
    /** decides whether a subscription's filter policy matches; operator/patterns/filter-policy.ts, the rules `replay` applies too */
    matches: (subscription: SubscriptionModel, message: PublishedMessage) => boolean;
    /**
     * The subscriptions SNS lists for the topic (ListSubscriptionsByTopic): also those it does not deliver through (a
     * pending one). @default the subscriptions it delivers to: protocol `sqs`, the queue's ARN, owned by the queue's account
     */
    listed?: readonly ListedSubscription[];
  }) {
    const { model } = options;
    for (const { model: subscription, queue } of options.subscriptions) {
      if (subscription.topic !== model.key) throw new Error(`subscription ${subscription.key} belongs to topic ${subscription.topic}, not to ${model.key}`);
      if (subscription.queue !== queue.model.key) throw new Error(`subscription ${subscription.key} delivers to queue ${subscription.queue}, but was given queue ${queue.model.key}`);
      if (queue.model.fifo && !model.fifo) throw new Error(`subscription ${subscription.key} delivers to FIFO queue ${queue.model.key}; a standard SNS topic cannot deliver to a FIFO queue`);
    }
    this.model = model;
    this.arn = options.arn;
    this.region = regionOf(options.arn);
    this.subscriptions = options.subscriptions;
    this.faults = options.faults;
    this.clock = options.clock;
    this.observer = options.observer ?? {};
    this.matches = options.matches;
    this.messageIds = new ContentIds(`sns:${options.arn}`);
    this.listed =
      options.listed ??
      options.subscriptions.map(({ model: subscription, queue, deadLetterQueue }, index) => ({
        subscriptionArn: `${options.arn}:${deterministicUuid(`subscription:${options.arn}`, index)}`,
        owner: queue.address.arn.split(':')[4] ?? '',
        protocol: 'sqs',
        endpoint: queue.address.arn,
        ...listedSettings(subscription, deadLetterQueue?.address.arn),
      }));
  }

  /** The topic's subscriptions as SNS lists them (ListSubscriptionsByTopic), in the order they were made. */
  public subscriptionList(): readonly ListedSubscription[] {
    return this.listed;
  }

  /**
   * Why SNS would refuse a PublishBatch of `messages` (no attributes), or undefined: more than 10 entries
   * (`TooManyEntriesInBatchRequest`), or messages whose sizes together exceed the topic's `MaximumMessageSize`
   * (`BatchRequestTooLong`; SNS API reference, PublishBatch: "The combined size of all messages in the batch ... must
   * not exceed the topic's MaximumMessageSize").
   */
  public refusesBatch(messages: readonly string[]): string | undefined {
    if (messages.length > MAX_PUBLISH_BATCH_ENTRIES) {
      return `TooManyEntriesInBatchRequest: a PublishBatch of ${messages.length} messages to topic ${this.model.key}; SNS takes at most ${MAX_PUBLISH_BATCH_ENTRIES}`;
    }
    const total = messages.reduce((sum, message) => sum + Buffer.byteLength(message), 0);
    if (total > this.model.maximumMessageSize) {
      return (
        `BatchRequestTooLong: a PublishBatch of ${messages.length} messages of ${total.toLocaleString('en-US')} bytes together to topic ${this.model.key}, ` +
        `whose MaximumMessageSize is ${this.model.maximumMessageSize.toLocaleString('en-US')} bytes`
      );
    }
    return undefined;
  }

  /**
   * Publish: fans the message out to every subscription whose filter policy matches. A FIFO topic needs
   * `messageGroupId`, and `messageDeduplicationId` unless it has content-based deduplication (else an
   * {@link SnsPublishError}); a repeat within 5 minutes answers the first message id and delivers nothing.
   */
  public publish(message: string, options: PublishOptions = {}): { readonly messageId: string } {
    const attributes = options.messageAttributes ?? {};
    checkPublishable(this.model.key, message, attributes, this.model.maximumMessageSize);
    const fifo = this.fifoIdsOf(message, options);
    const now = this.clock.now();
    if (fifo !== undefined) {
      for (const [id, entry] of this.deduplication) {
        if (entry.at > now - SNS_FIFO_DEDUPLICATION_INTERVAL_MS) break;
        this.deduplication.delete(id);
      }
      const seen = this.deduplication.get(fifo.messageDeduplicationId);
      if (seen !== undefined) return { messageId: seen.messageId };
    }
    const eventId = eventIdOf(message);
    const subject = eventSubjectOf(message);
    // keyed on the event (its id is stable from run to run, unlike a body with timestamps in it), so the
    // duplicate-delivery decisions below follow the event, not the publish order
    const messageId = this.messageIds.next(eventId ?? JSON.stringify([message, attributes]));
    if (fifo !== undefined) this.deduplication.set(fifo.messageDeduplicationId, { messageId, at: now });
    const timestamp = new Date(this.clock.now()).toISOString();
    for (const target of this.subscriptions) {
      const subscription = target.model;
      const matched = this.matches(subscription, { body: message, attributes });
      let copies = 0;
      if (matched) {
        const duplicate = this.faults.happens(this.faults.rates.duplicate, 'duplicate-delivery', subscription.key, messageId);
        copies = duplicate ? 2 : 1;
        const origin: MessageOrigin = { via: 'sns', ...(eventId === undefined ? {} : { eventId }), ...(subject === undefined ? {} : { subject }), subscription: subscription.key };
        const body = subscription.rawMessageDelivery
          ? { body: message, messageAttributes: attributes }
          : { body: this.notification(subscription, messageId, message, timestamp, attributes) };
        const delivery = fifo !== undefined && target.queue.model.fifo ? { ...body, ...fifo } : body;
        const denied = target.authorizeDelivery?.();
        // the delivery attempts that fail before one succeeds (the same for both copies of a duplicate delivery)
        const failedAttempts = denied !== undefined ? 0 : this.faults.failedAttempts(this.faults.rates.snsDeliveryFailure ?? 0, 'sns-delivery-failure', subscription.key, messageId);
        const failure =
          denied ??
          (snsDelivers(failedAttempts)
            ? undefined
            : `every delivery attempt failed (injected) until SNS's delivery policy for SQS endpoints ran out (${SNS_SQS_DELIVERY_ATTEMPTS} attempts over 23 days)`);
        const failedCount = Math.min(failedAttempts, SNS_SQS_DELIVERY_ATTEMPTS);
        if (failedCount > 0) this.observer.onFault?.('sns-delivery-failure', subscription.key, { count: failedCount });
        if (failure !== undefined) {
          // SNS retries a delivery it may not (or cannot) make until its delivery policy gives up
          copies = 0;
          this.giveUp(target, delivery, origin, failure);
        } else {
          for (let copy = 0; copy < copies; copy += 1) target.queue.send({ ...delivery, origin });
          if (duplicate) this.observer.onFault?.('duplicate-delivery', subscription.key);
        }
      }
      this.observer.onFanOut?.(subscription.key, { ...(eventId === undefined ? {} : { eventId }), matched, copies });
    }
    return { messageId };
  }

  /** A FIFO topic's group and deduplication id of a publish (checked as SNS checks them); undefined on a standard topic. */
  private fifoIdsOf(message: string, options: PublishOptions): { readonly messageGroupId: string; readonly messageDeduplicationId: string } | undefined {
    const { messageGroupId, messageDeduplicationId } = options;
    if (!this.model.fifo) {
      if (messageDeduplicationId !== undefined) {
        throw new SnsPublishError('InvalidParameter', `publish to topic ${this.model.key}: MessageDeduplicationId applies to FIFO topics only`);
      }
      return undefined;
    }
    if (messageGroupId === undefined || messageGroupId.length === 0) {
      throw new SnsPublishError('InvalidParameter', `publish to topic ${this.model.key}: the MessageGroupId parameter is required for FIFO topics`);
    }
    if (messageDeduplicationId === undefined && this.model.contentBasedDeduplication !== true) {
      throw new SnsPublishError(
        'InvalidParameter',
        `publish to topic ${this.model.key}: the topic does not have ContentBasedDeduplication enabled, so MessageDeduplicationId is required`,
      );
    }
    return { messageGroupId, messageDeduplicationId: messageDeduplicationId ?? createHash('sha256').update(message).digest('hex') };
  }

  /** A message SNS could not deliver: onto the subscription's dead-letter queue, or lost (and reported) without one it may use. */
  private giveUp(target: TopicSubscriptionTarget, delivery: Omit<SendMessageInput, 'origin'>, origin: MessageOrigin, failure: string): void {
    const deadLetterDenied = target.deadLetterQueue === undefined ? 'the subscription has no dead-letter queue' : target.authorizeDeadLetter?.();
    if (deadLetterDenied === undefined) {
      target.deadLetterQueue!.send({ ...delivery, origin: { ...origin, via: 'sns-dead-letter', deliveryFailure: failure } });
      return;
    }
    this.observer.onUndeliverable?.(target.model.key, { ...(origin.eventId === undefined ? {} : { eventId: origin.eventId }), reason: `${failure}; and ${deadLetterDenied}` });
  }

  /** The SNS notification JSON an SQS subscription without raw delivery receives. */
  private notification(subscription: SubscriptionModel, messageId: string, message: string, timestamp: string, attributes: Readonly<Record<string, SqsMessageAttribute>>): string {
    const subscriptionArn = `${this.arn}:${deterministicUuid(`sns-subscription:${subscription.key}`, 0)}`;
    const signed = `${messageId}\n${this.arn}\n${timestamp}\n${message}`;
    const notification: Record<string, unknown> = {
      Type: 'Notification',
      MessageId: messageId,
      TopicArn: this.arn,
      Message: message,
      Timestamp: timestamp,
      SignatureVersion: '1',
      // a placeholder: the simulator has no SNS signing key, so a consumer that verifies signatures rejects it
      Signature: createHash('sha256').update(signed).digest('base64'),
      SigningCertURL: `https://sns.${this.region}.amazonaws.com/SimpleNotificationService-simulated.pem`,
      UnsubscribeURL: `https://sns.${this.region}.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=${subscriptionArn}`,
    };
    const names = Object.keys(attributes);
    if (names.length > 0) {
      const messageAttributes: Record<string, NotificationAttribute> = {};
      for (const name of names) {
        const attribute = attributes[name];
        if (attribute !== undefined) messageAttributes[name] = { Type: attribute.DataType, Value: attribute.StringValue ?? attribute.BinaryValue ?? '' };
      }
      notification.MessageAttributes = messageAttributes;
    }
    return JSON.stringify(notification);
  }
}

/** A subscription's settings as {@link ListedSubscription} holds them (what GetSubscriptionAttributes answers). */
export function listedSettings(
  subscription: Pick<SubscriptionModel, 'filterPolicy' | 'filterPolicyScope' | 'rawMessageDelivery'>,
  deadLetterTargetArn: string | undefined,
): Pick<ListedSubscription, 'filterPolicy' | 'filterPolicyScope' | 'rawMessageDelivery' | 'deadLetterTargetArn'> {
  return {
    ...(subscription.filterPolicy === undefined ? {} : { filterPolicy: subscription.filterPolicy, filterPolicyScope: subscription.filterPolicyScope }),
    rawMessageDelivery: subscription.rawMessageDelivery,
    ...(deadLetterTargetArn === undefined ? {} : { deadLetterTargetArn }),
  };
}

/** Throws the {@link SnsPublishError} SNS answers an empty or oversized message with. */
function checkPublishable(topic: string, message: string, attributes: Readonly<Record<string, SqsMessageAttribute>>, maximumBytes = MAX_SNS_MESSAGE_BYTES): void {
  if (typeof message !== 'string' || message.length === 0) throw new SnsPublishError('InvalidParameter', `publish to topic ${topic}: the message must not be empty`);
  let bytes = Buffer.byteLength(message);
  for (const [name, attribute] of Object.entries(attributes)) {
    bytes += Buffer.byteLength(name) + Buffer.byteLength(attribute.DataType);
    bytes += attribute.BinaryValue !== undefined ? Buffer.from(attribute.BinaryValue, 'base64').length : Buffer.byteLength(attribute.StringValue ?? '');
  }
  if (bytes > maximumBytes) {
    throw new SnsPublishError('InvalidParameter', `publish to topic ${topic}: the message is ${bytes} bytes long with its attributes; the topic accepts at most ${maximumBytes} (MaximumMessageSize)`);
  }
}
