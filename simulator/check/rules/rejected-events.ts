/** Rule: the runtime rejected for good only events the scenario marks as malformed (../rejected-events.ts). */
import { checkRejectedEvents } from '../rejected-events';
import type { ObservableRunFacts, ObservableSubscriberFacts, SubscriberCheck } from '../run-check';

export const rejectedEventsRule: SubscriberCheck<ObservableSubscriberFacts, ObservableRunFacts> = {
  name: 'valid-event-rejected',
  checks: 'the runtime rejected for good only events the scenario marks as malformed',
  scope: 'subscriber',
  check: (subscriber, facts) => checkRejectedEvents(subscriber.view.name, subscriber.deadLetters, facts.isMalformed, (eventId) => facts.injectedObjectFault?.(eventId)),
};
