/**
 * The filters that decide which of the run's events SNS delivers to each subscriber (review v11, V11-6): read from the
 * deployed subscriptions (SNS GetSubscriptionAttributes on each subscription of the flow's topics whose endpoint is the
 * subscriber's queue, ./topic-subscriptions.ts lists them), not from the subscriber's `Operator` output, which says
 * what the stack deployed and not what someone set since (the console, another stack, drift). The run's events are
 * then matched with the deployed `FilterPolicy` and `FilterPolicyScope` (../patterns/filter-policy.ts, as the
 * simulator matches them); a deployed filter that differs from the Operator output's is a {@link FilterDifference}
 * the report names. A subscriber whose subscription's attributes verify could not read (refused, failed, a policy it
 * cannot evaluate), or whose queue no listed subscription delivers to, keeps its Operator output's filter and is a
 * line of the verdict's `unproven` (NOT PROVEN): which of the run's events it must apply is then not known. A deployed
 * filter that takes fewer of the run's events than the Operator output's is a line of `unproven` too
 * ({@link narrowedFilterLines}): the events the app means the subscriber to take and SNS did not deliver it were not
 * checked, so the run cannot be OK.
 */
import { GetSubscriptionAttributesCommand } from '@aws-sdk/client-sns';
import { compileFilterPolicy, type FilterPolicyScope } from '../../operator/patterns/filter-policy';
import type { VerifyClients } from './clients';
import type { DeployedFilter, DeployedFlow, DeployedSubscriber } from './deployed-flow';
import { takenEvents, type RunEvent } from './observe';
import { isQueueOf, type TopicSubscription } from './topic-subscriptions';

/** A subscriber whose deployed subscription filters otherwise than its Operator output says. */
export interface FilterDifference {
  readonly subscriber: string;
  readonly subscriptionArn: string;
  /** What the subscriber's Operator output says (what `replay` and `dlq redrive` use). */
  readonly operatorOutput: { readonly filterPolicy?: Readonly<Record<string, unknown>>; readonly filterPolicyScope: FilterPolicyScope };
  /** What the subscription has (what SNS delivers by, and what verify matched the run's events with). */
  readonly deployed: { readonly filterPolicy?: Readonly<Record<string, unknown>>; readonly filterPolicyScope: FilterPolicyScope };
}

/** What {@link readSubscriptionFilters} found. */
export interface SubscriptionFilters {
  /** The flow, each subscriber whose subscriptions were read with their {@link DeployedSubscriber.subscriptions}. */
  readonly flow: DeployedFlow;
  /** The lines of the verdict's `unproven`, one per subscriber whose filter is not known. */
  readonly notProven: readonly string[];
  readonly differences: readonly FilterDifference[];
}

/** A JSON value with its objects' keys sorted: two policies are the same when these are. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.keys(value).sort().map((key) => [key, canonical((value as Record<string, unknown>)[key])]));
  return value;
}

/** `{"type":["OrderPlaced"]} (scope MessageBody)`, or `no filter policy (every event)` */
function shownFilter(filter: FilterDifference['deployed']): string {
  return filter.filterPolicy === undefined ? 'no filter policy (every event)' : `${JSON.stringify(filter.filterPolicy)} (scope ${filter.filterPolicyScope})`;
}

/** The report's line of a {@link FilterDifference}. */
export function filterDifferenceLine(difference: FilterDifference): string {
  return (
    `${difference.subscriber}: its subscription ${difference.subscriptionArn} filters with ${shownFilter(difference.deployed)}, ` +
    `but its Operator output says ${shownFilter(difference.operatorOutput)}: changed since the stack deployed it (console, another stack, drift)? ` +
    `verify matched the run's events with the subscription's; replay and dlq redrive, which read the Operator output, use the other`
  );
}

