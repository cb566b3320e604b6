import { Annotations, type App, Stack, Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as backup from 'aws-cdk-lib/aws-backup';
import * as cloudwatchActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as cxapi from 'aws-cdk-lib/cx-api';
import { beforeAll, describe, expect, test } from 'vitest';
import { IdempotentEventFlow, OutboxTable, ProcessingMode, type ProducerFunction, type Subscriber } from '../../lib';
import { HANDLER_ENTRY } from '../fixtures/construct-test-kit';
import { assertCompliant, checkCompliance, type ComplianceResult, complianceApp, formatComplianceResult } from '../support/compliance';

interface Scenario {
  readonly app: App;
  readonly stack: Stack;
  readonly flow: IdempotentEventFlow;
  readonly result: ComplianceResult;
  readonly template: Template;
}

/** Builds a stack on a compliance app, then synthesizes and checks it once. */
function scenario(build: (stack: Stack) => IdempotentEventFlow, options: { regulatoryPacks?: boolean } = {}): Scenario {
  const app = complianceApp(options);
  const stack = new Stack(app, 'FlowStack');
  const flow = build(stack);
  const result = checkCompliance(app);
  // synth() is cached: this is the assembly checkCompliance validated.
  const template = Template.fromJSON(app.synth().getStackByName(stack.stackName).template);
  return { app, stack, flow, result, template };
}

/**
 * A flow without alarmActions warns that its alarms notify nobody (a finding in strict mode); a user who means it
 * acknowledges the warning, as these test stacks do.
 */
function acknowledgeNoAlarmActions(flow: IdempotentEventFlow): void {
  Annotations.of(flow).acknowledgeWarning('idempotent-event-flow:noAlarmActions', 'A test stack: nobody is on call for it.');
}

/** The compliance assertions every scenario must pass. */
function complianceTests(get: () => Scenario, packs: string[] = ['AwsSolutions', 'Serverless']): void {
  test(`has no unanswered ${packs.join(', ')} findings`, () => {
    const { result } = get();
    expect(result.unansweredFindings, formatComplianceResult(result)).toEqual([]);
    // Every pack really ran: each answered findings of its own.
    expect(new Set(result.acknowledged.map((a) => a.source))).toEqual(new Set(packs));
  });

  test('has no CloudFormation validation findings in strict mode', () => {
    const { app, result } = get();
    expect(app.node.tryGetContext(cxapi.STRICT_CFN_VALIDATE_ERRORS)).toBe(true);
    expect(result.cfnValidationErrors, formatComplianceResult(result)).toEqual([]);
  });

  test('gives a reason for every acknowledgement', () => {
    const { result } = get();
    expect(result.acknowledgementsWithoutReason).toEqual([]);
    expect(result.acknowledged.filter((a) => a.reason.trim().length < 20)).toEqual([]);
  });

  test('passes assertCompliant', () => {
    expect(() => assertCompliant(get().result)).not.toThrow();
  });
}

describe('minimal flow: no props, one subscriber', () => {
  let s: Scenario;
  beforeAll(() => {
    s = scenario((stack) => {
      const flow = new IdempotentEventFlow(stack, 'Orders');
      flow.addSubscriber('Billing', { entry: HANDLER_ENTRY });
      acknowledgeNoAlarmActions(flow);
      return flow;
    });
  });

  complianceTests(() => s);

  test('synthesized the whole flow', () => {
    s.template.resourceCountIs('AWS::Pipes::Pipe', 1);
    s.template.resourceCountIs('AWS::DynamoDB::Table', 2);
    s.template.resourceCountIs('AWS::Lambda::Function', 1);
    s.template.resourceCountIs('AWS::CloudWatch::Alarm', 7); // the relay's 2, the subscriber's 5
  });
});

describe('minimal flow with a producer: the construct answers its LambdaDLQ finding, the user acknowledges nothing of it', () => {
  let s: Scenario;
  let producer: ProducerFunction;
  beforeAll(() => {
    s = scenario((stack) => {
      const flow = new IdempotentEventFlow(stack, 'Orders');
      flow.addSubscriber('Billing', { entry: HANDLER_ENTRY });
      producer = flow.addProducer('PlaceOrder', { entry: HANDLER_ENTRY });
      acknowledgeNoAlarmActions(flow);
      return flow;
    });
  });

  complianceTests(() => s);

  test("acknowledges Serverless-LambdaDLQ on the producer function, with the reason: it is invoked synchronously by the user's API", () => {
    const path = producer.lambdaFunction.node.path;
    const onProducer = s.result.acknowledged.filter((a) => a.ruleId === 'Serverless-LambdaDLQ' && a.path.startsWith(path));
    expect(onProducer.length).toBeGreaterThan(0);
    for (const a of onProducer) expect(a.acknowledgedAt).toBe(path);
    for (const a of onProducer) expect(a.reason).toMatch(/invoked synchronously by the user's API.*dead-letter queue only applies to asynchronous invocations/);
  });
});

describe('minimal flow: one subscriber per processing mode, one of them publishing, and an operator role', () => {
  let s: Scenario;
  let subscribers: Subscriber[];
  let operator: iam.Role;

  beforeAll(() => {
    s = scenario((stack) => {
      const flow = new IdempotentEventFlow(stack, 'Orders');
      subscribers = [
        flow.addSubscriber('Billing', { entry: HANDLER_ENTRY, processingMode: ProcessingMode.TRANSACTIONAL, publishesEvents: true }),
        flow.addSubscriber('Payments', { entry: HANDLER_ENTRY, processingMode: ProcessingMode.LEASE }),
        flow.addSubscriber('Fulfilment', { entry: HANDLER_ENTRY, processingMode: ProcessingMode.MULTI_STEP }),
        flow.addSubscriber('Ledger', { entry: HANDLER_ENTRY, processingMode: ProcessingMode.AGGREGATE }),
      ];
      // The operator CLI's role: list, inspect and resolve blocked messages of the lease subscriber.
      operator = new iam.Role(stack, 'Operator', { assumedBy: new iam.AccountRootPrincipal() });
      subscribers[1].inboxTable!.grantOperator(operator);
      acknowledgeNoAlarmActions(flow);
      return flow;
    });
  });

  complianceTests(() => s);

  test('synthesized one subscriber per mode: inboxes for all but the aggregate one, Blocked alarms for lease and multi-step', () => {
    expect(subscribers.map((sub) => sub.processingMode)).toEqual([
      ProcessingMode.TRANSACTIONAL,
      ProcessingMode.LEASE,
      ProcessingMode.MULTI_STEP,
      ProcessingMode.AGGREGATE,
    ]);
    s.template.resourceCountIs('AWS::DynamoDB::Table', 1 + 3);
    s.template.resourceCountIs('AWS::Lambda::Function', 4);
    s.template.resourceCountIs('AWS::CloudWatch::Alarm', 2 + 5 * 4 + 2);
  });

  test("scoped the operator role to the lease inbox and its BlockedMessages index", () => {
    const statements = Object.values(
      s.template.findResources('AWS::IAM::Policy', { Properties: { Roles: [s.stack.resolve(operator.roleName)] } }),
    ).flatMap((p) => (p as { Properties: { PolicyDocument: { Statement: unknown[] } } }).Properties.PolicyDocument.Statement);
    const inboxArn = s.stack.resolve(subscribers[1].inboxTable!.tableArn);
    expect(JSON.stringify(statements)).toContain('/index/BlockedMessages');
    expect(JSON.stringify(statements)).toContain(JSON.stringify(inboxArn));
  });
});

describe('flow over an existing single-table outbox with a customer-managed key and alarm actions', () => {
  let s: Scenario;
  let key: kms.Key;
  let table: dynamodb.Table;
  let ops: sns.Topic;

  beforeAll(() => {
    s = scenario((stack) => {
      key = new kms.Key(stack, 'Key', { enableKeyRotation: true, description: 'Encrypts the orders table and the event flow' });
      table = new dynamodb.Table(stack, 'SingleTable', {
        partitionKey: { name: 'PK', type: dynamodb.AttributeType.STRING },
        sortKey: { name: 'SK', type: dynamodb.AttributeType.STRING },
        billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
        stream: dynamodb.StreamViewType.NEW_AND_OLD_IMAGES,
        timeToLiveAttribute: 'ttl',
        encryption: dynamodb.TableEncryption.CUSTOMER_MANAGED,
        encryptionKey: key,
        pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      });
      // CloudWatch alarms publish to an encrypted topic only if the key lets CloudWatch use it.
      key.grant(new iam.ServicePrincipal('cloudwatch.amazonaws.com'), 'kms:Decrypt', 'kms:GenerateDataKey*');
      ops = new sns.Topic(stack, 'Ops', { masterKey: key, enforceSSL: true });
      const outboxTable = OutboxTable.fromTableAttributes(stack, 'Outbox', {
        table,
        partitionKeyName: 'PK',
        sortKeyName: 'SK',
        timeToLiveAttributeName: 'ttl',
        eventSource: 'urn:example:orders',
      });
      const flow = new IdempotentEventFlow(stack, 'Orders', {
        outboxTable,
        encryptionKey: key,
        alarmActions: [new cloudwatchActions.SnsAction(ops)],
      });
      flow.addSubscriber('Billing', { entry: HANDLER_ENTRY });
      return flow;
    });
  });

  complianceTests(() => s);

  test('relays the stream of the existing table and creates no outbox table or key of its own', () => {
    s.template.resourceCountIs('AWS::DynamoDB::Table', 2); // the single table and the inbox
    s.template.resourceCountIs('AWS::KMS::Key', 1);
    s.template.hasResourceProperties('AWS::Pipes::Pipe', { Source: s.stack.resolve(table.tableStreamArn) });
  });

  test('lets the relay decrypt the stream with the table key', () => {
    const relayStatements = Object.values(
      s.template.findResources('AWS::IAM::Policy', { Properties: { Roles: [s.stack.resolve(s.flow.relay.role.roleName)] } }),
    ).flatMap((p) => (p as { Properties: { PolicyDocument: { Statement: Array<Record<string, unknown>> } } }).Properties.PolicyDocument.Statement);
    expect(relayStatements).toContainEqual(
      expect.objectContaining({ Action: expect.arrayContaining(['kms:Decrypt']), Resource: s.stack.resolve(key.keyArn) }),
    );
  });

  test('notifies the ops topic from every alarm', () => {
    const alarms = Object.values(s.template.findResources('AWS::CloudWatch::Alarm')) as Array<{ Properties: Record<string, unknown> }>;
    expect(alarms).toHaveLength(7);
    for (const alarm of alarms) {
      expect(alarm.Properties.AlarmActions).toEqual([s.stack.resolve(ops.topicArn)]);
      expect(alarm.Properties.OKActions).toEqual([s.stack.resolve(ops.topicArn)]);
    }
  });
});

describe('minimal flow with the compliance props set, under AwsSolutions, Serverless, NIST 800-53 R5, HIPAA Security and PCI DSS 3.2.1', () => {
  let s: Scenario;
  let logKey: kms.Key;

  beforeAll(() => {
    s = scenario(
      (stack) => {
        logKey = new kms.Key(stack, 'LogsKey', { enableKeyRotation: true });
        const opsKey = new kms.Key(stack, 'OpsKey', { enableKeyRotation: true });
        opsKey.addToResourcePolicy(
          new iam.PolicyStatement({
            principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
            actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
            resources: ['*'],
            conditions: { StringEquals: { 'aws:SourceAccount': stack.account } },
          }),
        );
        const ops = new sns.Topic(stack, 'Ops', { masterKey: opsKey, enforceSSL: true });
        const vpc = new ec2.Vpc(stack, 'Vpc', {
          maxAzs: 2,
          natGateways: 0,
          subnetConfiguration: [{ name: 'Isolated', subnetType: ec2.SubnetType.PRIVATE_ISOLATED }],
          restrictDefaultSecurityGroup: false,
        });
        const flow = new IdempotentEventFlow(stack, 'Orders', {
          logEncryptionKey: logKey,
          alarmActions: [new cloudwatchActions.SnsAction(ops)],
        });
        flow.addSubscriber('Billing', { entry: HANDLER_ENTRY, reservedConcurrentExecutions: 5, vpc });
        flow.addProducer('PlaceOrder', { entry: HANDLER_ENTRY, reservedConcurrentExecutions: 5, vpc });
        const plan = new backup.BackupPlan(stack, 'Backups', {
          backupVault: new backup.BackupVault(stack, 'Vault', { encryptionKey: new kms.Key(stack, 'BackupKey', { enableKeyRotation: true }) }),
          backupPlanRules: [backup.BackupPlanRule.daily()],
        });
        const selection = plan.addSelection('EventFlow', { resources: flow.tables.map((t) => backup.BackupResource.fromDynamoDbTable(t)) });
        // the user's side, not the library's: a VPC (its flow logs) and AWS Backup's own service role policy
        Validations.of(vpc).acknowledge(
          ...['AwsSolutions-VPC7', 'NIST.800.53.R5-VPCFlowLogsEnabled', 'HIPAA.Security-VPCFlowLogsEnabled', 'PCI.DSS.321-VPCFlowLogsEnabled'].map((id) => ({
            id,
            reason: 'A test VPC with isolated subnets only; flow logs are the account owner\'s choice, not the library\'s.',
          })),
          ...['NIST.800.53.R5', 'HIPAA.Security', 'PCI.DSS.321'].map((pack) => ({
            id: `${pack}-VPCDefaultSecurityGroupClosed`,
            reason: 'A test VPC: closing its default security group takes a custom resource, the account owner\'s choice.',
          })),
        );
        Validations.of(selection).acknowledge({
          id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSBackupServiceRolePolicyForBackup]',
          reason: "AWS Backup's own service role policy, assumable by backup.amazonaws.com only.",
        });
        // no acknowledgement of the producer's LambdaDLQ here: the construct answers it (issue 12, item 10)
        return flow;
      },
      { regulatoryPacks: true },
    );
  });

  complianceTests(() => s, ['AwsSolutions', 'Serverless', 'NIST.800.53.R5', 'HIPAA.Security', 'PCI.DSS.321']);

  test('answers the regulatory rules with the props, not with acknowledgements (only inline policies and Lambda DLQs are acknowledged)', () => {
    const regulatory = s.result.acknowledged.filter((a) => !['AwsSolutions', 'Serverless'].includes(a.source));
    const libraryRules = new Set(regulatory.filter((a) => a.path.startsWith('FlowStack/Orders/')).map((a) => a.ruleId.replace(/^[^-]+-/, '')));
    expect(libraryRules).toEqual(new Set(['IAMNoInlinePolicy', 'LambdaDLQ']));
    for (const group of Object.values(s.template.findResources('AWS::Logs::LogGroup')) as Array<{ Properties: { KmsKeyId?: unknown } }>) {
      expect(group.Properties.KmsKeyId).toEqual(s.stack.resolve(logKey.keyArn));
    }
    for (const fn of Object.values(s.template.findResources('AWS::Lambda::Function')) as Array<{ Properties: Record<string, unknown> }>) {
      expect(fn.Properties.ReservedConcurrentExecutions).toBe(5);
      expect(fn.Properties.VpcConfig).toBeDefined();
    }
  });
});
