/** Rule: the runtime rejected for good only events the scenario marks as malformed (../rejected-events.ts). */
import { checkRejectedEvents } from '../rejected-events';
import type { SubscriberCheck } from '../run-check';

export const rejectedEventsRule: SubscriberCheck = {
  name: 'valid-event-rejected',
  checks: 'the runtime rejected for good only events the scenario marks as malformed',
  scope: 'subscriber',
  check: (subscriber, facts) => checkRejectedEvents(subscriber.view.name, subscriber.deadLetters, facts.isMalformed, (eventId) => facts.injectedObjectFault?.(eventId)),
};
