/** The events of the example's orders domain, shared by the producer and the subscribers. */

/** Event type of {@link OrderPlaced}. */
export const ORDER_PLACED = 'com.example.orders.OrderPlaced';

/** Data of an `OrderPlaced` event. */
export interface OrderPlaced {
  readonly orderId: string;
  readonly customerId: string;
  readonly totalCents: number;
  /** Present when the order contains physical goods; the shipping subscriber filters on it. */
  readonly shippingAddress?: {
    readonly country: string;
    readonly postalCode: string;
  };
}
