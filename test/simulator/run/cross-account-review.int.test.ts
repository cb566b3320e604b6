/**
 * Review r41 of issue 41 (branch s6-r41): the simulator's OK across accounts and Regions must mean what AWS would do.
 * Each test below is a finding written as a failing test: a template the simulator runs to `OK` that AWS would not
 * deploy or would not deliver through. Same fixture and template-editing approach as cross-account.int.test.ts
 * (test/simulator/fixtures/cross-account: the flow in 111111111111/eu-west-1, Ledger in 222222222222/eu-west-1,
 * Reports in 111111111111/eu-central-1), one synthesis for the file.
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeAll, describe, expect, inject, test } from 'vitest';
import { EXIT_CODE, main } from '../../../simulator/cli/main';
import { synthesize } from '../../../simulator/model/synthesize';
import type { TemplateJson, TemplateResourceJson } from '../../support/assembly-variant';

const PROJECT = path.resolve(__dirname, '../../..');
const FIXTURE = 'test/simulator/fixtures/cross-account';

let assembly: string;
let events: string;
const copies: string[] = [];
afterEach(() => {
  for (const directory of copies.splice(0)) rmSync(directory, { recursive: true, force: true });
});

beforeAll(async () => {
  const directory = mkdtempSync(path.join(tmpdir(), 'ief-cross-account-r41-'));
  assembly = await synthesize({ cwd: PROJECT, app: `npx tsx ${FIXTURE}/app.ts`, outputDirectory: path.join(directory, 'cdk.out') });
  events = path.join(directory, 'events.json');
  writeFileSync(events, JSON.stringify(Array.from({ length: 4 }, (_, index) => ({ type: 'com.example.Paid', subject: `p${index}`, data: { index } }))));
}, 600_000);

async function simulate(directory: string): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(
    ['simulate', '--assembly', directory, '--scenario', `${FIXTURE}/scenario.ts`, '--events', events, '--no-faults', '--quiet', '--seed', 'cross-account-r41', '--endpoint', inject('dynamoDbEndpoint')],
    { stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text), cwd: PROJECT },
  );
  return { code, stdout, stderr };
}

/** A copy of the assembly; `edit` gets the templates by stack name (written back after) and the copy's directory. */
function copyOf(edit: (templates: Record<string, TemplateJson>, directory: string) => void): string {
  const directory = mkdtempSync(path.join(tmpdir(), 'ief-r41-variant-'));
  copies.push(directory);
  cpSync(assembly, directory, { recursive: true });
  const templates: Record<string, TemplateJson> = {};
  for (const stack of ['Payments', 'Ledger', 'Reports']) templates[stack] = JSON.parse(readFileSync(path.join(directory, `${stack}.template.json`), 'utf8')) as TemplateJson;
  edit(templates, directory);
  for (const [stack, template] of Object.entries(templates)) writeFileSync(path.join(directory, `${stack}.template.json`), JSON.stringify(template, undefined, 1));
  return directory;
}

/** The one resource of `type` whose construct path contains `pathPart`, with its logical id. */
function only(template: TemplateJson, type: string, pathPart: string): [string, TemplateResourceJson] {
  const found = Object.entries(template.Resources).filter(([, resource]) => resource.Type === type && String(resource.Metadata?.['aws:cdk:path'] ?? '').includes(pathPart));
  if (found.length !== 1) throw new Error(`expected one ${type} at a path with ${pathPart}, found ${found.length}`);
  return found[0]!;
}

