import { createTransactionalConsumer } from '../../lambda';
import { OrderPlaced } from './order-events';

const LEDGER_TABLE_NAME = process.env.LEDGER_TABLE_NAME ?? '';

/**
 * Billing: debits the customer's ledger once per order. The balance update and the inbox record commit in one
 * transaction, so a redelivered `OrderPlaced` can never debit twice.
 */
export const handler = createTransactionalConsumer<OrderPlaced>({
  handle: async (event, tx) => {
    const order = event.data;
    tx.update({
      TableName: LEDGER_TABLE_NAME,
      Key: { pk: `CUSTOMER#${order.customerId}` },
      UpdateExpression: 'ADD balanceCents :debit, orderCount :one SET lastOrderId = :orderId',
      ExpressionAttributeValues: { ':debit': -order.totalCents, ':one': 1, ':orderId': order.orderId },
    });
  },
});