/** Whether two filters take the same messages (the same policy, keys in any order, and scope; without a policy the scope does not matter). */
function sameFilter(a: FilterDifference['deployed'], b: FilterDifference['deployed']): boolean {
  if (a.filterPolicy === undefined || b.filterPolicy === undefined) return a.filterPolicy === b.filterPolicy;
  return a.filterPolicyScope === b.filterPolicyScope && JSON.stringify(canonical(a.filterPolicy)) === JSON.stringify(canonical(b.filterPolicy));
}

/** Reads one subscription's filter: the filter, or why it is not known. */
async function readFilter(clients: Pick<VerifyClients, 'sns'>, subscriptionArn: string): Promise<DeployedFilter | { readonly unknown: string }> {
  let attributes: Record<string, string>;
  try {
    attributes = (await clients.sns.send(new GetSubscriptionAttributesCommand({ SubscriptionArn: subscriptionArn }))).Attributes ?? {};
  } catch (error) {
    // SNS answered (refused, throttled, not found): said; not reached at all: the run has no verdict (./aws-unreached.ts)
    if (typeof error !== 'object' || error === null || !('$metadata' in error)) throw error;
    const { name, message } = error as unknown as Error;
    return {
      unknown: `verify could not read the attributes of its subscription ${subscriptionArn} (${name}: ${message}), so it does not know which of the run's events SNS delivers to it; give verify sns:GetSubscriptionAttributes (docs/DEPLOYING.md)`,
    };
  }
  const scope = attributes.FilterPolicyScope ?? 'MessageAttributes';
  if (scope !== 'MessageAttributes' && scope !== 'MessageBody') return { unknown: `its subscription ${subscriptionArn} has the FilterPolicyScope ${scope}, which verify does not know` };
  const text = attributes.FilterPolicy;
  if (text === undefined || text === '') return { subscriptionArn, filterPolicyScope: scope };
  let policy: unknown;
  try {
    policy = JSON.parse(text);
    if (typeof policy !== 'object' || policy === null || Array.isArray(policy)) throw new Error('not a JSON object');
    // `{}` is how SNS's guide removes a filter policy: the subscription then accepts every message (review r13, R13-5)
    if (Object.keys(policy).length === 0) return { subscriptionArn, filterPolicyScope: scope };
    compileFilterPolicy(policy as Record<string, unknown>, scope);
  } catch (error) {
    return { unknown: `verify cannot evaluate the FilterPolicy of its subscription ${subscriptionArn} (${text}): ${(error as Error).message}` };
  }
  return { subscriptionArn, filterPolicy: policy as Record<string, unknown>, filterPolicyScope: scope };
}

/**
 * Reads each found subscriber's subscription(s) among `listed` (see the module comment). `unlisted`: the topics whose
 * subscriptions could not be listed (a subscriber's may be among them).
 */
