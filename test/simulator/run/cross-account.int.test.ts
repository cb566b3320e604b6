/**
 * Issue 41: a flow whose subscribers are in other accounts and Regions simulates as one flow
 * (test/simulator/fixtures/cross-account: the flow in 111111111111/eu-west-1, Ledger in 222222222222/eu-west-1,
 * Reports in 111111111111/eu-central-1). Each resource lives in its own stack's environment (its ARN carries it), and
 * IAM decides across accounts as AWS does: the topic policy must let the queue's account subscribe, the queue policy
 * must let SNS send for the topic, the queue key's policy must let SNS use it. Each break is made in a copy of the
 * synthesized assembly (one synthesis for the file) by removing the statement from the template, as
 * test/simulator/run/iam.int.test.ts does for the example.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeAll, describe, expect, inject, test } from 'vitest';
import { IAM_NOT_PROVEN_TEXT } from '../../../simulator/check/iam-not-evaluated';
import { EXIT_CODE, main } from '../../../simulator/cli/main';
import { synthesize } from '../../../simulator/model/synthesize';
import { assemblyVariant, type AssemblyVariant, type StatementJson, type TemplateJson } from '../../support/assembly-variant';

const PROJECT = path.resolve(__dirname, '../../..');
const FIXTURE = 'test/simulator/fixtures/cross-account';

let assembly: string;
let events: string;
const variants: AssemblyVariant[] = [];
afterEach(() => {
  for (const variant of variants.splice(0)) variant.remove();
});

beforeAll(async () => {
  const directory = mkdtempSync(path.join(tmpdir(), 'ief-cross-account-'));
  assembly = await synthesize({ cwd: PROJECT, app: `npx tsx ${FIXTURE}/app.ts`, outputDirectory: path.join(directory, 'cdk.out') });
  events = path.join(directory, 'events.json');
  writeFileSync(events, JSON.stringify(Array.from({ length: 4 }, (_, index) => ({ type: 'com.example.Paid', subject: `p${index}`, data: { index } }))));
});

async function simulate(directory: string, ...extra: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(
    ['simulate', '--assembly', directory, '--scenario', `${FIXTURE}/scenario.ts`, '--events', events, '--no-faults', '--quiet', '--seed', 'cross-account', '--endpoint', inject('dynamoDbEndpoint'), ...extra],
    { stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text), cwd: PROJECT },
  );
  return { code, stdout, stderr };
}

/** A copy of the assembly with `stackName`'s template edited. */
function variant(stackName: string, edit: (template: TemplateJson) => void): AssemblyVariant {
  const made = assemblyVariant(assembly, stackName, edit);
  variants.push(made);
  return made;
}

/** The statements of the policies of `type` (`PolicyDocument`, or `KeyPolicy` for a key) whose construct path contains `pathPart`. */
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

