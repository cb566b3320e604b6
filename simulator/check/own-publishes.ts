/**
 * Events published to a flow's event topic around the outbox: the relay (the Pipe, and on the ordered path the
 * fan-out function on the relay's FIFO queue) is the only publisher of a flow's event topics. An app function that
 * publishes to one with its own SNS client, after (or instead of) its transaction, writes its change and its event
 * apart: a crash between the commit and the publish loses the event, and a retry publishes it again. The simulator's SNS
 * endpoint hears every publish of the app's functions and which function made it, so this fails the run at that
 * function for every such publish, whatever a producer probe names. Every app function is the app's: none of them is
 * an outside publisher.
 */
import { ENV } from '../../lambda/contract/environment';
import type { FlowModel, LocalNames, ResourceKey } from '../model/flow-model';
import { isNoValue, resolveValue } from '../model/intrinsics';
import { LocalResourceNames, registerStaticNames } from '../model/local-names';
import type { AppPublish } from '../observation/observer';
import type { Finding } from './invariants';
import { fixFor } from './violation-cause';

/** Event ids named per violation. */
const MAX_LISTED = 5;

/** The relay's side of a flow: the functions that publish for it, and the topics they and the Pipes publish to. */
export interface RelayPublishers {
  /** The functions an event source mapping runs on a relay's queue (the ordered path's fan-out). */
  readonly relayFunctions: ReadonlySet<ResourceKey>;
  /** The flows' event topics: a Pipe's target topic, and the topic a relay function's environment names (`IEF_ORDERED_TOPIC_ARN`, resolved to the topic of the template it names). */
  readonly eventTopics: ReadonlySet<ResourceKey>;
}

/** The model parts {@link relayPublishersOf} reads. */
export type RelayPublishersModel = Pick<FlowModel, 'relays' | 'eventSourceMappings' | 'functions' | 'topics' | 'environments'>;

/**
 * The relay functions and event topics of `model` (see {@link RelayPublishers}). A relay function's
 * `IEF_ORDERED_TOPIC_ARN` is resolved as the run resolves the function's environment (a `Ref` or `Fn::GetAtt` of a
 * topic of its own stack or, through an output, of another stack of the assembly) and matched to the topic whose ARN
 * it is. `names` are the run's local names. @default the topics' local names, as a run registers them
 */
export function relayPublishersOf(model: RelayPublishersModel, names: LocalNames = staticNames(model)): RelayPublishers {
  const relayQueues = new Set(model.relays.flatMap((relay) => (relay.targetQueue === undefined ? [] : [relay.targetQueue.queue])));
  const relayFunctions = new Set(model.eventSourceMappings.filter((mapping) => relayQueues.has(mapping.queue)).map((mapping) => mapping.function));
  const topicByArn = new Map(model.topics.flatMap((topic) => {
    const arn = names.ref(topic.key);
    return arn === undefined ? [] : [[arn, topic.key] as const];
  }));
  const eventTopics = new Set(model.relays.flatMap((relay) => (relay.targetTopic === undefined ? [] : [relay.targetTopic])));
  for (const fn of model.functions) {
    if (!relayFunctions.has(fn.key)) continue;
    const named = fn.environment[ENV.ORDERED_TOPIC_ARN];
    if (named === undefined || isNoValue(named)) continue;
    const topic = topicByArn.get(resolvedOrUndefined(() => resolveValue(named, fn.stackName, names, `environment variable ${ENV.ORDERED_TOPIC_ARN} of function ${fn.key}`)) ?? '');
    if (topic !== undefined) eventTopics.add(topic);
  }
  return { relayFunctions, eventTopics };
}

/** The local names a run gives the model's topics (and functions), which need nothing created first. */
function staticNames(model: RelayPublishersModel): LocalNames {
  const names = new LocalResourceNames('local', model.environments);
  registerStaticNames(model, names);
  return names;
}

/** A value that does not resolve (a resource with no static name, an import) names no topic of the model. */
function resolvedOrUndefined(resolve: () => string): string | undefined {
  try {
    return resolve();
  } catch {
    return undefined;
  }
}

/** Who a function is in the report: a subscriber's consumer, else a producer (by the name the report gives it). */
export type PublisherRole = { readonly subscriber: string } | { readonly producer: string };

/**
 * One `dual-write` violation per (function, event topic) that a function other than a relay function published to
 * itself, with the count, the first event ids and the cause `published-to-event-topic`. The event topics are `relay`'s
 * and every topic a relay function published to in `publishes`. A relay function's publishes (to any topic) and a
 * publish to a topic that is no flow's event topic are not charged. `roleOf` names the function; `committed` tells an
 * event an outbox committed too, which the detail says the function also published itself.
 */
export function checkOwnPublishes(
  publishes: readonly AppPublish[],
  relay: RelayPublishers,
  roleOf: (publish: AppPublish) => PublisherRole,
  /** Whether an outbox of the run committed the event. @default none did */
  committed: (eventId: string) => boolean = () => false,
): Finding[] {
  // a topic a relay function published to is an event topic too, however its function was told of it
  const eventTopics = new Set([...relay.eventTopics, ...publishes.filter((publish) => relay.relayFunctions.has(publish.functionKey)).map((publish) => publish.topic)]);
  const groups = new Map<string, AppPublish[]>();
  for (const publish of publishes) {
    if (relay.relayFunctions.has(publish.functionKey) || !eventTopics.has(publish.topic)) continue;
    const key = `${publish.functionKey}|${publish.topic}`;
    groups.set(key, [...(groups.get(key) ?? []), publish]);
  }
  // in key order, so the report does not depend on the order the publishes came in
  return [...groups.keys()].sort().map((key) => {
    const group = groups.get(key)!;
    const first = group[0]!;
    const eventIds = [...new Set(group.flatMap((publish) => (publish.eventId === undefined ? [] : [publish.eventId])))].sort();
    const named = eventIds.slice(0, MAX_LISTED).join(', ') + (eventIds.length > MAX_LISTED ? ` and ${eventIds.length - MAX_LISTED} more` : '');
    const role = roleOf(first);
    return {
      kind: 'dual-write' as const,
      ...('subscriber' in role ? { subscriber: role.subscriber } : {}),
      detail:
        `${first.functionName} published ${group.length} message(s) to the flow's event topic ${first.topicArn} with its own SNS client${eventIds.length === 0 ? '' : ` (events ${named})`}: ` +
        `${whoCommitted(group, first.functionName, committed)}; only the flow's relay publishes to its event topic`,
      causes: [{ kind: 'published-to-event-topic' as const, ...role, eventIds: eventIds.slice(0, MAX_LISTED), invocations: [], requests: [], fix: fixFor('published-to-event-topic') }],
    };
  });
}

/** What the outbox did with the events of `group`: committed them too (each is then published twice), or not at all. */
function whoCommitted(group: readonly AppPublish[], functionName: string, committed: (eventId: string) => boolean): string {
  const twice = group.filter((publish) => publish.eventId !== undefined && committed(publish.eventId)).length;
  const apart = 'so they were written apart from the change (a crash between the commit and the publish loses the event, a retry publishes it again)';
  const alsoItself = `${functionName} also published them itself, so each reaches the topic twice`;
  if (twice === 0) return `no outbox committed them, ${apart}`;
  if (twice === group.length) return `the outbox committed them too and ${alsoItself}`;
  return `the outbox committed ${twice} of them too and ${alsoItself}; no outbox committed the other ${group.length - twice}, ${apart}`;
}
