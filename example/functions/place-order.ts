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
const outbox = Outbox.fromEnvironment(new DynamoDBClient({}));

/**
 * Places an order: the order item and its `OrderPlaced` event commit in ONE DynamoDB transaction, so an event
 * exists exactly when the order does. Placing the same order twice fails on the order's condition and writes
 * no second event. The event id is derived from the order id, so even a retry that re-sends the transaction can
 * never create a second event (an SDK-level retry after a lost response succeeds idempotently through the
 * transaction's ClientRequestToken).
 */
export async function handler(command: PlaceOrderCommand): Promise<{ orderId: string; eventId: string }> {
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
}
