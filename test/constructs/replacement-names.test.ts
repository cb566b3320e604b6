/**
 * Every change that makes CloudFormation replace the relay's pipe or the event topic must deploy: CloudFormation
 * creates the replacement before it deletes the old resource, so a replacement under the same name fails. `Name` and
 * `Source` of `AWS::Pipes::Pipe`, and `TopicName` of `AWS::SNS::Topic`, are create-only.
 *
 * A name that is only known at deploy time (it contains the stream's label) is resolved here with the simulator's
 * resolver of CloudFormation intrinsics, given the attribute values CloudFormation would give.
 */
import { App, Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as sns from 'aws-cdk-lib/aws-sns';
import { describe, expect, test } from 'vitest';
import { EventTopic } from '../../lib/topic';
import { OutboxRelay, OutboxTable, type IOutboxTable } from '../../lib/outbox';
import { OrderedRelay } from '../../lib/ordered';
import { resolveValue } from '../../simulator/model/intrinsics';

const REGION = 'eu-west-1';
const ACCOUNT = '111111111111';

/** What CloudFormation gives a table's `StreamArn` when the stream was created at `label` (an ISO timestamp). */
function streamArn(tableName: string, label: string): string {
  return `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${tableName}/stream/${label}`;
}

interface Deployed {
  /** The pipe's `Name` as CloudFormation resolves it. */
  readonly pipeName: string;
  /** The `aws:SourceArn` the pipe role's trust policy allows, resolved the same way. */
  readonly trustedSourceArn: string;
}

/** Resolves the pipe's name and its role's trust condition with `labels` as the tables' stream labels. */
function deploy(stack: Stack, labels: Record<string, string>): Deployed {
  const template = Template.fromStack(stack);
  const names = {
    region: REGION,
    accountId: ACCOUNT,
    ref: (key: string) => key.split('/')[1],
    getAtt: (key: string, attribute: string) => {
      const logicalId = key.split('/')[1]!;
      return attribute === 'StreamArn' && labels[logicalId] !== undefined ? streamArn(logicalId, labels[logicalId]) : undefined;
    },
  };
  const [pipe] = Object.values(template.findResources('AWS::Pipes::Pipe'));
  const [role] = Object.values(template.findResources('AWS::IAM::Role')).filter((r) =>
    JSON.stringify(r.Properties.AssumeRolePolicyDocument).includes('pipes.amazonaws.com'),
  );
  const resolve = (value: unknown): string => resolveValue(value, stack.stackName, names, 'test value');
  return {
    pipeName: resolve(pipe!.Properties.Name),
    trustedSourceArn: resolve(role!.Properties.AssumeRolePolicyDocument.Statement[0].Condition.ArnEquals['aws:SourceArn']),
  };
}

/** The two relays whose pipe reads the outbox stream: the standard one (to the topic) and the ordered one (to its FIFO queue). */
type RelayKind = 'OutboxRelay' | 'OrderedRelay';

interface RelayOptions {
  readonly kind?: RelayKind;
  readonly outboxId?: string;
  readonly imported?: string;
  readonly ownTable?: dynamodb.StreamViewType;
  readonly batchSize?: number;
  readonly maximumRecordAge?: Duration;
}

function synthKindOfRelay(options: RelayOptions): { stack: Stack; tableLogicalId: string } {
  const stack = new Stack(new App({ builtinCloudFormationValidation: false }), 'Stack', { env: { region: REGION, account: ACCOUNT } });
  let outboxTable: IOutboxTable;
  let tableLogicalId: string;
  if (options.imported !== undefined) {
    const table = dynamodb.Table.fromTableName(stack, 'Orders', 'Orders');
    outboxTable = OutboxTable.fromTableAttributes(stack, 'Existing', { table, tableStreamArn: options.imported, partitionKeyName: 'PK' });
    tableLogicalId = '';
  } else if (options.ownTable !== undefined) {
    const table = new dynamodb.Table(stack, 'Orders', {
      partitionKey: { name: 'PK', type: dynamodb.AttributeType.STRING },
      sortKey: { name: 'SK', type: dynamodb.AttributeType.STRING },
      stream: options.ownTable,
    });
    outboxTable = OutboxTable.fromTableAttributes(stack, 'Existing', { table, partitionKeyName: 'PK', sortKeyName: 'SK' });
    tableLogicalId = stack.getLogicalId(table.node.defaultChild as dynamodb.CfnTable);
  } else {
    const created = new OutboxTable(stack, options.outboxId ?? 'Outbox');
    outboxTable = created;
    tableLogicalId = stack.getLogicalId(created.table.node.defaultChild as dynamodb.CfnTable);
  }
  if (options.kind === 'OrderedRelay') {
    new OrderedRelay(stack, 'Relay', { outboxTable, maximumRecordAge: options.maximumRecordAge });
  } else {
    new OutboxRelay(stack, 'Relay', {
      outboxTable,
      topic: new sns.Topic(stack, 'Topic'),
      batchSize: options.batchSize,
      maximumRecordAge: options.maximumRecordAge,
    });
  }
  return { stack, tableLogicalId };
}

describe.each<RelayKind>(['OutboxRelay', 'OrderedRelay'])("%s's default pipe name", (kind) => {
  const synthRelay = (options: RelayOptions = {}) => synthKindOfRelay({ ...options, kind });

  test('changes when the outbox stream is replaced (stream re-enabled or its view type changed): the stream gets a new label', () => {
    const before = synthRelay({ ownTable: dynamodb.StreamViewType.NEW_IMAGE });
    const after = synthRelay({ ownTable: dynamodb.StreamViewType.NEW_AND_OLD_IMAGES });
    const oldName = deploy(before.stack, { [before.tableLogicalId]: '2024-01-01T00:00:00.000' }).pipeName;
    const newName = deploy(after.stack, { [after.tableLogicalId]: '2025-06-30T12:34:56.789' }).pipeName;
    expect(oldName).toMatch(/^[.\-_A-Za-z0-9]{1,64}$/);
    expect(newName).toMatch(/^[.\-_A-Za-z0-9]{1,64}$/);
    expect(newName).not.toBe(oldName);
  });

  test('changes when the outbox table is replaced', () => {
    const before = synthRelay({ outboxId: 'Outbox' });
    const after = synthRelay({ outboxId: 'OutboxV2' });
    expect(after.tableLogicalId).not.toBe(before.tableLogicalId);
    const oldName = deploy(before.stack, { [before.tableLogicalId]: '2024-01-01T00:00:00.000' }).pipeName;
    const newName = deploy(after.stack, { [after.tableLogicalId]: '2024-03-01T08:00:00.000' }).pipeName;
    expect(newName).not.toBe(oldName);
  });

  test('changes with the stream ARN of an imported outbox table, already at synth', () => {
    const before = synthRelay({ imported: streamArn('Orders', '2024-01-01T00:00:00.000') });
    const after = synthRelay({ imported: streamArn('Orders', '2024-02-02T10:20:30.400') });
    const oldName = Template.fromStack(before.stack).findResources('AWS::Pipes::Pipe');
    const newName = Template.fromStack(after.stack).findResources('AWS::Pipes::Pipe');
    const literal = (resources: Record<string, any>): unknown => Object.values(resources)[0].Properties.Name;
    expect(typeof literal(oldName)).toBe('string');
    expect(literal(newName)).not.toBe(literal(oldName));
  });

  test('stays the same when only settings updated in place change (no replacement, no new name)', () => {
    const before = synthRelay({});
    const after = synthRelay({ batchSize: kind === 'OutboxRelay' ? 5 : undefined, maximumRecordAge: Duration.hours(2) });
    const labels = { [before.tableLogicalId]: '2024-01-01T00:00:00.000' };
    expect(deploy(after.stack, labels).pipeName).toBe(deploy(before.stack, labels).pipeName);
  });

  test("is the name the role's trust policy allows (aws:SourceArn), before and after a replacement", () => {
    const { stack, tableLogicalId } = synthRelay({});
    for (const label of ['2024-01-01T00:00:00.000', '2025-06-30T12:34:56.789']) {
      const deployed = deploy(stack, { [tableLogicalId]: label });
      expect(deployed.trustedSourceArn).toBe(`arn:aws:pipes:${REGION}:${ACCOUNT}:pipe/${deployed.pipeName}`);
    }
  });
});

describe('the default topic name', () => {
  function synthTopic(id: string): { name: unknown; sourceArn: unknown; stack: Stack } {
    const stack = new Stack(new App({ builtinCloudFormationValidation: false }), 'Stack', { env: { region: REGION, account: ACCOUNT } });
    new EventTopic(stack, id);
    const template = Template.fromStack(stack);
    const [resource] = Object.values(template.findResources('AWS::SNS::Topic'));
    const [key] = Object.values(template.findResources('AWS::KMS::Key'));
    const statement = key!.Properties.KeyPolicy.Statement.find((s: any) => s.Sid === 'AllowSnsToDeliverToQueuesEncryptedWithThisKey');
    return { name: resource!.Properties.TopicName, sourceArn: statement.Condition.ArnEquals['aws:SourceArn'], stack };
  }

  // TopicName and FifoTopic are the topic's create-only properties; EventTopic is always standard (FifoTopic unset),
  // so the one replacing change left is a new logical id, and the name is derived from the same construct path.
  test('changes when the topic gets a new logical id (moved or renamed construct): CloudFormation replaces it', () => {
    const before = synthTopic('EventTopic');
    const after = synthTopic('Events');
    expect(typeof before.name).toBe('string');
    expect(after.name).not.toEqual(before.name);
  });

  test('is the topic named by the key policy, so SNS may use the key for this topic only', () => {
    const { name, sourceArn, stack } = synthTopic('EventTopic');
    expect(sourceArn).toEqual(stack.resolve(stack.formatArn({ service: 'sns', resource: name as string })));
  });
});
