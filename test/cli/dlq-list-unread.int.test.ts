/**
 * New-user trial nu9: right after a `dlq show` (which hides what it reads for 120 s), `dlq list` said `0 messages`
 * while SQS's GetQueueAttributes said ApproximateNumberOfMessagesNotVisible 1: a dead letter in flight was reported as
 * none, and an on-call engineer told the queue was empty. And (review rv9, V-5, operator side) a FIFO dead-letter queue
 * holding more dead letters of one message group than a receive returns was listed as 10 with `truncated: false`. The
 * list compares what it read with the queue's own counts and says what it could not read, and why.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { SimulatedQueue } from '../../simulator/aws/queue';
import { startSqsEndpoint } from '../../simulator/aws/sqs-endpoint';
import { frozenClock, makeQueue, queueModel } from '../simulator/aws/queue-test-kit';
import { cli, startOperatorServices, type OperatorServices } from './operator-services';

let services: OperatorServices;

beforeAll(async () => {
  services = await startOperatorServices('DlqUnread');
});

afterAll(async () => {
  await services.endpoint.stop();
});

describe('dlq list, messages it could not read', () => {
  test('a dead letter another reader holds in flight is said, not listed as 0 messages', async () => {
    const dlq = services.deadLetterQueue;
    dlq.send({ body: JSON.stringify({ id: 'evt-held' }), origin: { via: 'send-message', eventId: 'evt-held' } });
    // another reader (an earlier dlq show, a verify run) holds it for 120 s
    expect(dlq.receive(1, 120)).toHaveLength(1);

    const text = await cli(services, 'dlq', 'list', '--dead-letter-queue', dlq.address.url);
    const asJson = await cli(services, 'dlq', 'list', '--dead-letter-queue', dlq.address.url, '--json');

    expect(text.stdout).toMatch(/0 message\(s\) read; 1 more not read: 1 in flight/);
    expect(JSON.parse(asJson.stdout)[0]).toMatchObject({ messages: 0, notRead: { inFlight: 1, visible: 0, delayed: 0 } });
  });

  test("a FIFO dead-letter queue's messages behind a group's messages read are said (readable once those are redriven)", async () => {
    const clock = frozenClock();
    let fifo: SimulatedQueue | undefined;
    const endpoint = await startSqsEndpoint({ resolveQueue: (url) => (url === fifo?.address.url ? fifo : undefined) });
    fifo = makeQueue(queueModel('DlqUnreadOrdered.fifo', { fifo: true, contentBasedDeduplication: true }), { clock, baseUrl: endpoint.endpoint });
    for (let sequence = 1; sequence <= 12; sequence += 1) fifo.send({ body: JSON.stringify({ id: `step-${sequence}` }), messageGroupId: 'order-1', origin: { via: 'send-message', eventId: `step-${sequence}` } });

    const text = await cli({ clock, endpoint }, 'dlq', 'list', '--dead-letter-queue', fifo.address.url).finally(() => endpoint.stop());

    expect(text.stdout).toMatch(/10 message\(s\) read; 2 more not read: 2 behind the FIFO message group\(s\) read here/);
  });
});
