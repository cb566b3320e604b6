/**
 * The run's last stage: the result, from the settled run's facts and the violations the checks found: the figures of
 * the producer, the relays, SNS, each subscriber, IAM and the operator.
 */
import { hiddenOutcomesNote } from '../check/hidden-outcomes';
import { aggregateOrderCoverage } from '../check/aggregate-order-coverage';
import type { Finding, Violation } from '../check/invariants';
import type { CausedViolations } from '../check/violation-cause';
import { checkEffects } from '../check/invariants';
import { notSteeredFailurePaths } from '../check/failure-paths';
import { leaseBelowTimeout } from '../check/lease-below-timeout';
import { checkRepeatedSends } from '../check/repeated-sends';
import type { RunFacts } from '../check/run-check';
import type { RunLedger } from '../observation/ledger';
import type { BuiltRun } from './build';
import type { OperatedRun } from './operate';
import type { PreparedApp, RunSettings } from './prepare';
import { replayability } from './replayability';
import type { RealTimeEvents, RelayFigures, SimulationResult, SubscriberReport } from './result';
import type { DeadLetterFinding } from '../check/dead-letters';

function relayFigures(ledger: RunLedger, committedEvents: number, offloadedEvents: number): RelayFigures {
  const dead = ledger.relayGaveUp.filter((entry) => entry.deadLetterQueue !== undefined);
  const lost = ledger.relayGaveUp.filter((entry) => entry.deadLetterQueue === undefined);
  return {
    streamRecords: ledger.streamRecords,
    committedEvents,
    offloadedEvents,
    failedAttempts: ledger.faultsOfKind('relay-publish-failure'),
    deadLettered: dead.reduce((sum, entry) => sum + entry.eventIds.length, 0),
    deadLetterMessages: dead.length,
    lost: lost.reduce((sum, entry) => sum + entry.eventIds.length, 0),
    ...(ledger.catchUpLimitMet === 0 ? {} : { catchUpLimitMet: ledger.catchUpLimitMet }),
  };
}

/** The figures of each subscriber, as the summary table shows them. */
function subscriberReports(facts: RunFacts): SubscriberReport[] {
  // a subscriber whose last-receive probe chose an event got the probe's conflicts
  const probed = new Set((facts.lastReceiveProbes ?? []).filter((probe) => probe.eventId !== undefined).map((probe) => probe.subscriber));
  const { ledger } = facts;
  return facts.subscribers.map((subscriber) => {
    const { view } = subscriber;
    const mapping = view.mapping ? ledger.mappings.get(view.mapping.key) : undefined;
    const counters = view.function ? ledger.runtimeCounters.get(view.function.key) : undefined;
    const faultsByKind = ledger.faultsByKind([view.subscription.key, view.queue.model.key, view.function?.key]);
    const probe = subscriber.effectProbe;
    const effects = probe === undefined || 'error' in probe ? undefined : checkEffects(view, probe.tallies, subscriber.deadLetters, ledger).totals;
    const maxReceiveCount = view.queue.model.redrive?.maxReceiveCount;
    const notSteered = notSteeredFailurePaths(facts.rates, maxReceiveCount);
    const outcomesHidden = view.function === undefined ? undefined : hiddenOutcomesNote(view.name, view.function.applicationLogLevel);
    return {
      name: view.name,
      // an ordered subscriber (its queue FIFO: a standard topic cannot deliver to one) runs the ordered consumer, whatever
      // its function's processing mode variable says (transactional, the mode its inbox records are written in)
      processingMode: view.queue.model.fifo ? 'ordered' : view.environment.IEF_PROCESSING_MODE,
      events: subscriber.matched.size,
      deliveries: mapping?.deliveries ?? 0,
      // copies of a blocked message acknowledged without another dead letter are suppressed duplicates too
      duplicatesSuppressed: (counters?.Duplicates ?? 0) + (counters?.AlreadyBlocked ?? 0),
      faults: Object.values(faultsByKind).reduce((sum, count) => sum + count, 0),
      faultsByKind,
      retries: mapping?.redeliveries ?? 0,
      deadLettered: subscriber.deadLetters.length,
      effects,
      failurePaths: subscriber.failurePaths,
      ...(maxReceiveCount === undefined || notSteered.length === 0 ? {} : { failurePathsNotSteered: { maxReceiveCount, paths: notSteered, ...(probed.has(view.name) ? { probed: true } : {}) } }),
      ...(outcomesHidden === undefined ? {} : { outcomesHidden }),
      ...(view.queue.model.fifo ? { orderChecked: aggregateOrderCoverage(ledger.answeredTogether.get(view.subscription.key) ?? [], facts.committed.eventsById, {
            matched: subscriber.matched,
            deadLettered: new Set(subscriber.deadLetters.flatMap((letter) => (letter.eventId === undefined ? [] : [letter.eventId]))),
          }) } : {}),
    };
  });
}

