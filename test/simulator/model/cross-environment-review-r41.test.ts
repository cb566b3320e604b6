/**
 * Review r41 of issue 41 (branch s6-r41): reading an app whose stacks span accounts, a finding written as a failing test.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { readAssembly } from '../../../simulator/model/read-assembly';
import { writeAssembly } from './assembly-fixture';

const created: string[] = [];
afterEach(() => {
  for (const directory of created.splice(0)) fs.rmSync(directory, { recursive: true, force: true });
});

/**
 * LOW (a false refusal). A CloudFormation stack name is unique only within an account and Region ("The name must be
 * unique in the Region in which you are creating the stack", CloudFormation API reference, CreateStack, StackName),
 * and CDK synthesizes an app with two stacks of one `stackName` in two environments (checked: aws-cdk-lib, artifact
 * ids LedgerTeamA and LedgerTeamB, both stack name Ledger, in 222222222222 and 333333333333). That is how a subscriber
 * stack owned by two teams' accounts looks. The simulator refuses it (read-assembly.ts selectStacks: "the app has two
 * stacks named Ledger ... select one of them with --stack"), and its environments, resource keys (`<stack>/<logical
 * id>`) and local table names (`<stack>-<logical id>`) are all by stack name, so selecting one drops a subscriber.
 */
test('R41-8: two stacks of one stack name in two accounts are read, each in its own environment', () => {
  const root = writeAssembly({
    Payments: { template: { Resources: {} } },
    LedgerTeamA: { template: { Resources: {} }, stackName: 'Ledger' },
    LedgerTeamB: { template: { Resources: {} }, stackName: 'Ledger' },
  });
  created.push(root);
  const file = path.join(root, 'manifest.json');
  const manifest = JSON.parse(fs.readFileSync(file, 'utf8')) as { artifacts: Record<string, Record<string, unknown>> };
  manifest.artifacts.Payments!.environment = 'aws://111111111111/eu-west-1';
  manifest.artifacts.LedgerTeamA!.environment = 'aws://222222222222/eu-west-1';
  manifest.artifacts.LedgerTeamB!.environment = 'aws://333333333333/eu-west-1';
  fs.writeFileSync(file, JSON.stringify(manifest));

  const model = readAssembly(root);

  expect(model.stackNames).toHaveLength(3);
  const accounts = [...(model.environments?.values() ?? [])].map((environment) => environment.account).sort();
  expect(accounts).toEqual(['111111111111', '222222222222', '333333333333']);
  // the model names the two by their artifact ids; one of them alone keeps its stack name
  expect(model.stackNames).toEqual(['Payments', 'LedgerTeamA', 'LedgerTeamB']);
  expect(readAssembly(root, { stacks: ['Payments', 'LedgerTeamB'] }).stackNames).toEqual(['Payments', 'Ledger']);
  // --stack by the shared stack name cannot tell them apart: it says how to select
  expect(() => readAssembly(root, { stacks: ['Ledger'] })).toThrow(
    '2 stacks of the app are named Ledger (LedgerTeamA in aws://222222222222/eu-west-1, LedgerTeamB in aws://333333333333/eu-west-1); select each by its artifact id or construct path with the stacks option (--stack)',
  );
});
