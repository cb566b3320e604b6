/**
 * What `flow.grantOperator` lets the operator's served calls do on the outbox, as the simulator's IAM evaluates them
 * (a served run's STS session of the `CrossAccountOperator<account>` role: its DynamoDB requests go through a proxy
 * that authorizes each under the role, simulator/run/served-sessions.ts): `replay` and `fence replay` read items
 * (GetItem, Scan), the table's TTL (DescribeTimeToLive), and, when the TTL is off and nothing names its attribute,
 * whether the table was restored (DescribeTable's RestoreSummary: operator/cli/outbox-ttl-attribute.ts). Each is
 * allowed on the outbox's ARN only; nothing that writes, and nothing on another table.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Annotations, App, Stack } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { IdempotentEventFlow } from '../../../lib';
import { FlowAccess } from '../../../simulator/iam/flow-access';
import { LocalResourceNames, registerStaticNames } from '../../../simulator/model/local-names';
import { readAssembly } from '../../../simulator/model/read-assembly';
import { engine, REGION } from './iam-test-kit';

const directory = mkdtempSync(path.join(tmpdir(), 'ief-operator-outbox-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

let check: (operation: string, tableName: string) => Promise<string | undefined>;
let outbox: string;
let orders: string;

beforeAll(() => {
  const app = new App({ outdir: directory, builtinCloudFormationValidation: false, context: { 'aws:cdk:enable-path-metadata': true, 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Payments', { env: { account: '111111111111', region: 'eu-west-1' } });
  const flow = new IdempotentEventFlow(stack, 'Flow', { eventSource: 'urn:test:payments' });
  Annotations.of(flow).acknowledgeWarning('idempotent-event-flow:noAlarmActions', 'A test app.');
  new dynamodb.TableV2(stack, 'Orders', { partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING } });
  flow.grantOperator(new iam.ArnPrincipal('arn:aws:iam::222222222222:role/ledger-oncall'));
  app.synth();
  const model = readAssembly(directory);
  const access = model.access!;
  // every table as the run creates it, named by its logical id
  const tables = new Map(
    Object.values(access.resources)
      .filter(({ type }) => type === 'AWS::DynamoDB::Table' || type === 'AWS::DynamoDB::GlobalTable')
      .map(({ key, logicalId }) => [key, { tableName: logicalId }] as const),
  );
  outbox = [...tables.values()].find(({ tableName }) => tableName.startsWith('FlowOutboxTable'))!.tableName;
  orders = [...tables.values()].find(({ tableName }) => tableName.startsWith('Orders'))!.tableName;
  const names = new LocalResourceNames(REGION, model.environments);
  registerStaticNames(model, names);
  const flowAccess = new FlowAccess(access, names, tables, engine);
  const role = access.roles.find(({ key }) => key.includes('CrossAccountOperator222222222222'))!;
  const roleCheck = flowAccess.dynamoDbCheck(role.key);
  check = (operation, tableName) => roleCheck({ operation, body: Buffer.from(JSON.stringify({ TableName: tableName, ...(operation === 'GetItem' ? { Key: { pk: { S: 'x' }, sk: { S: 'y' } } } : {}) })) });
});

describe("the cross-account operator role's served calls on the outbox", () => {
  test('the tables are in the model', () => {
    expect(outbox).toBeDefined();
    expect(orders).toBeDefined();
  });

  test('GetItem, Scan, DescribeTimeToLive and DescribeTable (whether a TTL-off outbox was restored) are allowed on the outbox', async () => {
    for (const operation of ['GetItem', 'Scan', 'DescribeTimeToLive', 'DescribeTable']) expect({ operation, denied: await check(operation, outbox) }).toEqual({ operation, denied: undefined });
  });

  test('nothing that writes, nor a TTL change, on the outbox; not even DescribeTable on another table', async () => {
    expect(await check('PutItem', outbox)).toMatch(/not authorized to perform: dynamodb:PutItem/);
    expect(await check('UpdateTimeToLive', outbox)).toMatch(/not authorized to perform: dynamodb:UpdateTimeToLive/);
    expect(await check('DescribeTable', orders)).toMatch(/not authorized to perform: dynamodb:DescribeTable/);
  });
});
