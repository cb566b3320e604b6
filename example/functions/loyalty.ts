/**
 * Loyalty: a subscriber owned by another team, deployed in ANOTHER AWS ACCOUNT than the flow (docs/CROSS-ACCOUNT.md).
 * TRANSACTIONAL mode behind a body filter on `OrderBilled`: for each billed order it credits the customer's loyalty
 * points (one point per whole currency unit billed) as one item per order, committed with the inbox record. Its queue,
 * queue key, inbox and points table are all in the loyalty team's account.
 */
import { createTransactionalConsumer } from '../../lambda/index';
import { OrderBilled, parseOrderBilled } from './order-events';

const LOYALTY_TABLE_NAME = process.env.LOYALTY_TABLE_NAME ?? '';

/** Credits one `POINTS#<orderId>` item per billed order, in the same commit as the inbox record. */
export const handler = createTransactionalConsumer<OrderBilled>({
  parse: parseOrderBilled,
  handle: async (event, tx) => {
    const billed = event.data;
    tx.put({
      TableName: LOYALTY_TABLE_NAME,
      Item: {
        pk: `POINTS#${billed.orderId}`,
        orderId: billed.orderId,
        customerId: billed.customerId,
        points: Math.floor(billed.amountCents / 100),
        creditedAt: event.time,
      },
    });
  },
});
