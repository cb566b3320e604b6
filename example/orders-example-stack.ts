import { RemovalPolicy, Stack, StackProps, Validations } from 'aws-cdk-lib';
import * as cloudwatchActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import * as path from 'node:path';
import { IdempotentEventFlow } from '../lib';
import { ORDER_PLACED } from './functions/order-events';

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
 * The example: an orders producer writes an order and its `OrderPlaced` event in one transaction; a billing
 * subscriber debits the customer's ledger exactly once per order; a shipping subscriber, behind a filter policy on
 * the message body, creates one shipment per order that has a shipping address. Every alarm notifies an ops topic.
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

    this.flow = new IdempotentEventFlow(this, 'Orders', {
      eventSource: 'urn:example:orders',
      alarmActions: [new cloudwatchActions.SnsAction(opsTopic(this))],
      removalPolicy,
    });

    const placeOrder = this.flow.addProducer('PlaceOrder', {
      entry: path.join(__dirname, 'functions', 'place-order.ts'),
      environment: { ORDERS_TABLE_NAME: orders.tableName },
      removalPolicy,
    });
    orders.grant(placeOrder, 'dynamodb:PutItem');
    Validations.of(placeOrder.lambdaFunction).acknowledge({
      id: 'Serverless-LambdaDLQ',
      reason:
        'PlaceOrder is invoked synchronously (RequestResponse) by the ordering client, which sees and retries failures; ' +
        'a Lambda dead-letter queue only applies to asynchronous invocations.',
    });

    const billing = this.flow.addSubscriber('Billing', {
      entry: path.join(__dirname, 'functions', 'billing.ts'),
      environment: { LEDGER_TABLE_NAME: ledger.tableName },
    });
    ledger.grant(billing.consumerFunction, 'dynamodb:UpdateItem');

    const shipping = this.flow.addSubscriber('Shipping', {
      entry: path.join(__dirname, 'functions', 'shipping.ts'),
      environment: { SHIPMENTS_TABLE_NAME: shipments.tableName },
      // Only OrderPlaced events whose data has a shipping address reach the shipping queue.
      filterPolicyWithMessageBody: {
        type: sns.FilterOrPolicy.filter(sns.SubscriptionFilter.stringFilter({ allowlist: [ORDER_PLACED] })),
        data: sns.FilterOrPolicy.policy({
          shippingAddress: sns.FilterOrPolicy.policy({
            country: sns.FilterOrPolicy.filter(sns.SubscriptionFilter.existsFilter()),
          }),
        }),
      },
    });
    shipments.grant(shipping.consumerFunction, 'dynamodb:PutItem');
  }
}

/** A business table of the example: on-demand, PITR, encrypted with the AWS managed key. */
function businessTable(scope: Construct, id: string, removalPolicy: RemovalPolicy): dynamodb.Table {
  return new dynamodb.Table(scope, id, {
    partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
    billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
    encryption: dynamodb.TableEncryption.AWS_MANAGED,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    removalPolicy,
  });
}

/** The topic the flow's alarms notify: encrypted with a key CloudWatch may use, TLS-only. */
function opsTopic(scope: Construct): sns.Topic {
  const key = new kms.Key(scope, 'OpsAlarmsKey', {
    enableKeyRotation: true,
    description: 'Encrypts the ops alarm topic of the idempotent-event-flow example',
  });
  // CloudWatch alarms publish to an encrypted topic only if the key lets CloudWatch use it.
  key.grant(new iam.ServicePrincipal('cloudwatch.amazonaws.com'), 'kms:Decrypt', 'kms:GenerateDataKey*');
  return new sns.Topic(scope, 'OpsAlarms', { masterKey: key, enforceSSL: true });
}
