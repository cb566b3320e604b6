/**
 * Fulfilment: a producer of the ORDERED path (docs/ORDERED-DELIVERY.md). The warehouse reports each step of an order's
 * fulfilment as a command: pack, ship, then deliver or return. A step updates the order's fulfilment item and appends
 * its event through `OrderedOutbox` in ONE transaction, with the order as the event's aggregate: the event takes the
 * order's next sequence, so every ordered subscriber applies an order's steps in the order they committed.
 *
 * One event per aggregate per transaction (each takes its aggregate's head item, and DynamoDB writes an item once per
 * transaction): an order's steps are separate commands, each its own commit.
 */
import { OrderedOutbox, TransactionCancelledError } from '../../lambda/index';
import { standInAttachment } from './attachments';
import { FULFILMENT_STEPS, type FulfilmentStep, type FulfilmentStepped } from './order-events';

/** The command this producer accepts (invoke the function with it as the payload). */
export interface FulfilOrderCommand {
  readonly orderId: string;
  readonly step: FulfilmentStep;
  /** With `deliver`: the size in bytes of a proof-of-delivery scan the event carries (a stand-in: ./attachments.ts). */
  readonly proofOfDeliveryBytes?: number;
}

/** The answer, as an HTTP API would give it: 200 (done, also for a retried command), 409 (not allowed now), 400. */
export interface FulfilOrderResponse {
  readonly statusCode: 200 | 400 | 409;
  readonly body: string;
}

const FULFILMENT_TABLE_NAME = process.env.FULFILMENT_TABLE_NAME ?? '';

/** Options of {@link createFulfilOrderHandler}. Lambda uses the defaults. */
export interface FulfilOrderOptions {
  /**
   * The ordered outbox the steps are appended through. @default an `OrderedOutbox` with a client and configuration from
   * the Lambda environment, offloading large events to the flow's payload bucket when the flow offloads
   */
  readonly outbox?: OrderedOutbox;
}

/**
 * Records a fulfilment step. The step's condition (an order is packed once; shipped only when packed; delivered or
 * returned only when shipped) is the business write's condition, in the transaction that takes the order's next
 * sequence: a step refused by it writes nothing and is answered 409. The event id is derived from the order and the
 * step, so a client that sends a committed command again (its answer lost) is answered 200 by `OrderedOutbox`, which
 * finds the event already written with the same payload, and no second event exists.
 */
export function createFulfilOrderHandler(options: FulfilOrderOptions = {}): (command: FulfilOrderCommand) => Promise<FulfilOrderResponse> {
  const outbox = options.outbox ?? OrderedOutbox.fromEnvironment();
  return async ({ orderId, step: stepName, proofOfDeliveryBytes }) => {
    if (!FULFILMENT_TABLE_NAME) throw new Error('FULFILMENT_TABLE_NAME must be set');
    const step = Object.hasOwn(FULFILMENT_STEPS, stepName) ? FULFILMENT_STEPS[stepName] : undefined;
    if (step === undefined) return { statusCode: 400, body: `unknown fulfilment step ${JSON.stringify(stepName)}; the steps are ${Object.keys(FULFILMENT_STEPS).join(', ')}` };
    if (proofOfDeliveryBytes !== undefined && stepName !== 'deliver') return { statusCode: 400, body: `only a delivery carries a proof of delivery, not ${stepName}` };
    const data: FulfilmentStepped = {
      orderId,
      status: step.status,
      ...(proofOfDeliveryBytes === undefined ? {} : { proofOfDelivery: standInAttachment(`proof-of-delivery-${orderId}.txt`, proofOfDeliveryBytes) }),
    };
    const eventId = `order-${step.status.toLowerCase()}-${orderId}`;
    try {
      await outbox.transactWrite({
        items: [
          {
            Update: {
              TableName: FULFILMENT_TABLE_NAME,
              Key: { pk: `FULFILMENT#${orderId}` },
              UpdateExpression: 'SET #status = :status, orderId = :orderId, steps = list_append(if_not_exists(steps, :none), :step)',
              ConditionExpression: step.after === undefined ? 'attribute_not_exists(pk)' : '#status = :after',
              ExpressionAttributeNames: { '#status': 'status' },
              ExpressionAttributeValues: { ':status': step.status, ':orderId': orderId, ':none': [], ':step': [step.status], ...(step.after === undefined ? {} : { ':after': step.after }) },
            },
          },
        ],
        events: [{ id: eventId, type: step.type, subject: orderId, aggregateId: orderId, data }],
      });
    } catch (error) {
      const refused = error instanceof TransactionCancelledError && error.failedActions.some((action) => action.kind === 'item' && action.code === 'ConditionalCheckFailed');
      if (refused) return { statusCode: 409, body: `order ${orderId} cannot be ${step.status.toLowerCase()} now: ${step.after === undefined ? 'it was packed before' : `it is not ${step.after}`}; nothing was written` };
      throw error;
    }
    return { statusCode: 200, body: JSON.stringify({ orderId, status: step.status, eventId }) };
  };
}

export const handler = createFulfilOrderHandler();
