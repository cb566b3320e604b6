/** Rule: no lease outlasting the queue's visibility timeout refused a redelivery (../lease-refused-redeliveries.ts), whatever the operator did later. */
import { checkLeaseRefusedRedeliveries } from '../lease-refused-redeliveries';
import type { SubscriberCheck } from '../run-check';

export const leaseRefusedRedeliveriesRule: SubscriberCheck = {
  name: 'lease-outlasts-redelivery',
  checks: "no redelivery was refused by a live lease that outlasts the queue's visibility timeout (an overridden lease duration), whether or not the operator recovered the message",
  scope: 'subscriber',
  check: (subscriber, facts) => {
    const visibilityTimeoutSeconds = subscriber.view.queue.model.visibilityTimeoutSeconds;
    const mapping = subscriber.view.mapping;
    const functionKey = subscriber.view.function?.key;
    const writtenLeaseSeconds = functionKey === undefined ? undefined : facts.ledger.leaseSecondsWritten.get(functionKey);
    return checkLeaseRefusedRedeliveries(
      {
        subscriber: subscriber.view.name,
        environment: subscriber.view.environment,
        ...(visibilityTimeoutSeconds === undefined ? {} : { visibilityTimeoutSeconds }),
        ...(writtenLeaseSeconds === undefined ? {} : { writtenLeaseSeconds }),
      },
      mapping === undefined ? [] : (facts.ledger.loggedRetries.get(mapping.key) ?? []),
      subscriber.deadLetters,
    );
  },
};