/**
 * Builds the result (see the module comment); `startedAt` is the wall-clock start, for `realSeconds` only; `realTime`
 * what acted on the workers between the scheduler's steps.
 */
export function reportRun(
  settings: RunSettings,
  app: PreparedApp,
  built: BuiltRun,
  operated: OperatedRun,
  facts: RunFacts,
  findings: readonly Finding[],
  startedAt: number,
  realTime: RealTimeEvents,
): SimulationResult {
  const violations: Violation[] = findings.map(({ causes: _causes, ...violation }) => violation);
  const causes: CausedViolations[] = findings.flatMap((finding, violation) => (finding.causes === undefined || finding.causes.length === 0 ? [] : [{ violation, causes: finding.causes }]));
  const { ledger, flow, clock } = built;
  const deadLetters = new Map<string, readonly DeadLetterFinding[]>(facts.subscribers.map((subscriber) => [subscriber.view.name, subscriber.deadLetters]));
  return {
    assemblyDirectory: app.assemblyDirectory,
    synthAnnotations: app.synthAnnotations,
    seed: settings.seed,
    startTime: new Date(settings.startTime).toISOString(),
    startTimeMs: settings.startTime,
    concurrency: settings.concurrency,
    producer: facts.producer.figures,
    relay: relayFigures(ledger, facts.committedEvents, facts.offloadedEvents),
    sns: { failedAttempts: ledger.faultsOfKind('sns-delivery-failure'), deadLettered: ledger.snsDeadLettered, undeliverable: ledger.undeliverable.length },
    transactionConflicts: flow.transactionConflicts.figures(),
    sqsSends: checkRepeatedSends(facts.sends).figures,
    subscribers: subscriberReports(facts),
    deadLetters,
    violations,
    causes,
    warnings: facts.subscribers.flatMap(({ view }) => {
      const written = view.function === undefined ? undefined : ledger.leaseSecondsWritten.get(view.function.key);
      const warning =
        view.function === undefined
          ? undefined
          : leaseBelowTimeout({ subscriber: view.name, environment: view.environment, functionTimeoutSeconds: view.function.timeoutSeconds, ...(written === undefined ? {} : { writtenLeaseSeconds: written }) });
      return warning === undefined ? [] : [warning];
    }),
    effectsNotCounted: facts.subscribers.filter((subscriber) => subscriber.effectProbe === undefined).map((subscriber) => subscriber.view.name),
    notSimulated: app.model.notSimulated,
    rounds: operated.rounds,
    simulatedSeconds: Math.round(clock.offsetMs() / 1000),
    realSeconds: Math.round((Date.now() - startedAt) / 100) / 10,
    totalFaults: ledger.totalFaults(),
    operator: operated.operator,
    ...(operated.lastReceiveProbes.length === 0 ? {} : { lastReceiveProbes: operated.lastReceiveProbes }),
    untakenEvents: facts.untaken,
    notExercised: facts.notExercised ?? [],
    failurePathsNotMet: facts.failurePathsNotMet ?? [],
    iam: facts.iam,
    ...replayability(realTime, ledger),
    realTimeEvents: realTime,
    producerWritesChecked: app.producers.length > 0 && app.producers.every(({ producer }) => producer.probe !== undefined),
  };
}
