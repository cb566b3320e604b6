/**
 * The run's checks, one rule per file under ./rules/, in the order their violations are reported: a new check is a
 * rule file and one line here. Consecutive subscriber rules run subscriber by subscriber (./run-check.ts).
 */
import type { ObservableCheck, RunCheck } from './run-check';
import { accessRule } from './rules/access';
import { aggregateOrderRule } from './rules/aggregate-order';
import { deliveriesRule } from './rules/deliveries';
import { deployRulesRule } from './rules/deploy-rules';
import { committedTwiceRule } from './rules/committed-twice';
import { dualWritesRule } from './rules/dual-writes';
import { ownPublishesRule } from './rules/own-publishes';
import { followUpsCommittedTwiceRule } from './rules/follow-ups-committed-twice';
import { effectsRule } from './rules/effects';
import { historyRule } from './rules/history';
import { producerFailuresRule } from './rules/producer-failures';
import { reachedRule } from './rules/reached';
import { rejectedEventsRule } from './rules/rejected-events';
import { relayedRule } from './rules/relayed';
import { repeatedSendsRule } from './rules/repeated-sends';
import { settledRule } from './rules/settled';
import { subjectSpreadRule } from './rules/subject-spread';
import { subscriberConsumesRule } from './rules/subscriber-consumes';
import { subscriberHealthRule } from './rules/subscriber-health';
import { subscriptionRulesRule } from './rules/subscription-rules';
import { synthErrorsRule } from './rules/synth-errors';
import { trackedRule } from './rules/tracked';
import { leaseRefusedRedeliveriesRule } from './rules/lease-refused-redeliveries';
import { lastReceiveProbesRule } from './rules/last-receive-probes';
import { unappliedEventsRule } from './rules/unapplied-events';
import { untakenEventsRule } from './rules/untaken-events';
import { unwatchedDeadLettersRule } from './rules/unwatched-dead-letters';

/** Every check of a run, in report order. */
export const RUN_CHECKS: readonly RunCheck[] = [
  // the app and the run as a whole
  synthErrorsRule,
  deployRulesRule,
  subscriptionRulesRule,
  settledRule,
  trackedRule,
  relayedRule,
  untakenEventsRule,
  subscriberConsumesRule,
  producerFailuresRule,
  dualWritesRule,
  ownPublishesRule,
  committedTwiceRule,
  followUpsCommittedTwiceRule,
  repeatedSendsRule,
  lastReceiveProbesRule,
  // each subscriber, its checks together
  deliveriesRule,
  subscriberHealthRule,
  rejectedEventsRule,
  unappliedEventsRule,
  leaseRefusedRedeliveriesRule,
  reachedRule,
  effectsRule,
  // what spans the flow
  accessRule,
  unwatchedDeadLettersRule,
  historyRule,
  aggregateOrderRule,
  subjectSpreadRule,
];

/** The checks of {@link RUN_CHECKS} that read only what a deployed flow shows too (`verify` runs them), in report order. */
export const OBSERVABLE_CHECKS: readonly ObservableCheck[] = [deliveriesRule, rejectedEventsRule, unappliedEventsRule, effectsRule, aggregateOrderRule];
