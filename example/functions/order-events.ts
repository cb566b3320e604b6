/**
 * The events of the example's orders domain, shared by the producers and the subscribers: each event's type constant,
 * the shape of its data, and a hand-written check of that shape for the subscribers' `parse` option (a message whose
 * data fails it is dead-lettered at once as a `SchemaValidationError`, before any effect).
 */
import { type Attachment, checkAttachment } from './attachments';

/** Event type of {@link OrderPlaced}, written by the PlaceOrder producer. */
export const ORDER_PLACED = 'com.example.orders.OrderPlaced';

/** Data of an `OrderPlaced` event. */
export interface OrderPlaced {
  readonly orderId: string;
  readonly customerId: string;
  readonly totalCents: number;
  /** Present when the order contains physical goods; the shipping subscriber ships only such orders. */
  readonly shippingAddress?: {
    readonly country: string;
    readonly postalCode: string;
  };
  /** A document the order carries (a signed contract): it makes the event large, so the flow offloads its data. */
  readonly attachment?: Attachment;
}

/** Event type of {@link OrderBilled}, emitted by the billing subscriber in the commit that debits the ledger. */
export const ORDER_BILLED = 'com.example.billing.OrderBilled';

/** Data of an `OrderBilled` event. */
export interface OrderBilled {
  readonly orderId: string;
  readonly customerId: string;
  /** What the customer's ledger was debited. */
  readonly amountCents: number;
  /** The billed order's document, when it carried one (OrderPlaced's `attachment`). */
  readonly attachment?: Attachment;
}

/**
 * The fulfilment steps of an order, in the only order the warehouse takes them: packed, shipped, then delivered or
 * returned. Each is an event of the ORDERED path (the order is its aggregate), written by the Fulfilment producer.
 */
export const FULFILMENT_STEPS = {
  pack: { type: 'com.example.fulfilment.OrderPacked', status: 'PACKED', after: undefined },
  ship: { type: 'com.example.fulfilment.OrderShipped', status: 'SHIPPED', after: 'PACKED' },
  deliver: { type: 'com.example.fulfilment.OrderDelivered', status: 'DELIVERED', after: 'SHIPPED' },
  return: { type: 'com.example.fulfilment.OrderReturned', status: 'RETURNED', after: 'SHIPPED' },
} as const;

/** A fulfilment step's name, e.g. `ship`. */
export type FulfilmentStep = keyof typeof FULFILMENT_STEPS;

/** An order's fulfilment status after a step, e.g. `SHIPPED`. */
export type FulfilmentStatus = (typeof FULFILMENT_STEPS)[FulfilmentStep]['status'];

/** Data of every fulfilment event (`OrderPacked`, `OrderShipped`, `OrderDelivered`, `OrderReturned`). */
export interface FulfilmentStepped {
  readonly orderId: string;
  /** The order's fulfilment status after the step. */
  readonly status: FulfilmentStatus;
  /** A proof-of-delivery scan, on some deliveries: a large ordered event, which the flow offloads. */
  readonly proofOfDelivery?: Attachment;
}

/** Checks that `data` is a {@link FulfilmentStepped}; throws an error naming the first problem. */
export function parseFulfilmentStepped(data: unknown): FulfilmentStepped {
  const stepped = object(data, 'fulfilment event data');
  text(stepped, 'orderId', 'fulfilment event');
  const statuses: readonly unknown[] = Object.values(FULFILMENT_STEPS).map((step) => step.status);
  if (!statuses.includes(stepped.status)) throw new Error(`fulfilment event status must be one of ${statuses.join(', ')}, but ${describe(stepped.status)} was given`);
  if (stepped.proofOfDelivery !== undefined) checkAttachment(stepped.proofOfDelivery, 'fulfilment event proofOfDelivery');
  return stepped as unknown as FulfilmentStepped;
}

/** Checks that `data` is an {@link OrderPlaced}; throws an error naming the first problem. */
export function parseOrderPlaced(data: unknown): OrderPlaced {
  const order = object(data, 'OrderPlaced data');
  text(order, 'orderId', 'OrderPlaced');
  text(order, 'customerId', 'OrderPlaced');
  cents(order, 'totalCents', 'OrderPlaced');
  if (order.shippingAddress !== undefined) {
    const address = object(order.shippingAddress, 'OrderPlaced shippingAddress');
    text(address, 'country', 'OrderPlaced shippingAddress');
    text(address, 'postalCode', 'OrderPlaced shippingAddress');
  }
  if (order.attachment !== undefined) checkAttachment(order.attachment, 'OrderPlaced attachment');
  return order as unknown as OrderPlaced;
}

/** Checks that `data` is an {@link OrderBilled}; throws an error naming the first problem. */
export function parseOrderBilled(data: unknown): OrderBilled {
  const billed = object(data, 'OrderBilled data');
  text(billed, 'orderId', 'OrderBilled');
  text(billed, 'customerId', 'OrderBilled');
  cents(billed, 'amountCents', 'OrderBilled');
  if (billed.attachment !== undefined) checkAttachment(billed.attachment, 'OrderBilled attachment');
  return billed as unknown as OrderBilled;
}

function object(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Error(`${what} must be an object, but ${describe(value)} was given`);
  }
  return value as Record<string, unknown>;
}

function text(container: Record<string, unknown>, name: string, what: string): void {
  const value = container[name];
  if (typeof value !== 'string' || value.trim() === '') {
    throw new Error(`${what} ${name} must be a non-empty string, but ${describe(value)} was given`);
  }
}

function cents(container: Record<string, unknown>, name: string, what: string): void {
  const value = container[name];
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new Error(`${what} ${name} must be a whole number of cents, 0 or more, but ${describe(value)} was given`);
  }
}

function describe(value: unknown): string {
  return value === undefined ? 'nothing' : JSON.stringify(value);
}
