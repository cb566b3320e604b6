/**
 * The ordered path (docs/ORDERED-DELIVERY.md): the producer's `OrderedOutbox.transactWrite` (the head's consistent
 * read, then the order item, the head Put and the history Put in one transaction) and `createOrderedConsumer` (the
 * staged write, the inbox record and the fence Put in one transaction). Scenarios O1-O4, beside P1 and T1 of the same
 * run: the same order items, the same ledger credit.
 */
import { createOrderedConsumer, OrderedOutbox, type OrderedEnvelope, type ProducerConfig } from '../../../lambda/index';
import { countingLogger, createTable, customerId, expectNoFailures, newOrder, noMetrics, now, orderItem, progress, SAMPLE, type BenchContext, type OrderPlaced } from '../fixtures';
import type { Prng } from '../prng';
import type { ModeResult, Row } from '../report';
import { inboxConfig } from '../scenario-steps';
import { credit } from './transactional';

export const ORDERED_TABLES = { orders: 'bench-ordered-orders', ledger: 'bench-ordered-ledger', inbox: 'bench-ordered-inbox' } as const;

export async function orderedScenarios(context: BenchContext, prng: Prng, outboxConfig: ProducerConfig): Promise<ModeResult> {
  const { admin, metered, meter } = context;
  progress('ordered');
  await Promise.all(Object.values(ORDERED_TABLES).map((table) => createTable(admin, table)));
  const outbox = new OrderedOutbox({ client: metered, config: outboxConfig, now });
  const written: OrderedEnvelope[] = [];
  const rows: Row[] = [];
  // O1: each order its own aggregate (sequence 1); O2: the same orders' second event (sequence 2, the head exists)
  const orders = Array.from({ length: SAMPLE }, (_, i) => newOrder(prng, customerId(i)));
  for (const [id, second] of [['O1', false], ['O2', true]] as const) {
    const figures = await meter.measure(async () => {
      for (const order of orders) {
        const [envelope] = await outbox.transactWrite({
          items: second ? [] : [{ Put: { TableName: ORDERED_TABLES.orders, Item: orderItem(order), ConditionExpression: 'attribute_not_exists(pk)' } }],
          events: [{ id: `order-${second ? 'paid' : 'placed'}-${order.orderId}`, type: second ? 'OrderPaid' : 'OrderPlaced', aggregateId: `order-${order.orderId}`, subject: order.orderId, data: order }],
        });
        written.push(envelope!);
      }
    });
    rows.push({
      scenario: second
        ? `${id}. \`OrderedOutbox.transactWrite\`, 1 ordered event (sequence 2: the aggregate's head exists)`
        : `${id}. \`OrderedOutbox.transactWrite\`, 1 order Put + 1 ordered event (sequence 1)`,
      figures,
      messages: SAMPLE,
      notes: `per call; 1 consistent GetItem of the head, then ${second ? '' : 'the order Put + '}the head Put + the history Put in one transaction`,
    });
  }
  const consumer = createOrderedConsumer<OrderPlaced>({
    handle: credit(ORDERED_TABLES.ledger),
    client: metered,
    config: inboxConfig('Ledger', ORDERED_TABLES.inbox),
    now,
    logger: countingLogger().logger,
    metricsSink: noMetrics,
  });
  const deliver = (envelopes: readonly OrderedEnvelope[]) =>
    meter.measure(async () =>
      expectNoFailures(
        await consumer({ Records: envelopes.map((envelope) => ({ messageId: prng.uuid(), body: JSON.stringify(envelope), attributes: { ApproximateReceiveCount: '1', MessageGroupId: envelope.partitionkey } })) }),
        'ordered',
      ),
    );
  const firsts = written.slice(0, SAMPLE);
  rows.push({ scenario: 'O3. `createOrderedConsumer`, the next sequence, handler stages 1 Update (ledger credit)', figures: await deliver(firsts), messages: SAMPLE, notes: 'one batch read per batch of 10, then ledger Update + inbox Put + fence Put in one transaction' });
  rows.push({ scenario: 'O4. `createOrderedConsumer`, a redelivery of an applied sequence', figures: await deliver(firsts), messages: SAMPLE, notes: 'the batch read finds the live inbox record: acknowledged with no handler run and no write' });
  return { rows, checks: [], violations: [], sizes: [] };
}