export async function readSubscriptionFilters(
  clients: Pick<VerifyClients, 'sns'>,
  flow: DeployedFlow,
  listed: readonly TopicSubscription[],
  unlisted: readonly string[],
): Promise<SubscriptionFilters> {
  const notProven: string[] = [];
  const differences: FilterDifference[] = [];
  const subscribers: DeployedSubscriber[] = [];
  for (const subscriber of flow.subscribers) {
    const own = listed.filter((subscription) => subscription.protocol === 'sqs' && subscription.subscriptionArn !== 'PendingConfirmation' && isQueueOf(subscription.endpoint, subscriber));
    const keeps = `: verify took the events it must apply from its Operator output's filter`;
    if (own.length === 0) {
      notProven.push(
        unlisted.length > 0
          ? `${subscriber.name}: its subscription was not among those verify could list (the subscriptions of ${unlisted.join(', ')} could not be listed), so verify does not know which of the run's events SNS delivers to it${keeps}`
          : `${subscriber.name}: no subscription of the flow's topics delivers to its queue ${subscriber.deployment.queueUrl} (removed since the stack deployed it? or its topic is not one verify lists), so SNS may deliver it none of the run's events${keeps}`,
      );
      subscribers.push(subscriber);
      continue;
    }
    const filters: DeployedFilter[] = [];
    const unknown: string[] = [];
    for (const subscription of own) {
      const read = await readFilter(clients, subscription.subscriptionArn);
      if ('unknown' in read) unknown.push(read.unknown);
      else filters.push(read);
    }
    if (unknown.length > 0) {
      notProven.push(`${subscriber.name}: ${unknown.join('; ')}${keeps}`);
      subscribers.push(subscriber);
      continue;
    }
    const operatorOutput = { ...(subscriber.deployment.filterPolicy === undefined ? {} : { filterPolicy: subscriber.deployment.filterPolicy }), filterPolicyScope: subscriber.deployment.filterPolicyScope ?? 'MessageAttributes' };
    for (const filter of filters) {
      const deployed = { ...(filter.filterPolicy === undefined ? {} : { filterPolicy: filter.filterPolicy }), filterPolicyScope: filter.filterPolicyScope };
      if (!sameFilter(deployed, operatorOutput)) differences.push({ subscriber: subscriber.name, subscriptionArn: filter.subscriptionArn, operatorOutput, deployed });
    }
    subscribers.push({ ...subscriber, subscriptions: filters });
  }
  return { flow: { ...flow, subscribers }, notProven, differences };
}

/** At most this many event ids are named in a line of {@link narrowedFilterLines}. */
const IDS_NAMED = 3;

/**
 * The lines of the verdict's `unproven` for the subscribers whose deployed subscription(s) take fewer of the run's
 * `events` than their Operator output's filter (review r12b, R12B-1): one line per such subscriber, naming how many of
 * the run's events the app's filter takes that no deployed subscription of it does, a few of their ids, and both
 * filters. verify demands only what the deployed filter takes (SNS delivers nothing else), so these events were not
 * checked: a filter narrowed out of band (a console edit, the console's default scope `MessageAttributes`, drift) must
 * not end OK. A deployed filter that only takes more stays a {@link FilterDifference} of the report.
 */
export function narrowedFilterLines(subscribers: readonly DeployedSubscriber[], events: ReadonlyMap<string, RunEvent>): string[] {
  const lines: string[] = [];
  for (const subscriber of subscribers) {
    const subscriptions = subscriber.subscriptions;
    if (subscriptions === undefined) continue;
    const delivered = takenEvents(subscriber, events);
    const asTheAppSaysIt: DeployedSubscriber = { name: subscriber.name, stackName: subscriber.stackName, deployment: subscriber.deployment, environment: subscriber.environment };
    const missed = [...takenEvents(asTheAppSaysIt, events)].filter((id) => !delivered.has(id)).sort();
    if (missed.length === 0) continue;
    const { filterPolicy, filterPolicyScope } = subscriber.deployment;
    const operatorOutput = { ...(filterPolicy === undefined ? {} : { filterPolicy }), filterPolicyScope: filterPolicyScope ?? 'MessageAttributes' };
    const deployed = subscriptions.map((filter) => `${filter.subscriptionArn} filters with ${shownFilter({ ...(filter.filterPolicy === undefined ? {} : { filterPolicy: filter.filterPolicy }), filterPolicyScope: filter.filterPolicyScope })}`);
    lines.push(
      `${subscriber.name}: ${missed.length} of the run's events its Operator output's filter takes, its deployed subscription does not (${missed.slice(0, IDS_NAMED).join(', ')}${missed.length > IDS_NAMED ? ', ...' : ''}): ` +
        `SNS did not deliver them to it, so verify did not check them; its subscription ${deployed.join('; ')}, but its Operator output says ${shownFilter(operatorOutput)}: ` +
        `changed since the stack deployed it (console, another stack, drift)? if the app means it to take them, deploy its filter again (cdk deploy)`,
    );
  }
  return lines;
}
