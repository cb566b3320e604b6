/**
 * Issue 41, the ordered path: an app whose OrderedSubscriber is in another account (or another Region of the flow's
 * account) than its OrderedRelay simulates as one flow (test/simulator/fixtures/ordered, context `crossEnvironment`:
 * the relay in 111111111111/eu-west-1, Shipping in 222222222222/eu-west-1 or 111111111111/eu-central-1), with IAM
 * evaluated across accounts as on the standard path (cross-account.int.test.ts): the FIFO topic's policy must let the
 * subscriber's account subscribe its queue, and the key of the subscriber's FIFO queue must let SNS use it for the
 * topic. Each break is made in a copy of the synthesized assembly by removing the statement from the template.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { EXIT_CODE } from '../../../simulator/cli/main';
import { assemblyVariant, type AssemblyVariant, type StatementJson, type TemplateJson } from '../../support/assembly-variant';
import { simulateOrdered, synthesizeOrdered, type OrderedAssemblies } from './ordered-fixture';

let synthesized: OrderedAssemblies | undefined;
let crossAccount: string;
let crossRegion: string;
const variants: AssemblyVariant[] = [];

beforeAll(async () => {
  synthesized = await synthesizeOrdered([{ crossEnvironment: 'account' }, { crossEnvironment: 'region' }]);
  [crossAccount, crossRegion] = synthesized.assemblies as [string, string];
});

afterEach(() => {
  for (const variant of variants.splice(0)) variant.remove();
});

afterAll(() => synthesized?.remove());

/** A copy of `assembly` with `stackName`'s template edited. */
function variant(assembly: string, stackName: string, edit: (template: TemplateJson) => void): string {
  const made = assemblyVariant(assembly, stackName, edit);
  variants.push(made);
  return made.directory;
}

/** The statements of the policy of `type` (`PolicyDocument`, or `KeyPolicy` for a key) whose construct path contains `pathPart`. */
function statementsOf(template: TemplateJson, type: string, pathPart: string): StatementJson[] {
  const found = Object.values(template.Resources).filter((resource) => resource.Type === type && String(resource.Metadata?.['aws:cdk:path'] ?? '').includes(pathPart));
  if (found.length !== 1) throw new Error(`expected one ${type} at a path with ${pathPart}, found ${found.length}`);
  const properties = found[0]!.Properties!;
  return ((properties.PolicyDocument ?? properties.KeyPolicy) as { Statement: StatementJson[] }).Statement;
}

/** Removes the statements `matches` selects (at least one), in place. */
function remove(statements: StatementJson[], matches: (statement: StatementJson) => boolean, what: string): void {
  const before = statements.length;
  for (let index = statements.length - 1; index >= 0; index -= 1) if (matches(statements[index]!)) statements.splice(index, 1);
  if (statements.length === before) throw new Error(`no statement of ${what} to remove`);
}

const mentions = (value: unknown, text: string): boolean => JSON.stringify(value ?? null).includes(text);

const simulate = (assembly: string) => simulateOrdered(assembly, '--count', '6', '--seed', 'ordered-cross-account', '--no-faults');

describe('simulate: an ordered subscriber in another account or Region', () => {
  test('in another account: every event reaches Shipping once and in its aggregate order, IAM evaluated', async () => {
    const { code, stdout } = await simulate(crossAccount);
    expect(stdout).toMatch(/^Shipping\s+ordered\s+6\s/m);
    expect(stdout).toContain('  Shipping: 6 event(s) of 3 aggregate(s) checked\n');
    expect(stdout).toMatch(/IAM: \d+ requests evaluated, \d+ authorized, 0 denied/);
    expect(code, stdout).toBe(EXIT_CODE.OK);
  });

  test('in another Region of the flow’s account: every event reaches Shipping once and in order', async () => {
    const { code, stdout } = await simulate(crossRegion);
    expect(stdout).toMatch(/^Shipping\s+ordered\s+6\s/m);
    expect(code, stdout).toBe(EXIT_CODE.OK);
  });

  test('without the FIFO topic’s grant for the other account, the subscription is refused and the run fails naming the topic policy', async () => {
    const broken = variant(crossAccount, 'Ordered', (template) =>
      remove(statementsOf(template, 'AWS::SNS::TopicPolicy', 'Ordered/OrderedRelay/'), (statement) => mentions(statement.Action, 'sns:Subscribe') && mentions(statement.Principal, '222222222222'), 'the ordered topic grant for 222222222222'),
    );

    const { code, stdout } = await simulate(broken);

    expect(code).toBe(EXIT_CODE.FAILURE);
    expect(stdout).toMatch(
      /\[access-denied\] the deployment of OrderedSubscribers \(arn:aws:iam::222222222222:role\/cdk-hnb659fds-cfn-exec-role-222222222222-eu-west-1\) \([^)]*\) may not sns:Subscribe on Ordered\/OrderedRelay\/[^ ]*Topic[^ ]* \(arn:aws:sns:eu-west-1:111111111111:[^)]+\.fifo\): the topic policy of Ordered\/OrderedRelay\/[^ ]*Topic[^ ]* has no statement that allows account 222222222222/,
    );
  });

  test('without the statement for SNS in the key of the subscriber’s FIFO queue, the deliveries are denied and the run fails naming the key policy', async () => {
    const broken = variant(crossAccount, 'OrderedSubscribers', (template) =>
      remove(statementsOf(template, 'AWS::KMS::Key', 'OrderedSubscribers/Shipping/'), (statement) => mentions(statement.Principal, 'sns.amazonaws.com'), 'the SNS statement of the FIFO queue key'),
    );

    const { code, stdout } = await simulate(broken);

    expect(code).toBe(EXIT_CODE.FAILURE);
    expect(stdout).toMatch(
      /\[access-denied\] sns\.amazonaws\.com \(Ordered\/OrderedRelay\/[^)]*Topic[^)]*\) may not kms:GenerateDataKey on OrderedSubscribers\/Shipping\/[^ ]*Key[^ ]* \(arn:aws:kms:eu-west-1:222222222222:key\/[0-9a-f-]+\): the key policy of OrderedSubscribers\/[^ ]+ does not allow sns\.amazonaws\.com to kms:GenerateDataKey for Ordered\/OrderedRelay\//,
    );
  });
});
