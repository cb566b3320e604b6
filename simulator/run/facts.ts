/**
 * The run's facts, produced once after the run settled (and its operator acted): the committed outbox, the dead
 * letters, what each subscriber's filter took and its consumer applied, the scenario's probes' outcomes, IAM's figures,
 * the history. Every check reads these (simulator/check/run-check.ts); nothing a check reads is gathered by the check.
 */
import { iamNotEvaluated } from '../check/iam-not-evaluated';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { checkCommittedTwice } from '../check/committed-twice';
import { checkFollowUpsCommittedTwice } from '../check/follow-ups-committed-twice';
import { checkOwnPublishes, relayPublishersOf } from '../check/own-publishes';
import { readDeadLetters } from '../check/dead-letters';
import { failurePathsNotMet, failurePathsOf, requiredFailurePaths } from '../check/failure-paths';
import { attributeSends } from '../check/repeated-sends';
import { subscriberFacts } from '../check/subscriber-facts';
import type { EffectProbeOutcome, IamReport, ProducerProbeOutcome, RunFacts, SubscriberFacts, UntakenEvents } from '../check/run-check';
import type { RunLedger } from '../observation/ledger';
import type { DeadLetterQueueContents } from '../check/unwatched-dead-letters';
import { shownName } from '../model/find-resource';
import type { BuiltRun } from './build';
import { readCommittedOutbox, type CommittedOutbox } from './committed-events';
import type { DrivenRun } from './drive';
import type { OperatedRun } from './operate';
import type { SimulationOptions } from './options';
import type { PreparedApp, RunSettings } from './prepare';
import { PRODUCER_ATTEMPTS } from './producer-driver';
import { probeProducerWrites } from './producer-probe';
import { upstreamFacts } from './upstream-facts';
import { upstreamOf } from '../check/effect-causes';
import type { SentMessage } from './scenario';
import { injectedObjectFaultsByEvent } from '../check/injected-object-faults';
import { notExercised, type ExerciseFigures } from '../check/not-exercised';
import { compileFilterPolicy } from '../../operator/patterns/filter-policy';
import type { RelayModel, SubscriptionModel } from '../model/flow-model';

/** The facts, and what the report needs besides (the committed outbox as read). */
export interface SettledRun {
  readonly facts: RunFacts;
  readonly committed: CommittedOutbox;
}

/**
 * Per type (in the order first committed), the committed events that reached a topic and that no subscription's
 * filter took: relayed (passing the relay's filter), not given up on by the relay, matched by no subscription.
 */
export function untakenEvents(committed: Pick<CommittedOutbox, 'eventIdsByRelay' | 'eventsById'>, ledger: Pick<RunLedger, 'relayGaveUp' | 'matchedEvents'>): UntakenEvents[] {
  const givenUp = new Set(ledger.relayGaveUp.flatMap((entry) => entry.eventIds));
  const taken = new Set([...ledger.matchedEvents.values()].flatMap((ids) => [...ids]));
  const byType = new Map<string, string[]>();
  for (const ids of committed.eventIdsByRelay.values()) {
    for (const id of ids) {
      if (givenUp.has(id) || taken.has(id)) continue;
      const type = committed.eventsById.get(id)?.type ?? 'unknown';
      const list = byType.get(type) ?? [];
      if (!list.includes(id)) list.push(id);
      byType.set(type, list);
    }
  }
  return [...byType].map(([type, eventIds]) => ({ type, eventIds }));
}

/**
 * The committed events a subscription's filter policy takes, relayed or not: those of the relays publishing to its
 * topic whose message (as the relay publishes it: the body, no attributes) the policy matches, and those SNS matched.
 */
export function takenByFilter(subscription: SubscriptionModel, relays: readonly RelayModel[], committed: Pick<CommittedOutbox, 'eventIdsByRelay' | 'messagesById'>, matched: ReadonlySet<string>): Set<string> {
  const matches = subscription.filterPolicy === undefined ? () => true : compileFilterPolicy(subscription.filterPolicy, subscription.filterPolicyScope);
  const taken = new Set(matched);
  for (const relay of relays) {
    if (relay.targetTopic !== subscription.topic) continue;
    for (const id of committed.eventIdsByRelay.get(relay.key) ?? []) {
      const body = committed.messagesById.get(id);
      if (body !== undefined && matches({ body, attributes: {} })) taken.add(id);
    }
  }
  return taken;
}

