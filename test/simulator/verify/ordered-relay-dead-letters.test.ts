/**
 * Review v11, V11-10: an ordered relay's own dead-letter queues (its relay queue's DLQ, its pipe's DLQ) were not
 * watched: a fan-out that cannot publish left an ordered subscriber's events "none on its queue yet (in the relay,
 * ...)" until the time limit, without naming the queue that holds them, as verify does for the standard relay's
 * DLQ. An OrderedRelay has no Operator output: its queues are found among the stacks' resources by their construct
 * paths (`<relay>/RelayQueue/DeadLetterQueue`, `<relay>/PipeDeadLetterQueue`: construct ids are public API), and a
 * rise above their count before the run keeps the wait and is named.
 */
import { describe, expect, test } from 'vitest';
import type { VerifyClients } from '../../../simulator/verify/clients';
import { orderedRelayDeadLetterQueues, type DeployedFlow, type DeployedResource } from '../../../simulator/verify/deployed-flow';
import { waitUntilQuiet } from '../../../simulator/verify/settle';
import { makeQueue, queueModel } from '../aws/queue-test-kit';
import { runEvent, settleOptions, VerifyTestbed } from './verify-test-kit';

const bed = VerifyTestbed.start();
const clients = (): VerifyClients => bed.clients();
const queue = (logicalId: string, constructPath: string): DeployedResource => ({ stackName: 'Orders', logicalId, type: 'AWS::SQS::Queue', physicalId: `http://127.0.0.1:1/111111111111/Orders-${logicalId}`, constructPath });

describe("an ordered relay's dead-letter queues (review v11, V11-10)", () => {
  test('are found by their construct paths; the standard relay\'s and a subscriber\'s are not taken for them', () => {
    const resources = [
      queue('OrderedRelayQueueDeadLetterQueueA293F3E2', 'Orders/Ordered/RelayQueue/DeadLetterQueue/Resource'),
      queue('OrderedRelayQueue323FE899', 'Orders/Ordered/RelayQueue/Resource/Resource'),
      queue('OrderedPipeDeadLetterQueue6928A829', 'Orders/Ordered/PipeDeadLetterQueue/Resource'),
      queue('PaymentsRelayDeadLetterQueueF9FC1030', 'Orders/Payments/Relay/DeadLetterQueue/Resource'),
      queue('LedgerQueueDeadLetterQueue55AE17E8', 'Orders/Ledger/Queue/DeadLetterQueue/Resource'),
    ];
    expect(orderedRelayDeadLetterQueues(resources)).toEqual([
      { relay: 'Orders/Ordered', which: "relay queue's dead-letter queue", url: 'http://127.0.0.1:1/111111111111/Orders-OrderedRelayQueueDeadLetterQueueA293F3E2' },
      { relay: 'Orders/Ordered', which: "pipe's dead-letter queue", url: 'http://127.0.0.1:1/111111111111/Orders-OrderedPipeDeadLetterQueue6928A829' },
    ]);
  });

  test('one rising above its count before the run keeps verify waiting, and the wait names it', async () => {
    const { queue: subscriberQueue, deadLetters } = bed.subscriberQueues('AccountLedger');
    const pipeDeadLetters = makeQueue(queueModel(`OrderedPipeDlq${bed.queues.size}`), { clock: bed.clock, baseUrl: bed.server.endpoint });
    bed.queues.set(pipeDeadLetters.address.url, pipeDeadLetters);
    pipeDeadLetters.send({ body: JSON.stringify({ context: { condition: 'RetryAttemptsExhausted' } }), origin: { via: 'send-message' } });
    const flow: DeployedFlow = {
      stackNames: ['Orders'],
      flows: [],
      resources: [],
      orderedRelayDeadLetterQueues: [{ relay: 'Orders/Ordered', which: "pipe's dead-letter queue", url: pipeDeadLetters.address.url }],
      subscribers: [{ name: 'AccountLedger', stackName: 'Orders', environment: {}, deployment: { format: 1, subscriberName: 'AccountLedger', processingMode: 'multi-step', queueUrl: subscriberQueue.address.url, deadLetterQueueUrl: deadLetters.address.url } }],
    };
    const settle = settleOptions({}, [runEvent('e-1')], new Map([[deadLetters.address.url, 0], [pipeDeadLetters.address.url, 0]]));
    await expect(waitUntilQuiet(clients(), flow, settle)).rejects.toThrow(/ordered relay Orders\/Ordered's pipe's dead-letter queue \(1 message\(s\) since the run began/);
  });
});
