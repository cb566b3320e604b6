/**
 * docs/DEPLOYING.md (issue 43) states the `verify` command as it is: every option it names is one of the command's,
 * every option of the command is named, and the rules it lists are the ones verify runs.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, test } from 'vitest';
import { verifyCommand } from '../../simulator/cli/verify-command';
import { VERIFY_RULES } from '../../simulator/verify/verify-checks';
import { GetSubscriptionAttributesCommand, SNSClient } from '@aws-sdk/client-sns';
import { startSnsEndpoint } from '../../simulator/aws/sns-endpoint';
import { SimulatedTopic } from '../../simulator/aws/topic';
import { FaultPlan, NO_FAULTS } from '../../simulator/faults/fault-plan';
import { frozenClock } from '../simulator/aws/queue-test-kit';

const DEPLOYING = fs.readFileSync(path.resolve(__dirname, '..', '..', 'docs', 'DEPLOYING.md'), 'utf8');
const VERIFY_SECTION = DEPLOYING.slice(DEPLOYING.indexOf('## 3. Verify'), DEPLOYING.indexOf('## 4. '));

describe('docs/DEPLOYING.md, "3. Verify"', () => {
  test("names verify's options, and only those", () => {
    const named = new Set([...VERIFY_SECTION.matchAll(/`[^`]*?(--[a-z-]+)/g)].map((match) => match[1]!).concat([...VERIFY_SECTION.matchAll(/\[(--[a-z-]+)/g)].map((match) => match[1]!)));
    const options = Object.keys(verifyCommand.options).map((name) => `--${name}`);
    // --region is the CLI's common option (every command's)
    expect([...named].filter((option) => !options.includes(option) && option !== '--region')).toEqual([]);
    expect(options.filter((option) => !VERIFY_SECTION.includes(option))).toEqual([]);
  });

  test('lists the rules verify runs, by name', () => {
    for (const rule of VERIFY_RULES) expect(VERIFY_SECTION).toContain(`\`${rule}\``);
  });
});

describe('docs/DEPLOYING.md, the permissions verify needs (review r12b, R12B-3)', () => {
  test('grants sns:GetSubscriptionAttributes on the topic ARN, the resource IAM authorizes a subscription read on (as the served SNS does)', async () => {
    // GIVEN the served SNS endpoint over one topic with one subscription, recording the resource it authorizes on
    const topicArn = 'arn:aws:sns:us-east-1:111111111111:Events';
    const topic = new SimulatedTopic({
      model: { key: 'App/Topic', stackName: 'App', logicalId: 'Topic', fifo: false, maximumMessageSize: 262_144 },
      arn: topicArn,
      subscriptions: [],
      listed: [{ subscriptionArn: `${topicArn}:0a1b2c3d-0000-4000-8000-000000000000`, owner: '111111111111', protocol: 'sqs', endpoint: 'arn:aws:sqs:us-east-1:111111111111:Queue' }],
      faults: new FaultPlan('s', NO_FAULTS),
      clock: frozenClock(),
      matches: () => true,
    });
    const authorizedOn: string[] = [];
    const sns = await startSnsEndpoint({ resolveTopic: (arn) => (arn === topicArn ? topic : undefined), authorize: async ({ action, topic: on }) => void authorizedOn.push(`${action} ${on.arn}`) });
    const client = new SNSClient({ endpoint: sns.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'verify', secretAccessKey: 's' }, maxAttempts: 1 });
    try {
      // WHEN verify's read of the subscription is sent
      await client.send(new GetSubscriptionAttributesCommand({ SubscriptionArn: `${topicArn}:0a1b2c3d-0000-4000-8000-000000000000` }));
    } finally {
      client.destroy();
      await sns.stop();
    }
    // THEN the documented grant's resource is that topic's ARN (before: the subscriptions' `<topic>:*`, which IAM never evaluates)
    const row = DEPLOYING.split('\n').find((line) => line.startsWith('| SNS | `sns:GetSubscriptionAttributes`'))!;
    const granted = /`(arn:aws:sns:[^`]*)`/.exec(row.split('|')[3]!)![1]!;
    expect(granted.replace('<region>', 'us-east-1').replace('<account>', '111111111111').replace('<topic>', 'Events')).toBe(topicArn);
    expect(authorizedOn).toEqual([`GetSubscriptionAttributes ${topicArn}`]);
  });
});
