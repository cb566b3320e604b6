/**
 * The synth-time check that keeps a subscriber of a flow that offloads large events (issue 42) from filtering its
 * subscription on the event's `data`, which an offloaded envelope does not carry.
 */
import { Stack } from 'aws-cdk-lib';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type { Subscriber } from '../consumer/subscriber';
import { validationError } from './validation-error';

/**
 * Refuses a subscriber whose subscription filters the message body on `data` on a flow that offloads: an offloaded
 * event's envelope has no `data` (its `dataref` instead), so SNS drops every offloaded event for that subscription
 * with no error, no dead letter and no alarm (lambda/contract/claim-check.ts, 'Filters.').
 */
export function refuseDataFilterOnOffloadedFlow(owner: string, subscriber: Subscriber): void {
  const cfn = subscriber.subscription.node.defaultChild as sns.CfnSubscription;
  const stack = Stack.of(subscriber.subscription);
  const scope = stack.resolve(cfn.filterPolicyScope) as unknown;
  const policy = stack.resolve(cfn.filterPolicy) as Record<string, unknown> | undefined;
  if (scope !== 'MessageBody' || policy === undefined || policy === null || !('data' in policy)) return;
  throw validationError(
    `${owner}: subscriber ${subscriber.subscriberName} (${subscriber.node.path}) has a filterPolicyWithMessageBody on 'data', but offloadLargeEvents is true: ` +
      "an offloaded event's envelope has no 'data' (it carries dataref, iefdatasha256 and iefdatasize instead), so SNS would drop every event over the " +
      'inline threshold for this subscriber, with no error and no dead letter; filter on envelope attributes (type, source, subject, ...) instead, ' +
      "select on the event's data in the handler, or use a flow without offloadLargeEvents",
  );
}
