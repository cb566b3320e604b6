/**
 * PlaceOrder: the producer side, the transactional OUTBOX. The order item and its `OrderPlaced` event are one
 * DynamoDB transaction; the relay (stream -> pipe -> topic) publishes the event after the commit. No stand-in.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { Outbox, PermanentError, TransactionCancelledError } from '../../lambda/index';
import { standInAttachment } from './attachments';
import { ORDER_PLACED, OrderPlaced } from './order-events';

/** The command this producer accepts (invoke the function with it as the payload). */
export interface PlaceOrderCommand {
  readonly orderId: string;
  readonly customerId: string;
  readonly totalCents: number;
  readonly shippingAddress?: OrderPlaced['shippingAddress'];
  /**
   * The size in bytes of a document the order carries (a stand-in the producer writes: ./attachments.ts); its event is
   * then too large to travel inline, and the flow offloads its data to the payload bucket.
   */
  readonly attachmentBytes?: number;
}

const ORDERS_TABLE_NAME = process.env.ORDERS_TABLE_NAME ?? '';

/** Options of {@link createPlaceOrderHandler}. Lambda uses the defaults. */
export interface PlaceOrderOptions {
  /** The client of the outbox and of the order reads. @default a client from the Lambda environment */
  readonly client?: DynamoDBClient;
  /** The outbox the order and its event are written through. @default `Outbox.fromEnvironment(client)` */
  readonly outbox?: Outbox;
}

/** The same order id was placed before with other contents: nothing was written, and retrying cannot help. */
export class OrderConflictError extends PermanentError {
  public override readonly name = 'OrderConflictError';
}

/**
 * Places an order: the order item and its `OrderPlaced` event commit in ONE DynamoDB transaction, so an event
 * exists exactly when the order does. The event id is derived from the order id, so a retry can never create a
 * second event: an SDK-level retry after a lost response succeeds through the transaction's ClientRequestToken, and
 * a client that invokes the command again (its first answer lost to a crash or a timeout after the commit) is answered
 * by `Outbox.transactWriteOnce` as "already written" (the event is in the outbox with the same payload, which carries
 * the whole order), so the handler answers as the first attempt would have. The same order id with other contents is
 * refused with an {@link OrderConflictError}.
 *
 * Tests pass an outbox with their own client and configuration.
 */
export function createPlaceOrderHandler(options: PlaceOrderOptions = {}): (command: PlaceOrderCommand) => Promise<{ orderId: string; eventId: string }> {
  const client = options.client ?? new DynamoDBClient({});
  const outbox = options.outbox ?? Outbox.fromEnvironment(client);
  return async (command) => {
    if (!ORDERS_TABLE_NAME) throw new Error('ORDERS_TABLE_NAME must be set');
    const order: OrderPlaced = {
      orderId: command.orderId,
      customerId: command.customerId,
      totalCents: command.totalCents,
      ...(command.shippingAddress ? { shippingAddress: command.shippingAddress } : {}),
      ...(command.attachmentBytes === undefined ? {} : { attachment: standInAttachment(`contract-${command.orderId}.txt`, command.attachmentBytes) }),
    };
    const eventId = `order-placed-${order.orderId}`;
    try {
      // retry-safe in one call: a client's retry of a committed command is answered { written: false }
      await outbox.transactWriteOnce({
        items: [
          {
            Put: {
              TableName: ORDERS_TABLE_NAME,
              // the order's item keeps what it is, not the document's bytes: an item is at most 400 KB, while the
              // event's data may be 64 MiB (the flow offloads it to its payload bucket)
              Item: { pk: `ORDER#${order.orderId}`, ...orderItemOf(order), status: 'PLACED' },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
        ],
        events: [{ id: eventId, type: ORDER_PLACED, subject: order.orderId, data: order }],
      });
    } catch (error) {
      // the event id is in the outbox with another payload: the same order id was placed with other contents
      if (error instanceof TransactionCancelledError && error.isDuplicateEvent) {
        throw new OrderConflictError(`order '${order.orderId}' was placed before with other contents; nothing was written`, { cause: error });
      }
      throw error;
    }
    return { orderId: order.orderId, eventId };
  };
}

/** What the orders table keeps of an order: all of it, but of an attachment only its name, media type and size. */
function orderItemOf(order: OrderPlaced): Record<string, unknown> {
  if (order.attachment === undefined) return { ...order };
  const { content: _content, ...described } = order.attachment;
  return { ...order, attachment: described };
}

export const handler = createPlaceOrderHandler();
