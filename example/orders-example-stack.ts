import { Duration, RemovalPolicy, Stack, StackProps, Validations } from 'aws-cdk-lib';
import * as backup from 'aws-cdk-lib/aws-backup';
import * as cloudwatchActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import * as path from 'node:path';
import { IdempotentEventFlow, OrderedRelay, OrderedSubscriber, ProcessingMode } from '../lib';
import { ORDER_BILLED, ORDER_PLACED } from './functions/order-events';
import { opsTopic } from './ops-topic';
import { acknowledgeOptInFunctionControls } from './opt-in-controls';

/** Properties of {@link OrdersExampleStack}. */
export interface OrdersExampleStackProps extends StackProps {
  /**
   * What happens to the example's tables, queues and logs when the stack is deleted.
   *
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
}

/**
 * The example, one subscriber per processing mode. An orders producer writes an order and its `OrderPlaced` event in
 * one transaction (the outbox). Subscribers of `OrderPlaced`:
 * - Billing (TRANSACTIONAL): debits the customer's ledger and emits `OrderBilled` in the same commit;
 * - Invoicing (MULTI_STEP): creates an invoice in the accounting system, then emails it through the mail gateway;
 * - Notifications (LEASE): sends one order confirmation through the mail gateway;
 * - Shipping (TRANSACTIONAL): creates a shipment for orders with a shipping address.
 * Subscriber of `OrderBilled`:
 * - CustomerStats (AGGREGATE): keeps one item per customer with its order count and billed total, no inbox.
 * The ordered path (docs/ORDERED-DELIVERY.md): a fulfilment producer appends each order's steps (packed, shipped,
 * delivered or returned) with the order as their aggregate; an OrderedRelay carries them through an SQS FIFO queue
 * grouped by order and an SNS FIFO topic to:
 * - OrderTracking (ordered): the status and timeline a customer tracks an order on, right only when each order's steps
 *   are applied in sequence, which its sequence fence ensures.
 * The accounting system and the mail gateway are stood in for by DynamoDB tables written without transactions (see
 * `functions/stand-ins.ts`). Every function gets only the actions it needs on each table. Every alarm notifies an ops
 * topic. Some orders and deliveries carry a large document: the flow offloads their data to its payload bucket
 * (`offloadLargeEvents`), and every subscriber, the ordered one and the loyalty team's included, reads it back.
 */
export class OrdersExampleStack extends Stack {
  /** The flow, exposed for tests. */
  public readonly flow: IdempotentEventFlow;

