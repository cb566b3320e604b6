/**
 * Invoicing: the MULTI_STEP mode. One `OrderPlaced` drives two effects outside DynamoDB, in order:
 * 1. `create-invoice` in the accounting system, which assigns a NEW invoice number on every call (running the step
 *    twice would create two invoices), and
 * 2. `email-invoice` through the mail gateway, which needs the invoice number step 1 returned.
 * Each step runs under a lease and its status is persisted in the processing record: a redelivery skips the steps
 * that succeeded, and step 2 gets the invoice id from `stepContext` even when it runs in a later delivery. A step whose
 * outcome is unknown blocks the message for an operator (dead-letter queue + `Blocked` alarm), so no invoice is ever
 * created twice blindly.
 *
 * Stand-ins (see stand-ins.ts): the accounting system is the `AccountingInvoicesTable`, written with a plain PutItem of
 * a random invoice id; the mail gateway is the `MailTable`, one item per mail keyed `INVOICE#<invoiceId>` whose `sent`
 * counter an UpdateItem ADDs to (a second send would count 2).
 */
import { DynamoDBClient, type ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { randomUUID } from 'node:crypto';
import { createMultiStepConsumer, PermanentError, RetryableError, type MultiStepConsumerOptions, type SqsBatchHandler } from '../../lambda/index';
import { OrderPlaced, parseOrderPlaced } from './order-events';
import { mailGatewayClient, standInFailure } from './stand-ins';

const ACCOUNTING_INVOICES_TABLE_NAME = process.env.ACCOUNTING_INVOICES_TABLE_NAME ?? '';
const MAIL_TABLE_NAME = process.env.MAIL_TABLE_NAME ?? '';

/** Options of {@link createInvoicingHandler}: the runtime's, minus the business logic. Lambda uses the defaults. */
export interface InvoicingOptions extends Omit<MultiStepConsumerOptions<OrderPlaced>, 'steps' | 'parse' | 'client'> {
  /** The client of the runtime and of the stand-ins. @default a client from the Lambda environment */
  readonly client?: DynamoDBClient;
  /** The client of the mail gateway stand-in. @default `client` when given, else {@link mailGatewayClient} (no retries) */
  readonly mailClient?: DynamoDBClient;
}

/** Creates the invoicing handler; tests pass a client and the configuration. */
export function createInvoicingHandler(options: InvoicingOptions = {}): SqsBatchHandler {
  const client = options.client ?? new DynamoDBClient({});
  const documents = DynamoDBDocumentClient.from(client);
  const mail = DynamoDBDocumentClient.from(options.mailClient ?? options.client ?? mailGatewayClient());
  return createMultiStepConsumer<OrderPlaced>({
    ...options,
    client,
    parse: parseOrderPlaced,
    steps: [
      {
        name: 'create-invoice',
        run: async (event, context) => {
          const order = event.data;
          const invoiceId = randomUUID();
          try {
            await documents.send(
              new PutCommand({
                TableName: ACCOUNTING_INVOICES_TABLE_NAME,
                Item: { pk: `INVOICE#${invoiceId}`, invoiceId, orderId: order.orderId, customerId: order.customerId, amountCents: order.totalCents },
                ConditionExpression: 'attribute_not_exists(pk)',
                ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
              }),
            );
          } catch (error) {
            if (!(error instanceof Error) || error.name !== 'ConditionalCheckFailedException') throw standInFailure('accounting system', error);
            // The invoice id is taken. By this very call (the SDK retried it after a lost response): the invoice exists.
            // By another invoice: nothing was written, and the next attempt draws a new id.
            if ((error as ConditionalCheckFailedException).Item?.orderId?.S !== order.orderId) {
              throw new RetryableError(`invoice id '${invoiceId}' is taken by another invoice; nothing was written`, { cause: error });
            }
          }
          context.logger.info('invoice created', { invoiceId, attempt: context.attempt });
          return { invoiceId };
        },
      },
      {
        name: 'email-invoice',
        run: async (event, context) => {
          const invoiceId = context.stepContext.invoiceId;
          if (typeof invoiceId !== 'string') {
            throw new PermanentError(`step 'create-invoice' stored no invoiceId (stepContext: ${JSON.stringify(context.stepContext)}); no mail was sent`);
          }
          try {
            await mail.send(
              new UpdateCommand({
                TableName: MAIL_TABLE_NAME,
                Key: { pk: `INVOICE#${invoiceId}` },
                UpdateExpression: 'ADD sent :one SET recipient = :customerId, orderId = :orderId',
                ExpressionAttributeValues: { ':one': 1, ':customerId': event.data.customerId, ':orderId': event.data.orderId },
              }),
            );
          } catch (error) {
            throw standInFailure('mail gateway', error);
          }
        },
      },
    ],
  });
}

export const handler = createInvoicingHandler();
