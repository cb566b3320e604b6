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
import type { FlowModel, ResourceKey } from '../model/flow-model';
import type { AppPublish } from '../observation/observer';
import type { Finding } from './invariants';
import { fixFor } from './violation-cause';

/** Event ids named per violation. */
const MAX_LISTED = 5;

/** The relay's side of a flow: the functions that publish for it, and the topics they and the Pipes publish to. */
export interface RelayPublishers {
  /** The functions an event source mapping runs on a relay's queue (the ordered path's fan-out). */
  readonly relayFunctions: ReadonlySet<ResourceKey>;
  /** The flows' event topics: a Pipe's target topic, and the topic a relay function's environment names (`IEF_ORDERED_TOPIC_ARN`). */
  readonly eventTopics: ReadonlySet<ResourceKey>;
}

/** The relay functions and event topics of `model` (see {@link RelayPublishers}). */
export function relayPublishersOf(model: Pick<FlowModel, 'relays' | 'eventSourceMappings' | 'functions' | 'topics'>): RelayPublishers {
  const relayQueues = new Set(model.relays.flatMap((relay) => (relay.targetQueue === undefined ? [] : [relay.targetQueue.queue])));
  const relayFunctions = new Set(model.eventSourceMappings.filter((mapping) => relayQueues.has(mapping.queue)).map((mapping) => mapping.function));
  const topicKeys = new Set(model.topics.map((topic) => topic.key));
  const eventTopics = new Set(model.relays.flatMap((relay) => (relay.targetTopic === undefined ? [] : [relay.targetTopic])));
  for (const fn of model.functions) {
    if (!relayFunctions.has(fn.key)) continue;
    const named = fn.environment[ENV.ORDERED_TOPIC_ARN];
    const ref = typeof named === 'object' && named !== null ? (named as { Ref?: unknown }).Ref : undefined;
    if (typeof ref === 'string' && topicKeys.has(ref)) eventTopics.add(ref);
  }
  return { relayFunctions, eventTopics };
}

/** Who a function is in the report: a subscriber's consumer, else a producer (by the name the report gives it). */
export type PublisherRole = { readonly subscriber: string } | { readonly producer: string };

/**
 * One `dual-write` violation per (function, event topic) that a function other than a relay function published to
 * itself, with the count, the first event ids and the cause `published-to-event-topic`. A relay function's publishes
 * (to any topic) and a publish to a topic that is no flow's event topic are not charged. `roleOf` names the function.
 */
export function checkOwnPublishes(publishes: readonly AppPublish[], relay: RelayPublishers, roleOf: (publish: AppPublish) => PublisherRole): Finding[] {
  const groups = new Map<string, AppPublish[]>();
  for (const publish of publishes) {
    if (relay.relayFunctions.has(publish.functionKey) || !relay.eventTopics.has(publish.topic)) continue;
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
        "no outbox committed them, so they were written apart from the change (a crash between the commit and the publish loses the event, a retry publishes it again); only the flow's relay publishes to its event topic",
      causes: [{ kind: 'published-to-event-topic' as const, ...role, eventIds: eventIds.slice(0, MAX_LISTED), invocations: [], requests: [], fix: fixFor('published-to-event-topic') }],
    };
  });
}
