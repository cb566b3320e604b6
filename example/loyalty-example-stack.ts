import { RemovalPolicy, Stack, StackProps, Validations } from 'aws-cdk-lib';
import * as backup from 'aws-cdk-lib/aws-backup';
import * as cloudwatchActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as kms from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import * as path from 'node:path';
import { IdempotentEventFlow, Subscriber } from '../lib';
import { ORDER_BILLED } from './functions/order-events';
import { businessTable, eventType } from './orders-example-stack';
import { opsTopic } from './ops-topic';
import { acknowledgeOptInFunctionControls } from './opt-in-controls';

/** Properties of {@link LoyaltyExampleStack}. */
export interface LoyaltyExampleStackProps extends StackProps {
  /** The orders flow, in the orders team's account (another account than this stack's `env`). */
  readonly flow: IdempotentEventFlow;

  /**
   * What happens to the loyalty team's tables, queues and logs when the stack is deleted.
   *
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
}

/**
 * The loyalty team's stack, in its OWN AWS account (docs/CROSS-ACCOUNT.md): one subscriber of the orders flow,
 * `Loyalty` (TRANSACTIONAL, `OrderBilled` only), which credits the customer's points for each billed order. What this
 * stack holds, all in the loyalty account: the subscriber's queue and dead-letter queues encrypted with its own key
 * (whose policy lets SNS use it for the orders topic only), the queue policy (SNS may send for that topic only), the
 * subscription (created by this account, so it needs no confirmation: the orders flow's topic policy lets this account
 * subscribe this queue), the inbox, the points table, the consumer function, its alarms (notifying this account's ops
 * topic), its `Operator` output and the daily backups of its two tables. The orders stack gets only the topic policy's grant and a text row on its
 * dashboard. CDK deploys the orders stack first (the subscription needs the topic and the grant).
 */
export class LoyaltyExampleStack extends Stack {
  /** The loyalty subscriber, exposed for tests. */
  public readonly subscriber: Subscriber;

  public constructor(scope: Construct, id: string, props: LoyaltyExampleStackProps) {
    super(scope, id, props);
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
    const points = businessTable(this, 'PointsTable', removalPolicy);
    const logEncryptionKey = new kms.Key(this, 'LogsKey', { enableKeyRotation: true, description: 'Encrypts the log groups of the loyalty team (idempotent-event-flow example)' });

    this.subscriber = new Subscriber(this, 'Loyalty', {
      flow: props.flow,
      entry: path.join(__dirname, 'functions', 'loyalty.ts'),
      environment: { LOYALTY_TABLE_NAME: points.tableName },
      filterPolicyWithMessageBody: { type: eventType(ORDER_BILLED) },
      // its alarms notify the loyalty team's own topic: the orders account's can not be referred to from here
      alarmActions: [new cloudwatchActions.SnsAction(opsTopic(this))],
      logEncryptionKey,
      removalPolicy,
    });
    points.grant(this.subscriber.consumerFunction, 'dynamodb:PutItem');

    // Daily backups of the loyalty account's tables (the orders stack can not select tables of another account).
    const backups = new backup.BackupPlan(this, 'Backups', {
      backupVault: new backup.BackupVault(this, 'BackupVault', { encryptionKey: new kms.Key(this, 'BackupKey', { enableKeyRotation: true }), removalPolicy }),
      backupPlanRules: [backup.BackupPlanRule.daily()],
    });
    const selection = backups.addSelection('Tables', {
      resources: [backup.BackupResource.fromDynamoDbTable(points), backup.BackupResource.fromArn(this.subscriber.inboxTable!.tableArn)],
    });
    Validations.of(selection).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSBackupServiceRolePolicyForBackup]',
      reason:
        "AWS Backup's own service role policy, which AWS keeps in step with what backing up each resource type needs; " +
        'the role is assumable by backup.amazonaws.com only.',
    });

    // Opt-in controls the example leaves off, as in the orders stack (docs/COMPLIANCE.md).
    acknowledgeOptInFunctionControls(this.subscriber.consumerFunction.lambdaFunction);
  }
}