describe('simulate: subscribers in other accounts and Regions', () => {
  test('runs the flow across accounts and Regions with IAM evaluated: every event reaches both subscribers once', async () => {
    const { code, stdout, stderr } = await simulate(assembly);
    expect(code, stdout + stderr).toBe(EXIT_CODE.OK);
    expect(stdout).toMatch(/^Ledger\s+transactional\s+4\s/m);
    expect(stdout).toMatch(/^Reports\s+transactional\s+4\s/m);
    expect(stdout).toMatch(/IAM: \d+ requests evaluated, \d+ authorized, 0 denied/);
    expect(stdout).toContain('OK: every event reached every matching subscriber; each effect applied exactly once');
  });

  test('without the topic grant for the other account, the subscription is refused and the run fails naming the topic policy', async () => {
    // GIVEN the flow's topic policy without the sns:Subscribe statement for Ledger's account
    const broken = variant('Payments', (template) =>
      remove(statementsOf(template, 'AWS::SNS::TopicPolicy', 'Payments/'), (statement) => mentions(statement.Action, 'sns:Subscribe') && mentions(statement.Principal, '222222222222'), "the topic grant for 222222222222"),
    );

    const { code, stdout } = await simulate(broken.directory);

    expect(code).toBe(EXIT_CODE.FAILURE);
    expect(stdout).toMatch(
      /\[access-denied\] the deployment of Ledger \(arn:aws:iam::222222222222:role\/cdk-hnb659fds-cfn-exec-role-222222222222-eu-west-1\) \(Ledger\/Ledger\/[^)]*\) may not sns:Subscribe on Payments\/Payments\/EventTopic[^ ]* \(arn:aws:sns:eu-west-1:111111111111:[^)]+\): the topic policy of Payments\/Payments\/EventTopic[^ ]* has no statement that allows account 222222222222/,
    );
    expect(stdout).toContain("list 222222222222 in the flow's subscriberAccounts");
    // the subscriber in the flow's own account, another Region, is untouched
    expect(stdout).toMatch(/^Reports\s+transactional\s+4\s/m);
  });

  test('without the topic grant and with --iam off, the run is NOT PROVEN (exit code 5), never OK: nothing checked what connects the accounts (NUX15-2)', async () => {
    const broken = variant('Payments', (template) =>
      remove(statementsOf(template, 'AWS::SNS::TopicPolicy', 'Payments/'), (statement) => mentions(statement.Action, 'sns:Subscribe') && mentions(statement.Principal, '222222222222'), "the topic grant for 222222222222"),
    );

    const { code, stdout } = await simulate(broken.directory, '--iam', 'off');

    expect(code, stdout).toBe(EXIT_CODE.NOT_PROVEN);
    expect(stdout).not.toMatch(/^OK/m);
    expect(stdout).toMatch(new RegExp(`^NOT PROVEN: no check failed .*${IAM_NOT_PROVEN_TEXT} 2 accounts \\(111111111111, 222222222222\\)`, 'm'));
  });

  test("without the key statement for SNS in the subscriber's queue key, the deliveries are denied and the run fails naming the key policy", async () => {
    // GIVEN Ledger's queue key without the statement that lets sns.amazonaws.com use it for the topic
    const broken = variant('Ledger', (template) =>
      remove(statementsOf(template, 'AWS::KMS::Key', 'Ledger/'), (statement) => mentions(statement.Principal, 'sns.amazonaws.com'), 'the SNS statement of the queue key'),
    );

    const { code, stdout } = await simulate(broken.directory);

    expect(code).toBe(EXIT_CODE.FAILURE);
    expect(stdout).toMatch(
      /\[access-denied\] sns\.amazonaws\.com \(Payments\/Payments\/EventTopic[^)]*\) may not kms:GenerateDataKey on Ledger\/Ledger\/[^ ]*Key[^ ]* \(arn:aws:kms:eu-west-1:222222222222:key\/[0-9a-f-]+\): the key policy of Ledger\/[^ ]+ does not allow sns\.amazonaws\.com to kms:GenerateDataKey for Payments\/Payments\/EventTopic/,
    );
  });

  test("without the queue policy's statement for the topic, SNS may not send to the other account's queue", async () => {
    const broken = variant('Ledger', (template) =>
      remove(statementsOf(template, 'AWS::SQS::QueuePolicy', 'Ledger/Ledger/Queue/Resource/Policy'), (statement) => mentions(statement.Principal, 'sns.amazonaws.com') && mentions(statement.Action, 'sqs:SendMessage'), 'the SNS statement of the queue policy'),
    );

    const { code, stdout } = await simulate(broken.directory);

    expect(code).toBe(EXIT_CODE.FAILURE);
    expect(stdout).toMatch(/\[access-denied\] sns\.amazonaws\.com \(Payments\/Payments\/EventTopic[^)]*\) may not sqs:SendMessage on Ledger\/Ledger\/[^ ]+ \(arn:aws:sqs:eu-west-1:222222222222:[^)]+\): the resource policy of Ledger\/[^ ]+ does not allow sns\.amazonaws\.com/);
  });
});
