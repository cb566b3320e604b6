/**
 * Billing: the TRANSACTIONAL mode (the default). The whole effect is DynamoDB writes, so it is staged on `tx` and
 * commits in ONE transaction with the inbox record: a redelivered `OrderPlaced` can never debit twice.
 *
 * Also shown here:
 * - `parse`: the order's data is checked before anything runs; a malformed order is dead-lettered at once as a
 *   `SchemaValidationError` instead of being retried;
 * - `tx.emit`: the `OrderBilled` event goes into the same commit (the subscriber is deployed with
 *   `publishesEvents: true`), so it exists exactly when the debit does. Its id is derived from the subscriber and the
 *   consumed event, so re-running the message could never emit a second copy. The customer-stats subscriber consumes it.
 */
import { createTransactionalConsumer, type SqsBatchHandler, type TransactionalConsumerOptions } from '../../lambda/index';
import { ORDER_BILLED, OrderBilled, OrderPlaced, parseOrderPlaced } from './order-events';

const LEDGER_TABLE_NAME = process.env.LEDGER_TABLE_NAME ?? '';

/** Options of {@link createBillingHandler}: the runtime's, minus the business logic. Lambda uses the defaults. */
export type BillingOptions = Omit<TransactionalConsumerOptions<OrderPlaced>, 'handle' | 'parse'>;

/** Creates the billing handler; tests pass a client, the configuration and the outbox. */
export function createBillingHandler(options: BillingOptions = {}): SqsBatchHandler {
  return createTransactionalConsumer<OrderPlaced>({
    ...options,
    parse: parseOrderPlaced,
    handle: async (event, tx) => {
      const order = event.data;
      tx.update({
        TableName: LEDGER_TABLE_NAME,
        Key: { pk: `CUSTOMER#${order.customerId}` },
        UpdateExpression: 'ADD balanceCents :debit, orderCount :one SET lastOrderId = :orderId',
        ExpressionAttributeValues: { ':debit': -order.totalCents, ':one': 1, ':orderId': order.orderId },
      });
      tx.emit<OrderBilled>({
        type: ORDER_BILLED,
        subject: order.orderId,
        // the order's document travels on with the bill (the loyalty team keeps signed contracts); a large one makes
        // OrderBilled large too, and tx.emit offloads it to the flow's payload bucket as the producer did
        data: { orderId: order.orderId, customerId: order.customerId, amountCents: order.totalCents, ...(order.attachment === undefined ? {} : { attachment: order.attachment }) },
      });
    },
  });
}

export const handler = createBillingHandler();
