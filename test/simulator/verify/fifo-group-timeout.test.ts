/**
 * Review rv9, V-3: the default time limit of verify's wait (simulator/verify/queue-settings.ts, defaultTimeoutSeconds)
 * covers one failing message per queue: maxReceiveCount x visibility timeout. On an ordered subscriber's FIFO queue an
 * aggregate's events are one message group: its later messages wait behind the failing head (and, once the head is
 * dead-lettered, each fails in turn with a sequence gap), so the k-th event of one aggregate reaches the dead-letter
 * queue about k x maxReceiveCount x visibility timeout after the first receive. A limit for one ended a broken ordered
 * subscriber's run "not quiet" instead of VIOLATED. The limit, derived again from the run's events once they are
 * committed, counts the largest number of them one aggregate puts on an ordered subscriber's queue.
 */
import { expect, test } from 'vitest';
import type { DeployedFlow, DeployedSubscriber } from '../../../simulator/verify/deployed-flow';
import type { RunEvent } from '../../../simulator/verify/observe';
import { defaultTimeoutSeconds, type QueueSettings } from '../../../simulator/verify/queue-settings';

function subscriber(name: string, ordered: boolean): DeployedSubscriber {
  return {
    name,
    stackName: 'App',
    environment: {},
    deployment: {
      format: 1,
      subscriberName: name,
      processingMode: 'transactional',
      ...(ordered ? { ordered: true } : {}),
      queueUrl: `https://sqs.eu-west-1.amazonaws.com/111111111111/${name}${ordered ? '.fifo' : ''}`,
      deadLetterQueueUrl: `https://sqs.eu-west-1.amazonaws.com/111111111111/${name}Dlq${ordered ? '.fifo' : ''}`,
    },
  };
}

function orderedEvent(aggregateId: string, sequence: number): RunEvent {
  const event = { id: `step-${aggregateId}-${sequence}`, type: 'StepDone', data: { orderId: aggregateId }, ordering: { aggregateId, sequence } };
  return { event, body: JSON.stringify(event), ordered: true };
}

const settingsOf = (flow: Pick<DeployedFlow, 'subscribers'>): Map<string, QueueSettings> =>
  new Map(flow.subscribers.map((item) => [item.deployment.queueUrl, { visibilityTimeoutSeconds: 180, maxReceiveCount: 5 }]));
// 3 events of order-1, 1 of order-2
const events = new Map([orderedEvent('order-1', 1), orderedEvent('order-1', 2), orderedEvent('order-1', 3), orderedEvent('order-2', 1)].map((item) => [item.event.id, item]));

test("V-3: an ordered subscriber taking 3 events of one aggregate: the derived limit covers the 3 dead-lettered one after another", () => {
  const flow = { subscribers: [subscriber('Tracking', true)] };

  const derived = defaultTimeoutSeconds(flow, settingsOf(flow), events);

  expect(derived.seconds, derived.why).toBeGreaterThanOrEqual(3 * 5 * 180 + 120);
  expect(derived.why).toMatch(/3 events of one aggregate \(order-1\) on Tracking's FIFO queue/);
});

test('V-3: a standard subscriber (no message groups) and an ordered one taking one event per aggregate keep the limit of one message', () => {
  const flow = { subscribers: [subscriber('Billing', false), subscriber('Tracking', true)] };
  const onePerAggregate = new Map([orderedEvent('order-1', 1), orderedEvent('order-2', 1)].map((item) => [item.event.id, item]));

  expect(defaultTimeoutSeconds(flow, settingsOf(flow), onePerAggregate).seconds).toBe(5 * 180 + 120);
  // the standard subscriber takes no ordered event: the ordered run events do not multiply its queue's bound
  const standardOnly = { subscribers: [subscriber('Billing', false)] };
  expect(defaultTimeoutSeconds(standardOnly, settingsOf(standardOnly), events).seconds).toBe(5 * 180 + 120);
});

test('V-3: before the run\'s events are known (no events given), the limit is that of one message, as before', () => {
  const flow = { subscribers: [subscriber('Tracking', true)] };

  expect(defaultTimeoutSeconds(flow, settingsOf(flow)).seconds).toBe(5 * 180 + 120);
});
