/**
 * The example's simulation scenario (`npm run demo`): what to drive and how to count each subscriber's effects.
 *
 * - Producers: the `PlaceOrder` Lambda, invoked with seeded orders spread over a few customers (so the aggregate and the
 *   ledger see concurrent updates of the same item). About 1 order in 40 has a malformed total: the subscribers that
 *   validate their input dead-letter it at once with the reason, and it must never be applied. Its probe reads the
 *   orders table: each order must have its `OrderPlaced` event in the outbox, and each such event its order.
 *   Beside it, the `Fulfilment` Lambda (the ordered path) steps a quarter of the orders (at least one) through packed,
 *   shipped, then delivered or returned: three events per order, each its order's next sequence. Its probe reads the
 *   fulfilment table: each step an order took must have its event, and each event its step. The simulator checks that
 *   the ordered subscriber, OrderTracking, applied each order's steps in sequence (`aggregate-order`).
 * - Large events: the second order carries a 6 MiB attachment, one order in 25 a 1 MiB one, and the first order's
 *   delivery (when it is delivered) a 1 MiB proof of delivery. The flow offloads their data to its payload bucket, and
 *   every subscriber their filter takes reads it back (Loyalty from its own account): each must apply them exactly once.
 * - Effect probes: each reads the subscriber's own tables (found through its consumer's environment variables, resolved
 *   to the local tables) and counts how often each effect was applied. The simulator then checks the counts: exactly
 *   once for an acknowledged event, at most once for a dead-lettered one. Loyalty's tables are in the loyalty team's
 *   account, the others' in the orders account: the simulator runs both accounts' stacks as one flow, with IAM
 *   evaluated across them (the topic, queue and key policies decide whether Loyalty gets its events).
 * - Operator: when a crash or a lost response leaves the outcome of a mail or an invoice unknown, the lease and
 *   multi-step subscribers block the message instead of trying again. Once the run settles, the simulator plays the
 *   operator with these decisions: look at the mail gateway or the accounting system (the stand-in tables) and resolve
 *   the step as SUCCESS (it happened; for an invoice, with its id) or TRY_AGAIN (it did not), then redrive the
 *   dead-letter queue; the run goes on until everything settles again.
 */
import { ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { EffectProbe, EffectTally, OperatorDecision, ProducerProbe, SimulatedEvent, SimulationScenario } from '../../simulator/index';
import { FULFILMENT_STEPS, ORDER_PLACED } from '../functions/order-events';
import type { PlaceOrderCommand } from '../functions/place-order';
import type { FulfilOrderCommand } from '../functions/fulfil-order';

const CUSTOMERS = 6;
const COUNTRIES = ['DE', 'FR', 'NL', 'SE'] as const;
/** One order in this many has a malformed total (a fraction of a cent). */
const MALFORMED_EVERY = 40;

/** 1 MiB and 6 MiB: the sizes of the large attachments, each far over what an event may carry inline (26,214 bytes). */
export const ATTACHMENT_BYTES = { large: 1024 * 1024, largest: 6 * 1024 * 1024 } as const;
/** The order that carries the 6 MiB attachment (the second, so that a run of any count from 2 has one). */
const LARGEST_ATTACHMENT_ORDER = 2;
/** Every this many orders, from the fifth on, one carries a 1 MiB attachment. */
const LARGE_ATTACHMENT_EVERY = 25;

/**
 * The size of the attachment order number `orderNumber` (1, 2, ...) carries, if any: the 6 MiB one on the second order,
 * 1 MiB on the 5th, 30th, 55th and 80th (4 in a run of 100). Fixed by the order's number, not drawn from the seed, so the
 * seeded orders are those of a run without attachments: every seed has them on the same orders.
 */
export function attachmentBytesOf(orderNumber: number): number | undefined {
  if (orderNumber === LARGEST_ATTACHMENT_ORDER) return ATTACHMENT_BYTES.largest;
  return orderNumber % LARGE_ATTACHMENT_EVERY === 5 ? ATTACHMENT_BYTES.large : undefined;
}

/**
 * Seeded orders: ids `order-00001`..., customers `customer-1`..., most with a shipping address; a few carry a large
 * attachment ({@link attachmentBytesOf}), whose event the flow offloads to its payload bucket.
 */
export function placeOrderCommands(count: number, random: () => number): PlaceOrderCommand[] {
  return Array.from({ length: count }, (_, index) => {
    const malformed = random() < 1 / MALFORMED_EVERY;
    const shipped = random() < 0.7;
    const attachmentBytes = attachmentBytesOf(index + 1);
    return {
      orderId: `order-${String(index + 1).padStart(5, '0')}`,
      customerId: `customer-${1 + Math.floor(random() * CUSTOMERS)}`,
      totalCents: malformed ? 1999.5 : 100 + Math.floor(random() * 49_900),
      ...(shipped ? { shippingAddress: { country: COUNTRIES[Math.floor(random() * COUNTRIES.length)]!, postalCode: String(10_000 + Math.floor(random() * 89_999)) } } : {}),
      ...(attachmentBytes === undefined ? {} : { attachmentBytes }),
    };
  });
}

/**
 * Commands between two steps of one order: at a concurrency up to this, each step runs after the order's previous step
 * committed (a step that comes too early is refused, 409, and writes nothing).
 */
const STEP_SPACING = 8;
/** One fulfilled order in this many is returned instead of delivered. */
const RETURNED_EVERY = 5;

/**
 * Seeded fulfilment steps of the first `count / 4` orders (at least one): each packed, shipped, then delivered or
 * returned, 3 commands per order. The warehouse works on several orders at once: the steps are interleaved, each
 * order's {@link STEP_SPACING} commands apart (fewer when there are fewer orders).
 */
export function fulfilmentCommands(count: number, random: () => number): FulfilOrderCommand[] {
  const steps: { readonly slot: number; readonly step: number; readonly command: FulfilOrderCommand }[] = [];
  for (let index = 0; index < Math.max(1, Math.floor(count / 4)); index += 1) {
    const orderId = `order-${String(index + 1).padStart(5, '0')}`;
    const last = random() < 1 / RETURNED_EVERY ? 'return' : 'deliver';
    // the first order's delivery carries a 1 MiB proof of delivery: a large event on the ordered path
    const proof = index === 0 && last === 'deliver' ? { proofOfDeliveryBytes: ATTACHMENT_BYTES.large } : {};
    (['pack', 'ship', last] as const).forEach((step, at) => steps.push({ slot: index + at * STEP_SPACING, step: at, command: { orderId, step, ...(step === 'deliver' ? proof : {}) } }));
  }
  return steps.sort((a, b) => a.slot - b.slot || a.step - b.step).map(({ command }) => command);
}

async function scanAll(client: DynamoDBDocumentClient, tableName: string): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await client.send(new ScanCommand({ TableName: tableName, ExclusiveStartKey: startKey, ConsistentRead: true }));
    items.push(...((page.Items ?? []) as Record<string, unknown>[]));
    startKey = page.LastEvaluatedKey;
  } while (startKey !== undefined);
  return items;
}

function tableOf(environment: Readonly<Record<string, string>>, variable: string): string {
  const tableName = environment[variable];
  if (tableName === undefined) throw new Error(`the consumer has no ${variable}; the example's stack changed`);
  return tableName;
}

function orderIdOf(event: SimulatedEvent): string {
  return String((event.data as { orderId?: unknown }).orderId);
}

/** Per order: `applied` = what `count(item)` adds up over the items whose `orderId` is the order's. */
function perOrder(events: readonly SimulatedEvent[], items: readonly Record<string, unknown>[], what: string, count: (item: Record<string, unknown>) => number): EffectTally[] {
  const applied = new Map<string, number>();
  for (const item of items) {
    const orderId = String(item.orderId);
    applied.set(orderId, (applied.get(orderId) ?? 0) + count(item));
  }
  return events.map((event) => ({ subject: `order ${orderIdOf(event)} ${what}`, eventIds: [event.id], applied: applied.get(orderIdOf(event)) ?? 0 }));
}

