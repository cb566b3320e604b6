/**
 * Shipping: the TRANSACTIONAL mode behind a filter policy on the message body. Only `OrderPlaced` events with a
 * shipping address reach its queue (see the stack); the shipment and the inbox record commit in one transaction.
 * No stand-in: the shipments table is the subscriber's own.
 */
import { createTransactionalConsumer } from '../../lambda/index';
import { OrderPlaced } from './order-events';

const SHIPMENTS_TABLE_NAME = process.env.SHIPMENTS_TABLE_NAME ?? '';

/**
 * Shipping: receives only orders with a shipping address (the subscription's filter policy on the message body)
 * and creates one shipment per order, together with the inbox record.
 */
export const handler = createTransactionalConsumer<OrderPlaced>({
  handle: async (event, tx) => {
    const order = event.data;
    if (!order.shippingAddress) return; // the filter policy should have kept this message away; record it and move on
    tx.put({
      TableName: SHIPMENTS_TABLE_NAME,
      Item: {
        pk: `SHIPMENT#${order.orderId}`,
        orderId: order.orderId,
        country: order.shippingAddress.country,
        postalCode: order.shippingAddress.postalCode,
        status: 'PENDING',
        createdAt: event.time,
      },
    });
  },
});
