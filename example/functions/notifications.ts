/**
 * Notifications: the LEASE mode. Sends one order confirmation per `OrderPlaced` through the mail gateway, an effect
 * outside DynamoDB that can not join a transaction. The send runs under an owner-fenced lease recorded in the inbox
 * table: a redelivery after the send is acknowledged without sending again, a concurrent delivery waits, and a send
 * whose outcome is unknown (a timeout, or a crash mid-send) blocks the message for an operator (dead-letter queue +
 * `Blocked` alarm) instead of mailing the customer twice.
 *
 * `context.idempotencyKey` is the same on every delivery of the message; it is passed to the gateway, as a real mail
 * or payment API that deduplicates on such a key would take it.
 *
 * Stand-in (see stand-ins.ts): the mail gateway is the `MailTable`, one item per mail keyed `CONFIRMATION#<orderId>`
 * whose `sent` counter a plain UpdateItem ADDs to (a second send would count 2).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { createLeaseConsumer, type LeaseConsumerOptions, type SqsBatchHandler } from '../../lambda/index';
import { OrderPlaced, parseOrderPlaced } from './order-events';
import { mailGatewayClient, standInFailure } from './stand-ins';

const MAIL_TABLE_NAME = process.env.MAIL_TABLE_NAME ?? '';

/** Options of {@link createNotificationsHandler}: the runtime's, minus the business logic. Lambda uses the defaults. */
export interface NotificationsOptions extends Omit<LeaseConsumerOptions<OrderPlaced>, 'handle' | 'parse' | 'client'> {
  /** The client of the runtime and of the stand-in. @default a client from the Lambda environment */
  readonly client?: DynamoDBClient;
  /** The client of the mail gateway stand-in. @default `client` when given, else {@link mailGatewayClient} (no retries) */
  readonly mailClient?: DynamoDBClient;
}

/** Creates the notifications handler; tests pass a client and the configuration. */
export function createNotificationsHandler(options: NotificationsOptions = {}): SqsBatchHandler {
  const client = options.client ?? new DynamoDBClient({});
  const mail = DynamoDBDocumentClient.from(options.mailClient ?? options.client ?? mailGatewayClient());
  return createLeaseConsumer<OrderPlaced>({
    ...options,
    client,
    parse: parseOrderPlaced,
    handle: async (event, context) => {
      const order = event.data;
      try {
        await mail.send(
          new UpdateCommand({
            TableName: MAIL_TABLE_NAME,
            Key: { pk: `CONFIRMATION#${order.orderId}` },
            UpdateExpression: 'ADD sent :one SET recipient = :customerId, idempotencyKey = :idempotencyKey',
            ExpressionAttributeValues: { ':one': 1, ':customerId': order.customerId, ':idempotencyKey': context.idempotencyKey },
          }),
        );
      } catch (error) {
        throw standInFailure('mail gateway', error);
      }
    },
  });
}

export const handler = createNotificationsHandler();
