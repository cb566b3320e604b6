/** The producer (`Outbox.transactWrite`): an order item and its events in one TransactWriteItems. Scenarios P1-P2. */
import { Outbox, type ProducerConfig } from '../../../lambda/index';
import { TABLE_SCHEMA } from '../../../lambda/contract/wire-format';
import { createTable, customerId, newMessage, newOrder, now, orderItem, progress, SAMPLE, type BenchContext } from '../fixtures';
import type { Prng } from '../prng';
import { fixed, ruleWriteUnits, type ModeResult, type Row } from '../report';
import { storedSize } from '../tables';

export const PRODUCER_TABLES = { orders: 'bench-orders', outbox: 'bench-outbox' } as const;

/** The outbox every producer and every emitting consumer of the bench writes to. */
export const OUTBOX_CONFIG: ProducerConfig = {
  outboxTableName: PRODUCER_TABLES.outbox,
  partitionKeyName: TABLE_SCHEMA.PARTITION_KEY,
  sortKeyName: TABLE_SCHEMA.SORT_KEY,
  timeToLiveAttributeName: TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE,
  eventRetentionSeconds: 7 * 24 * 3600,
  eventSource: 'orders-service',
};

export async function createProducerTables(context: BenchContext): Promise<void> {
  await Promise.all([createTable(context.admin, PRODUCER_TABLES.orders), createTable(context.admin, PRODUCER_TABLES.outbox, { sortKey: true })]);
}

export async function producerScenarios(context: BenchContext, prng: Prng): Promise<ModeResult> {
  const { admin, metered, meter } = context;
  progress('producer');
  const outbox = new Outbox({ client: metered, config: OUTBOX_CONFIG, now }); // event ids are given, derived from the order id
  const rows: Row[] = [];
  let sampleOrderId = '';
  let sampleEventId = '';
  for (const events of [1, 3]) {
    const figures = await meter.measure(async () => {
      for (let i = 0; i < SAMPLE; i++) {
        const order = newOrder(prng, customerId(0));
        const written = await outbox.transactWrite({
          items: [{ Put: { TableName: PRODUCER_TABLES.orders, Item: orderItem(order), ConditionExpression: 'attribute_not_exists(pk)' } }],
          events: Array.from({ length: events }, (_, n) => ({
            id: `order-placed-${order.orderId}${n === 0 ? '' : `-${n}`}`,
            type: 'OrderPlaced',
            subject: order.orderId,
            data: order,
          })),
        });
        sampleOrderId = order.orderId;
        sampleEventId = written[0]?.id as string;
      }
    });
    rows.push({
      scenario: `P${events === 1 ? 1 : 2}. \`outbox.transactWrite\`, 1 order Put + ${events} event${events === 1 ? '' : 's'}`,
      figures,
      messages: SAMPLE,
      notes: `per call (${SAMPLE} calls); ${events + 1} items in one transaction${events > 1 ? `; ${fixed(ruleWriteUnits(figures) / SAMPLE / events)} WCU per event by the rule` : ''}`,
    });
  }
  const outboxKey = { S: `OUTBOX#${sampleEventId}` };
  const sizes: Array<[string, number]> = [
    ['order item (producer business write)', await storedSize(admin, PRODUCER_TABLES.orders, { pk: { S: `ORDER#${sampleOrderId}` } })],
    ['event envelope (message body), JSON', Buffer.byteLength(newMessage(prng, customerId(0)).body)],
    ['outbox item (envelope + key, type, id, TTL)', await storedSize(admin, PRODUCER_TABLES.outbox, { pk: outboxKey, sk: outboxKey })],
  ];
  return { rows, checks: [], violations: [], sizes };
}
