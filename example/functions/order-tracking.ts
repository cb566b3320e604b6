/**
 * Order tracking: an ORDERED subscriber (docs/ORDERED-DELIVERY.md). It keeps what a customer sees when tracking an
 * order: the order's fulfilment status and the timeline of its steps. The handler overwrites the status with the
 * step's and appends the step to the timeline, which is right ONLY when each order's steps are applied in the order
 * they happened: applied out of order, a delivered order would show as shipped again, and its timeline would list the
 * delivery before the shipping.
 *
 * `createOrderedConsumer` makes it so: the handler's writes, the inbox record and this subscriber's sequence fence of
 * the order commit in ONE transaction, which admits only the order's next step. A later step waits (it fails with
 * `SequenceGapError` and SQS retries it; the order's later messages wait behind it on the FIFO queue) until the
 * earlier one is applied; a redelivered step is a duplicate and changes nothing.
 */
import { createOrderedConsumer, type EventHandler, type OrderedConsumerOptions, type SqsBatchHandler } from '../../lambda/index';
import { FulfilmentStepped, parseFulfilmentStepped } from './order-events';

const TRACKING_TABLE_NAME = process.env.TRACKING_TABLE_NAME ?? '';

/** Options of {@link createOrderTrackingHandler}: the runtime's, minus the business logic. Lambda uses the defaults. */
export type OrderTrackingOptions = Omit<OrderedConsumerOptions<FulfilmentStepped>, 'handle' | 'parse'>;

/**
 * One step's change of the tracking item, staged on `tx`: the order's status becomes the step's, and the step is
 * appended to its timeline. Right only when the order's steps come in sequence.
 */
export const trackStep: EventHandler<FulfilmentStepped> = (event, tx) => {
  const { orderId, status } = event.data;
  tx.update({
    TableName: TRACKING_TABLE_NAME,
    Key: { pk: `TRACKING#${orderId}` },
    UpdateExpression: 'SET #status = :status, orderId = :orderId, timeline = list_append(if_not_exists(timeline, :none), :step)',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: { ':status': status, ':orderId': orderId, ':none': [], ':step': [{ status, eventId: event.id }] },
  });
};

/** Creates the order-tracking handler; tests pass a client and the configuration. */
export function createOrderTrackingHandler(options: OrderTrackingOptions = {}): SqsBatchHandler {
  return createOrderedConsumer<FulfilmentStepped>({ ...options, parse: parseFulfilmentStepped, handle: trackStep });
}

export const handler = createOrderTrackingHandler();
