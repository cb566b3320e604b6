/**
 * The subscribers verify cannot see (rv9 V-1): it finds subscribers with CloudFormation, which lists the stacks of the
 * caller's account and Region only, so a subscriber deployed in another account or Region (docs/CROSS-ACCOUNT.md) is
 * not found, and its events would go unchecked while the verdict says OK. The flow's topic lists every subscription,
 * wherever its queue is (SNS ListSubscriptionsByTopic, in the topic's account; the topic's ARN from the flow's
 * `Operator` output): each one whose endpoint is not the queue of a subscriber verify found is a line of the verdict's
 * `unproven` (NOT PROVEN), naming the queue's ARN, its account and Region and what to do; a subscription pending
 * confirmation (SNS delivers nothing through it) or of another protocol than `sqs` (verify checks queues only) is named
 * as such, whatever its endpoint. A refused or failed listing is a line too: verify then cannot say no subscriber is missing.
 * The ordered relays' FIFO topics (the stacks' SNS FIFO topics: an `OrderedRelay` has no `Operator` output) are listed
 * too: an ordered subscriber in another account or Region is named as a flow's subscriber is (review v11, V11-1).
 */
import { paginateListSubscriptionsByTopic } from '@aws-sdk/client-sns';
import type { VerifyClients } from './clients';
import { NoDeployedFlowError, type DeployedFlow } from './deployed-flow';

/** What a found subscriber's queue is known by here. */
interface FoundQueue {
  readonly deployment: { readonly queueUrl: string };
}

/** A subscription of the topic, as SNS lists it. */
export interface TopicSubscription {
  /** `PendingConfirmation` while the endpoint's owner has not confirmed it. */
  readonly subscriptionArn: string;
  readonly owner?: string;
  readonly protocol: string;
  /** For `sqs`, the queue's ARN. */
  readonly endpoint: string;
}

/** Every subscription of `topicArn` (ListSubscriptionsByTopic, every page). */
export async function readTopicSubscriptions(clients: Pick<VerifyClients, 'sns'>, topicArn: string): Promise<TopicSubscription[]> {
  const subscriptions: TopicSubscription[] = [];
  for await (const page of paginateListSubscriptionsByTopic({ client: clients.sns }, { TopicArn: topicArn })) {
    for (const item of page.Subscriptions ?? []) {
      subscriptions.push({ subscriptionArn: item.SubscriptionArn ?? '', ...(item.Owner === undefined ? {} : { owner: item.Owner }), protocol: item.Protocol ?? '', endpoint: item.Endpoint ?? '' });
    }
  }
  return subscriptions;
}

/** A queue as its URL names it: its account and name, and its Region when the host says it (not a served run's URL). */
function queueOfUrl(url: string): { readonly account: string; readonly name: string; readonly region?: string } | undefined {
  const match = /^https?:\/\/([^/]+)\/(\d{12})\/([^/]+)$/.exec(url);
  if (match === null) return undefined;
  // sqs.<region>.amazonaws.com[.cn], <region>.queue.amazonaws.com, vpce-....sqs.<region>.vpce.amazonaws.com
  const region = /(?:^|\.)sqs\.([a-z0-9-]+)\.(?:vpce\.)?amazonaws\.com(?:\.cn)?$/.exec(match[1]!)?.[1] ?? /^([a-z0-9-]+)\.queue\.amazonaws\.com(?:\.cn)?$/.exec(match[1]!)?.[1];
  return { account: match[2]!, name: match[3]!, ...(region === undefined ? {} : { region }) };
}

/** An SQS queue ARN's Region, account and name (`arn:<partition>:sqs:<region>:<account>:<name>`). */
function queueOfArn(arn: string): { readonly region: string; readonly account: string; readonly name: string } | undefined {
  const match = /^arn:[^:]+:sqs:([^:]*):(\d{12}):(.+)$/.exec(arn);
  return match === null ? undefined : { region: match[1]!, account: match[2]!, name: match[3]! };
}

