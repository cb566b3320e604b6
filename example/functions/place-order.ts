/**
 * PlaceOrder: the producer side, the transactional OUTBOX. The order item and its `OrderPlaced` event are one
 * DynamoDB transaction; the relay (stream -> pipe -> topic) publishes the event after the commit. No stand-in.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { Outbox } from '../../lambda';
import { ORDER_PLACED, OrderPlaced } from './order-events';

/** The command this producer accepts (invoke the function with it as the payload). */
export interface PlaceOrderCommand {
  readonly orderId: string;
  readonly customerId: string;
  readonly totalCents: number;
  readonly shippingAddress?: OrderPlaced['shippingAddress'];
}

const ORDERS_TABLE_NAME = process.env.ORDERS_TABLE_NAME ?? '';

/** Options of {@link createPlaceOrderHandler}. Lambda uses the defaults. */
export interface PlaceOrderOptions {
  /** The outbox the order and its event are written through. @default `Outbox.fromEnvironment()` with a client from the Lambda environment */
  readonly outbox?: Outbox;
}

/**
 * Places an order: the order item and its `OrderPlaced` event commit in ONE DynamoDB transaction, so an event
 * exists exactly when the order does. Placing the same order twice fails on the order's condition and writes
 * no second event. The event id is derived from the order id, so even a retry that re-sends the transaction can
 * never create a second event (an SDK-level retry after a lost response succeeds idempotently through the
 * transaction's ClientRequestToken).
 *
 * Tests pass an outbox with their own client and configuration.
 */
export function createPlaceOrderHandler(options: PlaceOrderOptions = {}): (command: PlaceOrderCommand) => Promise<{ orderId: string; eventId: string }> {
  const outbox = options.outbox ?? Outbox.fromEnvironment(new DynamoDBClient({}));
  return async (command) => {
    if (!ORDERS_TABLE_NAME) throw new Error('ORDERS_TABLE_NAME must be set');
    const order: OrderPlaced = {
      orderId: command.orderId,
      customerId: command.customerId,
      totalCents: command.totalCents,
      ...(command.shippingAddress ? { shippingAddress: command.shippingAddress } : {}),
    };
    const [event] = await outbox.transactWrite({
      items: [
        {
          Put: {
            TableName: ORDERS_TABLE_NAME,
            Item: { pk: `ORDER#${order.orderId}`, ...order, status: 'PLACED' },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
      ],
      events: [{ id: `order-placed-${order.orderId}`, type: ORDER_PLACED, subject: order.orderId, data: order }],
    });
    return { orderId: order.orderId, eventId: event.id };
  };
}

export const handler = createPlaceOrderHandler();