/** Reads the settled run's facts (see the module comment); runs the scenario's probes. */
export async function readRunFacts(
  options: SimulationOptions,
  settings: RunSettings,
  app: PreparedApp,
  built: BuiltRun,
  driven: DrivenRun,
  operated: OperatedRun,
  documents: DynamoDBDocumentClient,
): Promise<SettledRun> {
  const { model, producers } = app;
  const { flow, client, ledger } = built;
  const committed = await readCommittedOutbox(model, flow, client);
  // the drivers' figures are summed when read: read them now that every command ran
  const producerFigures = driven.driver?.figures ?? driven.producerFigures;
  const producerProbes: ProducerProbeOutcome[] = [];
  for (const { producer, fn } of producers) {
    const outcome = await probeProducerWrites(producer, {
      model,
      flow,
      documents,
      committed,
      producerKey: fn.key,
      producerName: shownName(fn),
      writtenByProducer: ledger.outboxWrites.get(fn.key) ?? new Set(),
    });
    if (outcome !== undefined) producerProbes.push(outcome);
  }
  const deadLetterQueues: DeadLetterQueueContents[] = model.relays.flatMap((relay) => {
    const queue = relay.deadLetterQueue === undefined ? undefined : flow.queues.get(relay.deadLetterQueue);
    return queue === undefined ? [] : [{ queue, owner: `relay ${relay.constructPath ?? relay.key}` }];
  });
  let committedEvents = 0;
  for (const ids of committed.eventIdsByRelay.values()) committedEvents += ids.length;
  const malformed = options.scenario?.malformed;
  const isMalformed = (eventId: string): boolean => {
    const event = committed.eventsById.get(eventId);
    return malformed !== undefined && event !== undefined && malformed(event);
  };
  const objectFaults = injectedObjectFaultsByEvent(flow.s3?.injectedObjectFaults() ?? [], committed.eventsById.keys());
  const sends = attributeSends(ledger.appSends);
  const consumedQueues = new Set(model.eventSourceMappings.map((mapping) => mapping.queue));
  const sentMessages: SentMessage[] = sends
    .filter((send) => !consumedQueues.has(send.queue))
    .map((send) => ({
      queueName: send.queueName,
      body: send.body,
      messageAttributes: send.messageAttributes ?? {},
      sentBy: send.functionName,
      ...(send.eventId === undefined ? {} : { eventId: send.eventId }),
    }));
  const subscribers: SubscriberFacts[] = [];
  const givenUpByRelay = new Set(ledger.relayGaveUp.flatMap((entry) => entry.eventIds));
  const exercise: ExerciseFigures[] = [];
  for (const subscriber of flow.subscribers) {
    const deadLetters = readDeadLetters(subscriber.deadLetterQueues, ledger);
    deadLetterQueues.push(...subscriber.deadLetterQueues.map((queue) => ({ queue, owner: `subscriber ${subscriber.name}` })));
    const matched = ledger.matchedEvents.get(subscriber.subscription.key) ?? new Set<string>();
    const applied = new Set([...(ledger.acknowledgedEvents.get(subscriber.subscription.key) ?? []), ...(ledger.handledEvents.get(subscriber.subscription.key) ?? [])]);
    const operator = options.scenario?.operator?.[subscriber.name] === undefined ? 'none' : operated.decisions === undefined ? 'off' : 'acted';
    const probe = options.scenario?.effects?.[subscriber.name];
    let effectProbe: EffectProbeOutcome | undefined;
    if (probe !== undefined) {
      try {
        const events = [...matched].flatMap((id) => {
          const event = committed.eventsById.get(id);
          return event ? [event] : [];
        });
        effectProbe = { tallies: await probe({ client: documents, environment: subscriber.environment, events, sentMessages }) };
      } catch (error) {
        effectProbe = { error: error instanceof Error ? error.message : String(error) };
      }
    }
    const taken = takenByFilter(subscriber.subscription, model.relays, committed, matched);
    exercise.push({
      name: subscriber.name,
      consumed: subscriber.mapping !== undefined,
      deliveries: subscriber.mapping === undefined ? 0 : (ledger.mappings.get(subscriber.mapping.key)?.deliveries ?? 0),
      taken: taken.size,
      givenUpByRelay: [...taken].filter((id) => givenUpByRelay.has(id)).length,
    });
    const functionKey = subscriber.function?.key;
    const ownClientWrites = functionKey === undefined ? undefined : built.ownClientWrites.cause(functionKey);
    subscribers.push({
      ...subscriberFacts({
        view: subscriber,
        deadLetters,
        matched,
        applied,
        operator,
        ...(effectProbe === undefined ? {} : { effectProbe }),
        causes: {
          applyCause: (eventIds) => (functionKey === undefined ? undefined : built.attribution.cause(functionKey, eventIds)),
          applyCauses: (eventIds) => (functionKey === undefined ? [] : built.attribution.causes(functionKey, eventIds)),
          shortCause: (eventIds) => (functionKey === undefined ? undefined : built.attribution.shortCause(functionKey, eventIds)),
          shortCauses: (eventIds) => (functionKey === undefined ? [] : built.attribution.shortCauses(functionKey, eventIds)),
          appliedBetween: (eventId) => (functionKey === undefined ? [] : built.attribution.appliedBetween(functionKey, eventId)),
          ownClientCause: (eventIds) => (functionKey === undefined ? undefined : built.ownClientWrites.causeOf(functionKey, subscriber.name, eventIds)),
          ...(ownClientWrites === undefined ? {} : { ownClientWrites }),
        },
      }),
      failurePaths: failurePathsOf(subscriber, ledger, functionKey === undefined ? 0 : flow.transactionConflicts.refusedFor(functionKey)),
    });
  }
  const iam: IamReport =
    flow.access !== undefined
      ? { evaluated: true, ...flow.access.control.figures() }
      : iamNotEvaluated(
          options.iam === false ? 'off' : 'engine-missing',
          [...(model.environments?.values() ?? [])].map((environment) => environment.account),
        );
  const drivenProducers = driven.driver === undefined ? [] : producers.map(({ fn }) => ({ name: shownName(fn), functionKey: fn.key }));
  const upstream = upstreamFacts(
    built,
    producerProbes,
    committed.eventsById,
    flow.subscribers.map((subscriber) => ({ name: subscriber.name, ...(subscriber.function === undefined ? {} : { functionKey: subscriber.function.key }) })),
    drivenProducers,
  );
  const facts: RunFacts = {
    untaken: untakenEvents(committed, ledger),
    notExercised: notExercised(exercise, committedEvents),
    // the failure paths steered to each subscriber that it never met: what the run does not prove (NOT PROVEN)
    failurePathsNotMet: subscribers.flatMap(({ view, failurePaths }) =>
      failurePathsNotMet(
        view.name,
        failurePaths,
        requiredFailurePaths(settings.plan.rates, view.queue.model.redrive?.maxReceiveCount),
        ledger.deliveredEvents.get(view.subscription.key)?.size ?? 0,
      ),
    ),
    expectConsumed: options.scenario?.expectConsumed ?? [],
    publishedOutside: options.scenario?.publishedOutside ?? [],
    consumes: options.scenario?.consumes ?? {},
    model,
    ledger,
    synthAnnotations: app.synthAnnotations,
    rounds: operated.roundsOutcome,
    lastReceiveProbes: operated.lastReceiveProbes,
    committed,
    committedEvents,
    offloadedEvents: committed.offloadedEventIds.size,
    producer: {
      figures: producerFigures,
      attempts: driven.driver !== undefined ? PRODUCER_ATTEMPTS : 1,
      probes: producerProbes,
      committedTwice: drivenProducers.flatMap(({ name, functionKey }) => checkCommittedTwice(name, built.ledger.outboxRequestsByInvocation.get(functionKey) ?? new Map(), committed.eventsById)),
      // the outbox events each attempt of a failed command put, applied or refused (the driver's invocation keys: producer|<index>|<attempt>)
      attemptEvents: (failure) => {
        const producer = failure.producer === undefined ? drivenProducers[0] : drivenProducers.find(({ name }) => name === failure.producer);
        if (producer === undefined) return undefined;
        const requests = built.ledger.outboxRequestsByInvocation.get(producer.functionKey);
        const attempts = Array.from({ length: PRODUCER_ATTEMPTS }, (_, attempt) => (requests?.get(`producer|${failure.index}|${attempt + 1}`) ?? []).flatMap((request) => request.eventIds));
        return { producer: producer.name, attempts };
      },
    },
    // an app function's own publish to a flow's event topic, probe or not (../check/own-publishes.ts)
    ownPublishes: checkOwnPublishes(ledger.appPublishes, relayPublishersOf(model, flow.names), ({ functionKey, functionName }) => {
      const subscriber = flow.subscribers.find((view) => view.function?.key === functionKey);
      if (subscriber !== undefined) return { subscriber: subscriber.name };
      return { producer: drivenProducers.find((producer) => producer.functionKey === functionKey)?.name ?? functionName };
    }, (eventId) => committed.eventsById.has(eventId)),
    // a subscriber's follow-up committed again at a redelivery, probe or not (../check/follow-ups-committed-twice.ts)
    followUpsCommittedTwice: flow.subscribers.flatMap((subscriber) =>
      subscriber.function === undefined ? [] : checkFollowUpsCommittedTwice(subscriber.name, built.attribution.followUps(subscriber.function.key), (eventId) => committed.eventsById.get(eventId)?.type),
    ),
    sends,
    subscribers,
    iam,
    deadLetterQueues,
    history: built.history.entries(),
    rates: settings.plan.rates,
    isMalformed,
    upstreamOf: (subscriber, eventIds, reading) => upstreamOf(upstream, subscriber, eventIds, reading),
    ...(objectFaults.size === 0 ? {} : { injectedObjectFault: (eventId: string) => objectFaults.get(eventId) }),
  };
  return { facts, committed };
}