/** Whether the queue `arn` names is `subscriber`'s queue (its account and name; its Region when its URL says it). */
export function isQueueOf(arn: string, subscriber: FoundQueue): boolean {
  const queue = queueOfArn(arn);
  const own = queueOfUrl(subscriber.deployment.queueUrl);
  return queue !== undefined && own !== undefined && queue.account === own.account && queue.name === own.name && (own.region === undefined || own.region === queue.region);
}

/** `queue <arn> (account <id>, Region <region>)` */
function queueNamed(arn: string): string {
  const queue = queueOfArn(arn);
  return queue === undefined ? `queue ${arn}` : `queue ${arn} (account ${queue.account}, Region ${queue.region})`;
}

/** The lines of the verdict's `unproven` for `topicArn`'s `subscriptions` that are not those of the `found` subscribers (see the module comment). */
export function subscriptionGaps(topicArn: string, subscriptions: readonly TopicSubscription[], found: readonly FoundQueue[]): string[] {
  const lines: string[] = [];
  for (const subscription of subscriptions) {
    if (subscription.protocol !== 'sqs') {
      lines.push(
        `topic ${topicArn}'s subscription ${subscription.subscriptionArn} (protocol ${subscription.protocol}, endpoint ${subscription.endpoint}) is not an SQS queue: verify checks subscribers' queues only, so what that endpoint did with the run's events was not checked`,
      );
    } else if (subscription.subscriptionArn === 'PendingConfirmation') {
      lines.push(
        `topic ${topicArn}'s subscription to ${queueNamed(subscription.endpoint)} is pending confirmation: SNS delivers nothing through it until the queue's account confirms it (its stack subscribes the queue itself: docs/CROSS-ACCOUNT.md), so that subscriber got none of the run's events`,
      );
    } else if (!found.some((subscriber) => isQueueOf(subscription.endpoint, subscriber))) {
      const queue = queueOfArn(subscription.endpoint);
      lines.push(
        `topic ${topicArn}'s subscription ${subscription.subscriptionArn} delivers to ${queueNamed(subscription.endpoint)}, the queue of no subscriber verify found in the stacks it could read: its events were not checked; run verify there too (credentials of account ${queue?.account ?? 'the queue\'s'}, --region ${queue?.region ?? 'the queue\'s Region'}, the same scenario), or give verify credentials that can read that account's stacks`,
      );
    }
  }
  return lines;
}

/** An SNS FIFO topic's ARN (`arn:<partition>:sns:<region>:<account>:<name>.fifo`): what CloudFormation reports as a topic's physical id. */
const FIFO_TOPIC_ARN = /^arn:[^:]+:sns:[^:]+:\d{12}:[^:]+\.fifo$/;

/**
 * The topics whose subscriptions verify lists: each flow's topic (its `Operator` output), and every SNS FIFO topic of the
 * stacks (an `OrderedRelay`'s topic: it has no `Operator` output of its own, and its ordered subscribers may be in
 * another account or Region, lib/private/remote-ordered-subscription.ts). A standard topic of the stacks that is no
 * flow's (an alarms topic) is not listed: its subscribers are no subscriber of the flow.
 */
export function listedTopics(flow: Pick<DeployedFlow, 'flows'> & Partial<Pick<DeployedFlow, 'resources'>>): string[] {
  const flowTopics = flow.flows.flatMap((item) => (item.topicArn === undefined ? [] : [item.topicArn]));
  const fifoTopics = (flow.resources ?? []).filter((resource) => resource.type === 'AWS::SNS::Topic' && FIFO_TOPIC_ARN.test(resource.physicalId)).map((resource) => resource.physicalId);
  return [...new Set([...flowTopics, ...fifoTopics])];
}

