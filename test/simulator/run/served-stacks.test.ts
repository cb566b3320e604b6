/**
 * What a served run's CloudFormation reports of its stacks (simulator/run/served-stacks.ts), from a hand-written cloud
 * assembly: the stack id carries the stack's own account and Region (issue 43, nu43 finding 2: an app pinned to
 * 111111111111 was served as 000000000000, so `verify --account <app account>` was refused), and every output the
 * template declares is served, also one naming a resource the run does not create (nu43 finding 3: the flow's
 * `Operator` output names the relay pipe, and was left out, so verify never watched the relay's dead-letter queue).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { LocalResourceNames } from '../../../simulator/model/local-names';
import { servedStacks } from '../../../simulator/run/served-stacks';

const directory = mkdtempSync(path.join(tmpdir(), 'served-stacks-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const TEMPLATE = {
  Resources: {
    OutboxTable: { Type: 'AWS::DynamoDB::Table' },
    RelayPipe: { Type: 'AWS::Pipes::Pipe' },
    RelayDlq: { Type: 'AWS::SQS::Queue' },
    CrossAccountOperatorRole: { Type: 'AWS::IAM::Role' },
  },
  Outputs: {
    OrdersOperator2D745A48: {
      Description: 'What operators of flow Shop/Orders need',
      Value: { 'Fn::Join': ['', ['{"outboxTable":"', { Ref: 'OutboxTable' }, '","relayPipeName":"', { Ref: 'RelayPipe' }, '","relayDeadLetterQueueUrl":"', { Ref: 'RelayDlq' }, '"}']] },
    },
    PipeArn: { Value: { 'Fn::GetAtt': ['RelayPipe', 'Arn'] } },
    OperatorRoleArn: { Value: { 'Fn::GetAtt': ['CrossAccountOperatorRole', 'Arn'] } },
  },
};

function assembly(environment: string): string {
  const dir = mkdtempSync(path.join(directory, 'assembly-'));
  writeFileSync(path.join(dir, 'Shop.template.json'), JSON.stringify(TEMPLATE));
  writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify({ version: '36.0.0', artifacts: { Shop: { type: 'aws:cloudformation:stack', environment, properties: { templateFile: 'Shop.template.json' } } } }));
  return dir;
}

function names(environments?: ReadonlyMap<string, { account: string; region: string }>): LocalResourceNames {
  const local = new LocalResourceNames('us-east-1', environments);
  local.register('Shop/OutboxTable', { ref: 'Shop-OutboxTable', attributes: {} });
  local.register('Shop/RelayDlq', { ref: 'http://127.0.0.1:4566/111111111111/Shop-RelayDlq', attributes: {} });
  return local;
}

describe('served stacks', () => {
  test("a stack pinned to an account and Region is served with its own account and Region in its stack id", () => {
    const [stack] = servedStacks({ assemblyDirectory: assembly('aws://111111111111/eu-west-1'), stackNames: ['Shop'] }, names(new Map([['Shop', { account: '111111111111', region: 'eu-west-1' }]])), new Date(0));
    expect(stack!.stackId).toMatch(/^arn:aws:cloudformation:eu-west-1:111111111111:stack\/Shop\//);
  });

  test('an environment-agnostic stack is served in the local account and the run Region', () => {
    const [stack] = servedStacks({ assemblyDirectory: assembly('aws://unknown-account/unknown-region'), stackNames: ['Shop'] }, names(), new Date(0));
    expect(stack!.stackId).toMatch(/^arn:aws:cloudformation:us-east-1:000000000000:stack\/Shop\//);
  });

  test("every output the template declares is served, also one naming a resource the run does not create (the flow's Operator output names the relay pipe)", () => {
    const [stack] = servedStacks({ assemblyDirectory: assembly('aws://111111111111/us-east-1'), stackNames: ['Shop'] }, names(new Map([['Shop', { account: '111111111111', region: 'us-east-1' }]])), new Date(0));
    expect(stack!.outputs.map((output) => output.key).sort()).toEqual(['OperatorRoleArn', 'OrdersOperator2D745A48', 'PipeArn']);
    const operator = JSON.parse(stack!.outputs.find((output) => output.key === 'OrdersOperator2D745A48')!.value) as Record<string, string>;
    // the pipe's name is its physical id as the stack's resources report it
    const pipe = stack!.resources.find((resource) => resource.logicalId === 'RelayPipe')!;
    expect(operator).toEqual({ outboxTable: 'Shop-OutboxTable', relayPipeName: pipe.physicalId, relayDeadLetterQueueUrl: 'http://127.0.0.1:4566/111111111111/Shop-RelayDlq' });
    expect(stack!.outputs.find((output) => output.key === 'PipeArn')!.value).toBe(`arn:aws:pipes:us-east-1:111111111111:pipe/${pipe.physicalId}`);
  });

  test("an IAM role's ARN output has no Region, as IAM's ARNs (the CrossAccountOperator role's RoleArn, which a profile's role_arn takes; NUX14-3)", () => {
    const [stack] = servedStacks({ assemblyDirectory: assembly('aws://111111111111/eu-west-1'), stackNames: ['Shop'] }, names(new Map([['Shop', { account: '111111111111', region: 'eu-west-1' }]])), new Date(0));
    const role = stack!.resources.find((resource) => resource.logicalId === 'CrossAccountOperatorRole')!;
    expect(stack!.outputs.find((output) => output.key === 'OperatorRoleArn')!.value).toBe(`arn:aws:iam::111111111111:role/${role.physicalId}`);
  });
});
