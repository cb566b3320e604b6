/**
 * The guard against production (`--account`) refused only endpoints given as ARNs: an https, http, email, email-json or
 * sms subscription of the flow's topic (no account in its endpoint) was not refused, so the run's real events went to
 * a partner's webhook or a mailing list before anything was said (review r13, R13-4). Now it is refused before any
 * command is sent (exit 3 through the CLI, as every NoDeployedFlowError), naming the subscription and
 * `--allow-endpoint`, unless that flag names its endpoint. A subscription pending confirmation delivers nothing.
 */
import { expect, test } from 'vitest';
import { NoDeployedFlowError } from '../../../simulator/verify/deployed-flow';
import { refuseEndpointsOutsideAws, type TopicSubscription } from '../../../simulator/verify/topic-subscriptions';

const TOPIC = 'arn:aws:sns:eu-west-1:111111111111:Flow';
const webhook: TopicSubscription = { subscriptionArn: `${TOPIC}:aaaa`, protocol: 'https', endpoint: 'https://hooks.partner.example/orders' };
const mail: TopicSubscription = { subscriptionArn: `${TOPIC}:bbbb`, protocol: 'email', endpoint: 'finance@company.example' };
const sms: TopicSubscription = { subscriptionArn: `${TOPIC}:cccc`, protocol: 'sms', endpoint: '+15550100' };
const queue: TopicSubscription = { subscriptionArn: `${TOPIC}:dddd`, protocol: 'sqs', endpoint: 'arn:aws:sqs:eu-west-1:111111111111:Billing' };

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

test.each([webhook, mail, sms])('a $protocol subscription of the topic is refused before sending, naming it and --allow-endpoint', (subscription) => {
  expect(() => refuseEndpointsOutsideAws([queue, subscription], [])).toThrow(NoDeployedFlowError);
  expect(() => refuseEndpointsOutsideAws([queue, subscription], [])).toThrow(
    new RegExp(`${escape(`${subscription.subscriptionArn} (protocol ${subscription.protocol}, endpoint ${subscription.endpoint})`)}.*--allow-endpoint ${escape(subscription.endpoint)}`),
  );
});

test('an endpoint --allow-endpoint names, a queue or function by ARN, or a subscription pending confirmation is not refused here', () => {
  expect(() => refuseEndpointsOutsideAws([queue, webhook, mail], [webhook.endpoint, mail.endpoint])).not.toThrow();
  expect(() => refuseEndpointsOutsideAws([queue, { ...webhook, subscriptionArn: 'PendingConfirmation' }], [])).not.toThrow();
  // one allowed, one not: still refused, naming only the other
  expect(() => refuseEndpointsOutsideAws([webhook, mail], [webhook.endpoint])).toThrow(/finance@company\.example/);
  expect(() => refuseEndpointsOutsideAws([webhook, mail], [webhook.endpoint])).not.toThrow(/hooks\.partner/);
});