/** The lines of the verdict's `unproven` for every topic of {@link listedTopics} (a listing that failed is one line, naming why). */
export async function subscriptionsNotSeen(
  clients: Pick<VerifyClients, 'sns'>,
  flow: Pick<DeployedFlow, 'flows' | 'subscribers'> & Partial<Pick<DeployedFlow, 'resources'>>,
  /** Gets every subscription listed (what {@link refuseSubscriptionsElsewhere} checks). */
  listed: TopicSubscription[] = [],
  /** Gets the topics whose subscriptions could not be listed. */
  unlisted: string[] = [],
): Promise<string[]> {
  const lines: string[] = [];
  for (const topicArn of listedTopics(flow)) {
    let subscriptions: TopicSubscription[];
    try {
      subscriptions = await readTopicSubscriptions(clients, topicArn);
    } catch (error) {
      // SNS answered (refused, throttled): said; not reached at all: the run has no verdict (./aws-unreached.ts)
      if (typeof error !== 'object' || error === null || !('$metadata' in error)) throw error;
      const { name, message } = error as unknown as Error;
      unlisted.push(topicArn);
      lines.push(
        `verify could not list the subscriptions of topic ${topicArn} (${name}: ${message}), so a subscriber in another account or Region would not be seen; give verify sns:ListSubscriptionsByTopic on the topic (docs/DEPLOYING.md)`,
      );
      continue;
    }
    listed.push(...subscriptions);
    lines.push(...subscriptionGaps(topicArn, subscriptions, flow.subscribers));
  }
  return lines;
}

/** The account of an endpoint given as an ARN (an SQS queue, a Lambda function), if any. */
function endpointAccount(endpoint: string): string | undefined {
  return /^arn:[^:]+:[^:]+:[^:]*:(\d{12}):/.exec(endpoint)?.[1];
}

/**
 * The guard against production (`--account`) over the topics' subscriptions (review v11, V11-4): throws
 * {@link NoDeployedFlowError} when `allowed` names accounts and a listed subscription delivers to an endpoint (a queue,
 * a function, by ARN) in another account. A subscriber deployed in another account has its `Operator` output there,
 * where verify does not read: only the topic shows it, and the run's events would reach it. Nothing is sent before it.
 */
export function refuseSubscriptionsElsewhere(subscriptions: readonly TopicSubscription[], allowed: readonly string[] | undefined): void {
  if (allowed === undefined || allowed.length === 0) return;
  const elsewhere = subscriptions.filter((subscription) => {
    const account = endpointAccount(subscription.endpoint);
    return account !== undefined && !allowed.includes(account);
  });
  if (elsewhere.length === 0) return;
  throw new NoDeployedFlowError(
    `the flow's topic delivers to ${elsewhere.map((subscription) => `${subscription.endpoint} (account ${endpointAccount(subscription.endpoint)!})`).join(', ')}, not only to ${allowed.join(', ')} (--account): the run's events would reach that subscriber and its effects; verify sends nothing`,
  );
}

/**
 * The guard against production over the endpoints that are no AWS resource (review r13, R13-4): throws
 * {@link NoDeployedFlowError} when a confirmed subscription of the topics delivers to an endpoint with no account in
 * it (an `http`/`https` URL, an `email`/`email-json` address, an `sms` number) that `allowed` (`--allow-endpoint`) does
 * not name: `--account` cannot tell where it is, and the run's real events would reach it (a partner's webhook, a
 * mailing list). A subscription pending confirmation delivers nothing. Nothing is sent before it.
 */
export function refuseEndpointsOutsideAws(subscriptions: readonly TopicSubscription[], allowed: readonly string[]): void {
  const outside = subscriptions.filter(
    (subscription) => subscription.subscriptionArn !== 'PendingConfirmation' && endpointAccount(subscription.endpoint) === undefined && !allowed.includes(subscription.endpoint),
  );
  if (outside.length === 0) return;
  throw new NoDeployedFlowError(
    `the flow's topic delivers to endpoint(s) outside AWS, which --account cannot place: ${outside
      .map((subscription) => `subscription ${subscription.subscriptionArn} (protocol ${subscription.protocol}, endpoint ${subscription.endpoint})`)
      .join(', ')}; the run's real events would reach them; if they are a sandbox's, run again with ${outside.map((subscription) => `--allow-endpoint ${subscription.endpoint}`).join(' ')}; verify sends nothing`,
  );
}