describe('review r41: the simulator across accounts and Regions', () => {
  /**
   * HIGH (false OK, cross-Region). An `AWS::SNS::Subscription` is created by CloudFormation in its stack's Region
   * unless its `Region` property names the topic's: "The Amazon SNS subscription command must be executed in the Region
   * where Amazon SNS is hosted" (SNS developer guide, "Sending Amazon SNS messages to an Amazon SQS queue or AWS Lambda
   * function in a different Region", docs.aws.amazon.com/sns/latest/dg/sns-cross-region-delivery.html); CloudFormation's
   * `Region` property: "For cross-region subscriptions, the region in which the topic resides; if no region is
   * specified, CloudFormation uses the region of the caller". Terraform/Pulumi's TopicSubscription notes restate it: a
   * subscription made in another Region than the topic "will fail to create". The simulator never reads `Region`
   * (simulator/model/resources/subscription.ts): Reports' subscription (stack in eu-central-1, topic in eu-west-1)
   * without it still delivers every event and the run ends OK.
   */
  test('R41-1: a cross-Region subscription without Region (created in the queue\'s Region) fails the run, naming Region', async () => {
    const directory = copyOf((templates) => {
      const [, subscription] = only(templates.Reports!, 'AWS::SNS::Subscription', 'Reports/Reports/');
      expect(subscription.Properties!.Region).toBe('eu-west-1');
      delete subscription.Properties!.Region;
    });

    const { code, stdout } = await simulate(directory);

    expect(code, stdout).not.toBe(EXIT_CODE.OK);
    expect(stdout).toMatch(/Region/);
    expect(stdout).toMatch(/Reports\/Reports\/Subscription/);
  }, 600_000);

  /**
   * HIGH (false OK, cross-account). A subscription of another account's queue created by the topic's owner (the
   * subscription resource in the flow's stack, deployed by account 111111111111) is pending confirmation: SNS sends a
   * SubscriptionConfirmation message to the queue and delivers nothing until the queue's owner confirms it; only a
   * subscription created by the queue's owner needs none (SNS developer guide, "Sending Amazon SNS messages to an
   * Amazon SQS queue in a different account"; /work/shared/AWS-FACTS.md section 7; issue 41 "What AWS needs").
   * AccessControl.authorizeSubscribe (simulator/iam/access-control.ts) returns undefined, "nothing asked", whenever the
   * subscription's account is the topic's, and build-flow.ts then delivers to the other account's queue as if
   * confirmed (test/simulator/iam/cross-account-access.test.ts even pins "a subscription in the topic's account asks
   * nothing"). Here Ledger's subscription is moved into the flow's stack: the simulator still reports 4/4 for Ledger.
   */
  test("R41-2: a subscription of another account's queue created in the topic owner's stack is pending confirmation: the run does not end OK", async () => {
    const directory = copyOf((templates) => {
      const [ledgerId, ledgerSubscription] = only(templates.Ledger!, 'AWS::SNS::Subscription', 'Ledger/Ledger/');
      const [, queue] = only(templates.Ledger!, 'AWS::SQS::Queue', 'Ledger/Ledger/Queue/Resource/Resource');
      const [topicId] = only(templates.Payments!, 'AWS::SNS::Topic', 'Payments/Payments/EventTopic');
      delete templates.Ledger!.Resources[ledgerId];
      templates.Payments!.Resources.LedgerSubscriptionByTopicOwner = {
        Type: 'AWS::SNS::Subscription',
        Properties: {
          Protocol: 'sqs',
          RawMessageDelivery: true,
          TopicArn: { Ref: topicId },
          Endpoint: `arn:aws:sqs:eu-west-1:222222222222:${String(queue.Properties!.QueueName)}`,
        },
        Metadata: { 'aws:cdk:path': 'Payments/LedgerSubscriptionByTopicOwner/Resource' },
      };
      expect(ledgerSubscription.Properties!.Protocol).toBe('sqs');
    });

    const { code, stdout } = await simulate(directory);

    expect(code, stdout).not.toBe(EXIT_CODE.OK);
    expect(stdout).toMatch(/confirm/i);
  }, 600_000);

  /**
   * HIGH (false OK, cross-Region, opt-in Regions). "When one of the Regions is an opt-in Region, you must specify a
   * different Amazon SNS service principal in the subscribed resource's policy": from an opt-in Region to a Region
   * enabled by default, the queue policy's principal `sns.amazonaws.com` must be `sns.<opt-in-region>.amazonaws.com`
   * (same SNS developer guide page; its example: a queue in us-east-1 subscribed to a topic in ap-east-1 needs
   * `sns.ap-east-1.amazonaws.com`). aws-cdk issue #32526 / PR #38339: with the global principal "messages are silently
   * dropped". The simulator always delivers as `sns.amazonaws.com` (simulator/iam/flow-requests.ts `deliver`), and the
   * constructs write `sns.amazonaws.com` (lib/consumer/private/subscription.ts): with the flow in eu-south-1 (Milan,
   * opt-in) and Reports in eu-central-1 (enabled by default) the run ends OK though AWS delivers nothing to Reports.
   */
  test('R41-3: a topic in an opt-in Region delivering to a queue whose policy names only sns.amazonaws.com is refused, naming the regional principal', async () => {
    // the same app with the flow (and Ledger) in eu-south-1, an opt-in Region; Reports stays in eu-central-1
    const directory = copyOf((templates, copy) => {
      for (const [stack, template] of Object.entries(templates)) templates[stack] = JSON.parse(JSON.stringify(template).replaceAll('eu-west-1', 'eu-south-1')) as TemplateJson;
      for (const file of readdirSync(copy).filter((name) => name === 'manifest.json')) {
        const text = readFileSync(path.join(copy, file), 'utf8');
        const moved = text.replaceAll('aws://111111111111/eu-west-1', 'aws://111111111111/eu-south-1').replaceAll('aws://222222222222/eu-west-1', 'aws://222222222222/eu-south-1');
        expect(moved).not.toBe(text);
        writeFileSync(path.join(copy, file), moved);
      }
      const [, reportsSubscription] = only(templates.Reports!, 'AWS::SNS::Subscription', 'Reports/Reports/');
      expect(reportsSubscription.Properties!.Region).toBe('eu-south-1');
    });

    const { code, stdout } = await simulate(directory);

    expect(code, stdout).not.toBe(EXIT_CODE.OK);
    expect(stdout).toContain('sns.eu-south-1.amazonaws.com');
  }, 600_000);

  /**
   * MEDIUM (false OK, cross-Region). "The Amazon SNS subscription and Amazon SQS queue [its dead-letter queue] must be
   * under the same AWS account and Region" (SNS developer guide, "Amazon SNS dead-letter queues",
   * docs.aws.amazon.com/sns/latest/dg/sns-dead-letter-queues.html). The constructs leave a cross-Region subscription
   * without one for that reason, but the simulator accepts a RedrivePolicy naming a queue of the subscriber's Region
   * for a subscription created in the topic's Region, and would move undeliverable messages there.
   */
  test("R41-4: a cross-Region subscription whose dead-letter queue is in the queue's Region (not the subscription's) is refused, naming the dead-letter queue", async () => {
    const directory = copyOf((templates) => {
      const [, subscription] = only(templates.Reports!, 'AWS::SNS::Subscription', 'Reports/Reports/');
      const [deadLetterId] = only(templates.Reports!, 'AWS::SQS::Queue', 'Reports/Reports/Queue/DeadLetterQueue');
      subscription.Properties!.RedrivePolicy = { deadLetterTargetArn: { 'Fn::GetAtt': [deadLetterId, 'Arn'] } };
    });

    const { code, stdout } = await simulate(directory);

    expect(code, stdout).not.toBe(EXIT_CODE.OK);
    expect(stdout).toMatch(/dead-letter/i);
    expect(stdout).toContain('eu-central-1');
  }, 600_000);
});
