/** A consumer queue, its dead-letter queue and a run ledger wired together, for the tests of the invariant checks. */
import { DEAD_LETTER_ATTRIBUTE } from '../../../lambda/consumer/dead-letter';
import type { SimulatedQueue } from '../../../simulator/aws/queue';
import type { ReceivedMessage } from '../../../simulator/aws/sqs-messages';
import type { SubscriberView } from '../../../simulator/observation/run-facts';
import { RunLedger } from '../../../simulator/observation/ledger';
import type { SubscriptionModel } from '../../../simulator/model/flow-model';
import { frozenClock, makeQueue, queueModel } from '../aws/queue-test-kit';

/** The subscription every kit message is delivered by. */
export const SUBSCRIPTION_KEY = 'Stack/Subscription';

/** A subscriber whose queue redrives to `OrdersDlq` after `maxReceiveCount` receives, and the ledger observing both. */
export function subscriberKit(options: { maxReceiveCount?: number; deadLetterRetentionSeconds?: number; visibilityTimeoutSeconds?: number } = {}) {
  const clock = frozenClock();
  const ledger = new RunLedger();
  const deadLetterQueue = makeQueue(queueModel('OrdersDlq', { messageRetentionSeconds: options.deadLetterRetentionSeconds ?? 1_209_600 }), { clock, observer: ledger });
  const queue = makeQueue(
    queueModel('Orders', {
      visibilityTimeoutSeconds: options.visibilityTimeoutSeconds ?? 30,
      redrive: { deadLetterQueue: deadLetterQueue.model.key, maxReceiveCount: options.maxReceiveCount ?? 5 },
    }),
    { clock, observer: ledger, deadLetterQueue },
  );
  const subscription: SubscriptionModel = {
    key: SUBSCRIPTION_KEY,
    stackName: 'Stack',
    logicalId: 'Subscription',
    topic: 'Stack/Topic',
    queue: queue.model.key,
    rawMessageDelivery: true,
    filterPolicyScope: 'MessageBody',
  };
  const subscriber: SubscriberView = { name: 'Billing', subscription, queue, deadLetterQueues: [deadLetterQueue], environment: {} };

  /** SNS delivers the event to the queue `copies` times, as the topic does (and reports the fan-out). */
  const deliver = (eventId: string, copies = 1): void => {
    for (let copy = 0; copy < copies; copy += 1) {
      queue.send({ body: JSON.stringify({ id: eventId, type: 'OrderPlaced', data: {} }), origin: { via: 'sns', eventId, subscription: SUBSCRIPTION_KEY } });
    }
    ledger.onFanOut(SUBSCRIPTION_KEY, { eventId, matched: true, copies });
  };

  /** The runtime dead-letters a received message (as its SendMessage reaches the simulated SQS endpoint), then the mapping deletes it. */
  const deadLetterByRuntime = (message: ReceivedMessage, eventId: string, deleteAfterwards = true, errorMessage = 'blocked for an operator'): void => {
    const text = (value: string) => ({ DataType: 'String', StringValue: value });
    deadLetterQueue.send({
      body: message.body,
      messageAttributes: {
        [DEAD_LETTER_ATTRIBUTE.ERROR_NAME]: text('MessageBlockedError'),
        [DEAD_LETTER_ATTRIBUTE.ERROR_MESSAGE]: text(errorMessage),
        [DEAD_LETTER_ATTRIBUTE.SOURCE_MESSAGE_ID]: text(message.messageId),
        [DEAD_LETTER_ATTRIBUTE.APPROXIMATE_RECEIVE_COUNT]: { DataType: 'Number', StringValue: String(message.receiveCount) },
        [DEAD_LETTER_ATTRIBUTE.EVENT_ID]: text(eventId),
      },
      origin: { via: 'send-message', eventId, deadLetterOf: { messageId: message.messageId, receiveCount: message.receiveCount } },
    });
    if (deleteAfterwards) queue.delete(message.receiptHandle);
  };

  return { clock, ledger, queue, deadLetterQueue, subscriber, deliver, deadLetterByRuntime };
}

/** Every message on `queue`, received once. */
export function receiveAll(queue: SimulatedQueue): ReceivedMessage[] {
  return queue.receive(10);
}

/** The runtime dead-letters a received message with `errorName` (as its SendMessage does), then the mapping deletes it. */
export function rejectByRuntime(kit: ReturnType<typeof subscriberKit>, message: ReceivedMessage, errorName: string, errorMessage: string): void {
  const eventId = message.origin.eventId!;
  const text = (value: string) => ({ DataType: 'String', StringValue: value });
  kit.deadLetterQueue.send({
    body: message.body,
    messageAttributes: {
      [DEAD_LETTER_ATTRIBUTE.ERROR_NAME]: text(errorName),
      [DEAD_LETTER_ATTRIBUTE.ERROR_MESSAGE]: text(errorMessage),
      [DEAD_LETTER_ATTRIBUTE.SOURCE_MESSAGE_ID]: text(message.messageId),
      [DEAD_LETTER_ATTRIBUTE.EVENT_ID]: text(eventId),
    },
    origin: { via: 'send-message', eventId, deadLetterOf: { messageId: message.messageId } },
  });
  kit.queue.delete(message.receiptHandle);
}