/** Per customer: `applied` = the `orderCount` of the customer's item; the events are the customer's. */
function perCustomer(events: readonly SimulatedEvent[], items: readonly Record<string, unknown>[], what: string): EffectTally[] {
  const eventsByCustomer = new Map<string, string[]>();
  for (const event of events) {
    const customerId = String((event.data as { customerId?: unknown }).customerId);
    eventsByCustomer.set(customerId, [...(eventsByCustomer.get(customerId) ?? []), event.id]);
  }
  const orderCounts = new Map(items.map((item) => [String(item.pk).replace(/^CUSTOMER#/, ''), Number(item.orderCount ?? 0)]));
  return [...eventsByCustomer].map(([customerId, eventIds]) => ({ subject: `customer ${customerId} ${what}`, eventIds, applied: orderCounts.get(customerId) ?? 0 }));
}

/**
 * PlaceOrder's business changes: every order in its table must have committed with its `OrderPlaced` event (and every
 * `OrderPlaced` in the outbox must have its order): the producer side of the outbox.
 */
const placedOrders: ProducerProbe = async ({ client, environment }) =>
  (await scanAll(client, tableOf(environment, 'ORDERS_TABLE_NAME'))).map((item) => ({
    subject: `order ${String(item.orderId)}`,
    eventIds: [`order-placed-${String(item.orderId)}`],
  }));

/**
 * Fulfilment's business changes: each step an order's fulfilment item took (its `steps`) must have committed with its
 * event (the id is derived from the order and the step), and each fulfilment event must be such a step.
 */
const fulfilmentSteps: ProducerProbe = async ({ client, environment }) =>
  (await scanAll(client, tableOf(environment, 'FULFILMENT_TABLE_NAME'))).flatMap((item) =>
    (item.steps as string[]).map((status) => ({ subject: `order ${String(item.orderId)} ${status.toLowerCase()}`, eventIds: [`order-${status.toLowerCase()}-${String(item.orderId)}`] })),
  );

/** Billing debits the customer's ledger item once per order: its `orderCount`. */
const billing: EffectProbe = async ({ client, environment, events }) =>
  perCustomer(events, await scanAll(client, tableOf(environment, 'LEDGER_TABLE_NAME')), 'ledger orderCount');

/** Shipping puts one shipment per order with a shipping address (it takes every OrderPlaced; one without has nothing to ship). */
const shipping: EffectProbe = async ({ client, environment, events }) =>
  perOrder(
    events.filter((event) => (event.data as { shippingAddress?: unknown }).shippingAddress !== undefined),
    await scanAll(client, tableOf(environment, 'SHIPMENTS_TABLE_NAME')),
    'shipments',
    () => 1,
  );

/** Invoicing creates one invoice per order and mails it once: both are counted. */
const invoicing: EffectProbe = async ({ client, environment, events }) => {
  const invoices = await scanAll(client, tableOf(environment, 'ACCOUNTING_INVOICES_TABLE_NAME'));
  const mails = (await scanAll(client, tableOf(environment, 'MAIL_TABLE_NAME'))).filter((item) => String(item.pk).startsWith('INVOICE#'));
  return [...perOrder(events, invoices, 'invoices', () => 1), ...perOrder(events, mails, 'invoice mails', (item) => Number(item.sent ?? 0))];
};

/** Notifications mails one confirmation per order (`sent` counts the mails). */
const notifications: EffectProbe = async ({ client, environment, events }) => {
  const mails = (await scanAll(client, tableOf(environment, 'MAIL_TABLE_NAME'))).filter((item) => String(item.pk).startsWith('CONFIRMATION#'));
  return perOrder(
    events,
    mails.map((item) => ({ ...item, orderId: String(item.pk).replace(/^CONFIRMATION#/, '') })),
    'confirmation mails',
    (item) => Number(item.sent ?? 0),
  );
};

/** CustomerStats counts each billed order once on the customer's stats item. */
const customerStats: EffectProbe = async ({ client, environment, events }) =>
  perCustomer(events, await scanAll(client, tableOf(environment, 'CUSTOMER_STATS_TABLE_NAME')), 'stats orderCount');

/** Loyalty (the loyalty team's account) credits one points item per billed order. */
const loyalty: EffectProbe = async ({ client, environment, events }) =>
  perOrder(events, await scanAll(client, tableOf(environment, 'LOYALTY_TABLE_NAME')), 'loyalty points', () => 1);

/** OrderTracking appends each step to its order's timeline once (the simulator checks the order: `aggregate-order`). */
const orderTracking: EffectProbe = async ({ client, environment, events }) => {
  const timelines = await scanAll(client, tableOf(environment, 'TRACKING_TABLE_NAME'));
  const entries = timelines.flatMap((item) => item.timeline as { eventId: string }[]);
  return events.map((event) => ({ subject: `order ${orderIdOf(event)} timeline step ${event.id}`, eventIds: [event.id], applied: entries.filter((entry) => entry.eventId === event.id).length }));
};

/** The order a blocked message is about (every blocked message of the example carries an `OrderPlaced`). */
function blockedOrderId(event: SimulatedEvent | undefined, eventId: string): string {
  if (event === undefined) throw new Error(`event ${eventId} is not in the outbox: the operator cannot tell which order it is about`);
  return orderIdOf(event);
}

/** Notifications: was the confirmation mail sent? The mail gateway (its table) knows. */
const notificationsOperator: OperatorDecision = async ({ record, event, client, environment }) => {
  const orderId = blockedOrderId(event, record.eventId);
  const mails = (await scanAll(client, tableOf(environment, 'MAIL_TABLE_NAME'))).filter((item) => item.pk === `CONFIRMATION#${orderId}`);
  return mails.length > 0
    ? { status: 'SUCCESS', reason: `the mail gateway has the confirmation of ${orderId}` }
    : { status: 'TRY_AGAIN', reason: `the mail gateway has no confirmation of ${orderId}` };
};

/** Invoicing: was the invoice created (and with which id), or was it mailed? The accounting system and the mail gateway know. */
const invoicingOperator: OperatorDecision = async ({ record, step, event, client, environment }) => {
  const orderId = blockedOrderId(event, record.eventId);
  if (step === 'create-invoice') {
    const invoices = (await scanAll(client, tableOf(environment, 'ACCOUNTING_INVOICES_TABLE_NAME'))).filter((item) => item.orderId === orderId);
    return invoices.length > 0
      ? { status: 'SUCCESS', context: { invoiceId: invoices[0]!.invoiceId }, reason: `the accounting system has invoice ${String(invoices[0]!.invoiceId)} for ${orderId}` }
      : { status: 'TRY_AGAIN', reason: `the accounting system has no invoice for ${orderId}` };
  }
  const invoiceId = record.context.invoiceId;
  const mails = (await scanAll(client, tableOf(environment, 'MAIL_TABLE_NAME'))).filter((item) => item.pk === `INVOICE#${String(invoiceId)}`);
  return mails.length > 0
    ? { status: 'SUCCESS', reason: `the mail gateway has the mail of invoice ${String(invoiceId)}` }
    : { status: 'TRY_AGAIN', reason: `the mail gateway has no mail of invoice ${String(invoiceId)}` };
};

/** The scenario `npm run demo` runs. */
export const scenario: SimulationScenario = {
  producers: [
    // OrderBilled events share the outbox (Billing publishes them): only OrderPlaced events are PlaceOrder's
    { function: 'Orders/PlaceOrder', commands: placeOrderCommands, probe: placedOrders, eventTypes: [ORDER_PLACED] },
    { function: 'Orders/Fulfilment', commands: fulfilmentCommands, probe: fulfilmentSteps, eventTypes: Object.values(FULFILMENT_STEPS).map((step) => step.type) },
  ],
  effects: { Billing: billing, Shipping: shipping, Invoicing: invoicing, Notifications: notifications, CustomerStats: customerStats, Loyalty: loyalty, OrderTracking: orderTracking },
  operator: { Invoicing: invoicingOperator, Notifications: notificationsOperator },
  // the orders with a fraction of a cent are malformed on purpose: the validating subscribers may reject them for good
  malformed: (event) => event.type === ORDER_PLACED && !Number.isInteger((event.data as { totalCents?: unknown }).totalCents),
  // the operator's BlockedMessages calls are authorized under this role's policies (its grantOperator grants)
  operatorRole: 'OperatorRole',
};
