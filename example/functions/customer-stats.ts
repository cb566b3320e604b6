/**
 * Customer stats: the AGGREGATE mode. Every `OrderBilled` (emitted by the billing subscriber in its own commit) changes
 * exactly one item, the customer's stats in the `CustomerStatsTable`, so no inbox is needed: the item itself keeps a
 * version and the ids of the latest messages applied to it, and ONE conditional PutItem applies the change together
 * with the message id, on the condition that the item is still the version that was read. A redelivery finds its id
 * on the item and changes nothing; a concurrent writer makes the Put fail, and the runtime reads again and re-applies.
 *
 * `apply` is pure (it may run more than once per message after losing a race): it only returns the next state.
 * The function needs GetItem and PutItem on the table, nothing on an inbox.
 */
import { createAggregateConsumer, type AggregateConsumerOptions, type SqsBatchHandler } from '../../lambda/index';
import { OrderBilled, parseOrderBilled } from './order-events';

const CUSTOMER_STATS_TABLE_NAME = process.env.CUSTOMER_STATS_TABLE_NAME ?? '';

/** One customer's stats: the item's own attributes (the runtime adds `aggregateVersion` and `processedMessages`). */
export interface CustomerStats {
  readonly customerId: string;
  readonly orderCount: number;
  readonly billedCents: number;
  readonly lastOrderId: string;
}

/** Options of {@link createCustomerStatsHandler}: the runtime's, minus the business logic. Lambda uses the defaults. */
export type CustomerStatsOptions = Omit<AggregateConsumerOptions<OrderBilled, CustomerStats>, 'locate' | 'apply' | 'parse'>;

/** Creates the customer-stats handler; tests pass a client and the configuration. */
export function createCustomerStatsHandler(options: CustomerStatsOptions = {}): SqsBatchHandler {
  return createAggregateConsumer<OrderBilled, CustomerStats>({
    ...options,
    parse: parseOrderBilled,
    locate: (event) => ({ tableName: CUSTOMER_STATS_TABLE_NAME, key: { pk: `CUSTOMER#${event.data.customerId}` } }),
    apply: (current, event) => ({
      state: {
        customerId: event.data.customerId,
        orderCount: (current?.orderCount ?? 0) + 1,
        billedCents: (current?.billedCents ?? 0) + event.data.amountCents,
        lastOrderId: event.data.orderId,
      },
    }),
  });
}

export const handler = createCustomerStatsHandler();
