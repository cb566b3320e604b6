/**
 * Shipping: the TRANSACTIONAL mode behind a filter policy on the event type. Every `OrderPlaced` event reaches its
 * queue (see the stack: the flow offloads large events, so a filter on `data` would miss them); the handler ships
 * orders with a shipping address, and the shipment and the inbox record commit in one transaction. No stand-in: the
 * shipments table is the subscriber's own.
 */
import { createTransactionalConsumer } from '../../lambda/index';
import { OrderPlaced } from './order-events';

const SHIPMENTS_TABLE_NAME = process.env.SHIPMENTS_TABLE_NAME ?? '';

/**
 * Shipping: creates one shipment per order with a shipping address, together with the inbox record; an order without
 * one is recorded as handled (its inbox record) with nothing to ship.
 */
export const handler = createTransactionalConsumer<OrderPlaced>({
  handle: async (event, tx) => {
    const order = event.data;
    if (!order.shippingAddress) return; // nothing to ship: the inbox record alone commits
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