  public constructor(scope: Construct, id: string, props: OrdersExampleStackProps = {}) {
    super(scope, id, props);
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;

    const orders = businessTable(this, 'OrdersTable', removalPolicy);
    const ledger = businessTable(this, 'LedgerTable', removalPolicy);
    const shipments = businessTable(this, 'ShipmentsTable', removalPolicy);
    const customerStats = businessTable(this, 'CustomerStatsTable', removalPolicy);
    // Stand-ins for systems outside DynamoDB (an accounting system, a mail gateway), written without transactions.
    const accountingInvoices = businessTable(this, 'AccountingInvoicesTable', removalPolicy);
    const mail = businessTable(this, 'MailTable', removalPolicy);
    const fulfilment = businessTable(this, 'FulfilmentTable', removalPolicy);
    const tracking = businessTable(this, 'TrackingTable', removalPolicy);
    const alarmActions = [new cloudwatchActions.SnsAction(opsTopic(this))];
    // every log group of the example (relays and functions) under a customer-managed key
    const logEncryptionKey = new kms.Key(this, 'LogsKey', { enableKeyRotation: true, description: 'Encrypts the log groups of the idempotent-event-flow example' });

    this.flow = new IdempotentEventFlow(this, 'Orders', {
      eventSource: 'urn:example:orders',
      // a CloudWatch dashboard of the relay and every subscriber, and an alarm when p99 end-to-end latency reaches 1 minute
      dashboard: true,
      maxEndToEndLatency: Duration.minutes(1),
      alarmActions,
      logEncryptionKey,
      removalPolicy,
      // Some orders carry a large document (a signed contract; a delivery, its proof-of-delivery scan): an event larger
      // than fits inline has its data written to the flow's payload bucket, and every subscriber reads it back, the
      // loyalty team's in its own account and the ordered one too (docs/LARGE-EVENTS.md)
      offloadLargeEvents: true,
    });

    const placeOrder = this.flow.addProducer('PlaceOrder', {
      entry: path.join(__dirname, 'functions', 'place-order.ts'),
      environment: { ORDERS_TABLE_NAME: orders.tableName },
      removalPolicy,
    });
    // PlaceOrder is invoked synchronously by the ordering client: the construct answers cdk-nag's LambdaDLQ for that
    orders.grant(placeOrder, 'dynamodb:PutItem', 'dynamodb:GetItem');

    const billing = this.flow.addSubscriber('Billing', {
      entry: path.join(__dirname, 'functions', 'billing.ts'),
      environment: { LEDGER_TABLE_NAME: ledger.tableName },
      filterPolicyWithMessageBody: { type: eventType(ORDER_PLACED) },
      // emits OrderBilled in its own commit: the outbox environment and PutItem on the outbox
      publishesEvents: true,
    });
    ledger.grant(billing.consumerFunction, 'dynamodb:UpdateItem');

    const invoicing = this.flow.addSubscriber('Invoicing', {
      entry: path.join(__dirname, 'functions', 'invoicing.ts'),
      processingMode: ProcessingMode.MULTI_STEP,
      environment: { ACCOUNTING_INVOICES_TABLE_NAME: accountingInvoices.tableName, MAIL_TABLE_NAME: mail.tableName },
      filterPolicyWithMessageBody: { type: eventType(ORDER_PLACED) },
    });
    accountingInvoices.grant(invoicing.consumerFunction, 'dynamodb:PutItem');
    mail.grant(invoicing.consumerFunction, 'dynamodb:UpdateItem');

    const notifications = this.flow.addSubscriber('Notifications', {
      entry: path.join(__dirname, 'functions', 'notifications.ts'),
      processingMode: ProcessingMode.LEASE,
      environment: { MAIL_TABLE_NAME: mail.tableName },
      filterPolicyWithMessageBody: { type: eventType(ORDER_PLACED) },
    });
    mail.grant(notifications.consumerFunction, 'dynamodb:UpdateItem');

    // The on-call operator lists and resolves the messages the lease and multi-step subscribers block
    // (`npx idempotent-event-flow blocked ...`), and may do nothing else.
    const operator = new iam.Role(this, 'OperatorRole', {
      assumedBy: new iam.AccountRootPrincipal(),
      description: 'On-call operator: lists and resolves the blocked messages of the Invoicing and Notifications subscribers',
    });
    invoicing.inboxTable?.grantOperator(operator);
    notifications.inboxTable?.grantOperator(operator);
    Validations.of(operator).acknowledge(
      ...['NIST.800.53.R5-IAMNoInlinePolicy', 'HIPAA.Security-IAMNoInlinePolicy', 'PCI.DSS.321-IAMNoInlinePolicy'].map((id) => ({
        id,
        reason:
          "The operator role's only policy is the inline one grantOperator writes: the BlockedMessages index and records of " +
          'two inbox tables, nothing else. Inline keeps it bound to this one role.',
      })),
    );

    const shipping = this.flow.addSubscriber('Shipping', {
      entry: path.join(__dirname, 'functions', 'shipping.ts'),
      environment: { SHIPMENTS_TABLE_NAME: shipments.tableName },
      // OrderPlaced events only; the handler ships those with a shipping address. (A filter on `data` is refused with
      // offloadLargeEvents: an offloaded event's envelope carries no data, so SNS would drop it for this subscriber.)
      filterPolicyWithMessageBody: { type: eventType(ORDER_PLACED) },
    });
    shipments.grant(shipping.consumerFunction, 'dynamodb:PutItem');

    const customerStatsSubscriber = this.flow.addSubscriber('CustomerStats', {
      entry: path.join(__dirname, 'functions', 'customer-stats.ts'),
      processingMode: ProcessingMode.AGGREGATE,
      environment: { CUSTOMER_STATS_TABLE_NAME: customerStats.tableName },
      filterPolicyWithMessageBody: { type: eventType(ORDER_BILLED) },
    });
    // a strongly consistent read of the customer's item, then one conditional Put of its next version
    customerStats.grant(customerStatsSubscriber.consumerFunction, 'dynamodb:GetItem', 'dynamodb:PutItem');

    // The ordered path: a second reader of the outbox stream (a shard serves two) relays the fulfilment steps through an
    // SQS FIFO queue whose message group is the order, and an SNS FIFO topic, to each ordered subscriber's FIFO queue.
    const orderedRelay = new OrderedRelay(this, 'OrderedRelay', { outboxTable: this.flow.outboxTable, alarmActions, logEncryptionKey, removalPolicy });
    const fulfilOrder = this.flow.addProducer('Fulfilment', {
      entry: path.join(__dirname, 'functions', 'fulfil-order.ts'),
      environment: { FULFILMENT_TABLE_NAME: fulfilment.tableName },
      removalPolicy,
    });
    // OrderedOutbox reads the order's head item before it writes: the relay grants that read with the Put
    orderedRelay.grantAppendOrderedEvents(fulfilOrder);
    fulfilment.grant(fulfilOrder, 'dynamodb:UpdateItem');

    const orderTracking = new OrderedSubscriber(this, 'OrderTracking', {
      relay: orderedRelay,
      subscriberName: 'OrderTracking',
      entry: path.join(__dirname, 'functions', 'order-tracking.ts'),
      environment: { TRACKING_TABLE_NAME: tracking.tableName },
      alarmActions,
      logEncryptionKey,
      removalPolicy,
    });
    tracking.grant(orderTracking.consumerFunction, 'dynamodb:UpdateItem');
    // The ordered path's alarms in flow.alarms and its rows on the flow's dashboard (pipe failures, dead letters, a held order)
    this.flow.registerOrderedRelay(orderedRelay);
    this.flow.registerOrderedSubscriber(orderTracking);

    // Daily backups of every table, the business tables and the flow's (PITR is on for all of them too).
    const backups = new backup.BackupPlan(this, 'Backups', {
      backupVault: new backup.BackupVault(this, 'BackupVault', { encryptionKey: new kms.Key(this, 'BackupKey', { enableKeyRotation: true }), removalPolicy }),
      backupPlanRules: [backup.BackupPlanRule.daily()],
    });
    const selection = backups.addSelection('Tables', {
      resources: [
        ...[orders, ledger, shipments, customerStats, accountingInvoices, mail, fulfilment, tracking, ...this.flow.tables].map((table) => backup.BackupResource.fromDynamoDbTable(table)),
        backup.BackupResource.fromArn(orderTracking.inboxTable.tableArn),
      ],
    });
    Validations.of(selection).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSBackupServiceRolePolicyForBackup]',
      reason:
        "AWS Backup's own service role policy, which AWS keeps in step with what backing up each resource type needs; " +
        'the role is assumable by backup.amazonaws.com only.',
    });

    // Opt-in controls the example leaves off, so it deploys anywhere at no extra cost (docs/COMPLIANCE.md):
    const functions = [placeOrder, fulfilOrder, ...this.flow.subscribers.map((s) => s.consumerFunction), orderTracking.consumerFunction].map((f) => f.lambdaFunction);
    for (const fn of [...functions, orderedRelay.fanOutFunction]) acknowledgeOptInFunctionControls(fn);
  }
}

/** A body filter policy entry that passes events of one type. */
export function eventType(type: string): sns.FilterOrPolicy {
  return sns.FilterOrPolicy.filter(sns.SubscriptionFilter.stringFilter({ allowlist: [type] }));
}

/** A business table of the example: on-demand, PITR, encrypted with the AWS managed key. */
export function businessTable(scope: Construct, id: string, removalPolicy: RemovalPolicy): dynamodb.Table {
  return new dynamodb.Table(scope, id, {
    partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
    billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
    encryption: dynamodb.TableEncryption.AWS_MANAGED,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    removalPolicy,
  });
}
