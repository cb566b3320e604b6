/**
 * Review rv9, V-2 (red, product not fixed): verify takes a subscriber whose Operator output names an `outboxTable`
 * for one that emits events (a "hop"): the derived default --timeout adds a hop per such subscriber
 * (simulator/verify/queue-settings.ts, defaultTimeoutSeconds), and the run's event reader scans its outbox at every
 * look instead of once (simulator/verify/observe.ts, runEventReader: nu43 finding 9a's fix). But the constructs write
 * `outboxTable` into EVERY subscriber's Operator output of the flow's environment (it is what `replay` reads:
 * lambda/contract/subscriber-deployment.ts, "The outbox table of the flow whose topic it subscribes to"), and into
 * every ordered subscriber's (the relay's history). So a flow of two subscribers, neither emitting, gets 3 hops: its
 * derived limit is 3 x maxReceiveCount x visibility timeout + 120 s instead of 1 x, and the producer's outbox is never
 * "scanned once" (it is in the set of emitting outboxes). Outputs here are synthesized by the constructs.
 */
import { Template } from 'aws-cdk-lib/assertions';
import { expect, test } from 'vitest';
import { IdempotentEventFlow } from '../../../lib';
import { parseSubscriberDeployment } from '../../../lambda/contract/subscriber-deployment';
import { resolveValue } from '../../../simulator/model/intrinsics';
import type { DeployedFlow } from '../../../simulator/verify/deployed-flow';
import { defaultTimeoutSeconds, type QueueSettings } from '../../../simulator/verify/queue-settings';
import { HANDLER_ENTRY, newStack } from '../../fixtures/construct-test-kit';

test('V-2: a subscriber that does not emit events adds no hop to the derived time limit', () => {
  const stack = newStack();
  const flow = new IdempotentEventFlow(stack, 'Orders');
  flow.addSubscriber('Billing', { entry: HANDLER_ENTRY });
  flow.addSubscriber('Shipping', { entry: HANDLER_ENTRY });
  const names = { region: 'eu-west-1', accountId: '111111111111', ref: (key: string) => `<${key.split('/')[1]}>`, getAtt: (key: string, attribute: string) => `<${key.split('/')[1]}.${attribute}>` };
  const outputs = Template.fromStack(stack).toJSON().Outputs as Record<string, { Value: unknown }>;
  const deployments = Object.entries(outputs).flatMap(([id, output]) => {
    try {
      return [parseSubscriberDeployment(resolveValue(output.Value, 'TestStack', names, `output ${id}`))];
    } catch {
      return []; // the flow's own output
    }
  });
  expect(deployments.map((deployment) => deployment.subscriberName).sort()).toEqual(['Billing', 'Shipping']);
  const deployed: Pick<DeployedFlow, 'subscribers'> = { subscribers: deployments.map((deployment) => ({ name: deployment.subscriberName, stackName: 'TestStack', deployment, environment: {} })) };
  const settings = new Map<string, QueueSettings>(deployments.map((deployment) => [deployment.queueUrl, { visibilityTimeoutSeconds: 180, maxReceiveCount: 5 }]));

  const derived = defaultTimeoutSeconds(deployed, settings);

  // one hop (the flow's relay to its subscribers): 5 x 180 s + 120 s; neither subscriber emits events
  expect(derived.seconds, derived.why).toBe(5 * 180 + 120);
});
