/**
 * Under a seeded scheduler, an environment's SNS request waits at the endpoint for its forward step, and its answer
 * for its reply step, as its SQS and DynamoDB requests do: a publish reaches the topic (and so the subscribed queues,
 * their order and their message ids) in the order the seed forwards it. Before, the endpoint published each request
 * when it arrived: two fan-out environments of an ordered relay publishing in one turn reached the FIFO topic in
 * whichever order their connections delivered them, and two runs of one seed of a four-stack app at --concurrency 4
 * gave the ordered subscriber different batches from the same turn on (n2/n3 of the d10 traces: 15, 19 and 19 rounds).
 */
import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { LoopbackServer } from '../../../simulator/aws/loopback-server';
import { startSnsEndpoint } from '../../../simulator/aws/sns-endpoint';
import { SqsSenders } from '../../../simulator/aws/sqs-senders';
import { SimulatedTopic } from '../../../simulator/aws/topic';
import { FaultPlan, NO_FAULTS } from '../../../simulator/faults/fault-plan';
import type { TopicModel } from '../../../simulator/model/flow-model';
import type { RequestScheduling, ScheduledRequest } from '../../../simulator/schedule/schedule-types';
import { frozenClock, makeQueue, queueModel } from './queue-test-kit';

const TOPIC_ARN = 'arn:aws:sns:eu-west-1:000000000000:orders';
const topicModel: TopicModel = { key: 'Stack/Topic', stackName: 'Stack', logicalId: 'Topic', fifo: false, maximumMessageSize: 262_144 };
const silentLogger = { trace: () => {}, debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

/** A request held by the test's scheduling: the test lets it go, and lets its answer go. */
interface Held {
  readonly environment: string;
  readonly operation: string;
  forward(): void;
  reply(): void;
  answered: boolean;
}

describe('the SNS endpoint under a seeded scheduler', () => {
  const clock = frozenClock();
  const queue = makeQueue(queueModel('Plain'), { clock });
  const topic = new SimulatedTopic({
    model: topicModel,
    arn: TOPIC_ARN,
    subscriptions: [
      {
        model: { key: 'Stack/Sub', stackName: 'Stack', logicalId: 'Sub', topic: topicModel.key, queue: queue.model.key, rawMessageDelivery: true, filterPolicyScope: 'MessageAttributes' },
        queue,
      },
    ],
    faults: new FaultPlan('s', NO_FAULTS),
    clock,
    matches: () => true,
  });
  const senders = new SqsSenders();
  const held: Held[] = [];
  const scheduling = (environment: string): RequestScheduling => ({
    tokenNamespace: 'test',
    arrive(operation: string): ScheduledRequest {
      let forward!: () => void;
      const forwardTurn = new Promise<void>((resolve) => (forward = resolve));
      let reply!: () => void;
      const replyGate = new Promise<void>((resolve) => (reply = resolve));
      const entry: Held = { environment, operation, forward, reply, answered: false };
      held.push(entry);
      return { forwardTurn, dispatched: () => undefined, replyTurn: () => replyGate, answered: () => void (entry.answered = true), ended: () => undefined };
    },
  });
  let endpoint: LoopbackServer;
  const clients: SNSClient[] = [];
  const clientOf = (path: string): SNSClient => {
    const client = new SNSClient({ endpoint: `${endpoint.endpoint}${path}`, region: 'eu-west-1', credentials: { accessKeyId: 'k', secretAccessKey: 's' }, maxAttempts: 1, logger: silentLogger });
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    endpoint = await startSnsEndpoint({ resolveTopic: (arn) => (arn === TOPIC_ARN ? topic : undefined), senders });
  });
  afterAll(async () => {
    for (const client of clients) client.destroy();
    await endpoint.stop();
  });

  it('publishes an environment\'s request at its forward step and answers it at its reply step, in the order forwarded', async () => {
    const first = clientOf(senders.register('Stack/FanOut', 'FanOut', scheduling('FanOut#1')).path);
    const second = clientOf(senders.register('Stack/FanOut', 'FanOut', scheduling('FanOut#2')).path);
    let answers: string[] = [];
    const publishedByFirst = first.send(new PublishCommand({ TopicArn: TOPIC_ARN, Message: 'from #1' })).then(() => void answers.push('#1'));
    const publishedBySecond = second.send(new PublishCommand({ TopicArn: TOPIC_ARN, Message: 'from #2' })).then(() => void answers.push('#2'));

    // both requests are held at the endpoint: nothing reached the topic
    await vi.waitFor(() => expect(held.map(({ environment, operation }) => `${environment} ${operation}`).sort()).toEqual(['FanOut#1 SNS.Publish', 'FanOut#2 SNS.Publish']));
    expect(queue.counts().visible).toBe(0);

    // the scheduler forwards #2 first: #2's message reaches the queue, and its answer waits for its reply step
    const [one, two] = ['FanOut#1', 'FanOut#2'].map((environment) => held.find((request) => request.environment === environment)!);
    two!.forward();
    await vi.waitFor(() => expect(queue.counts().visible).toBe(1));
    expect(answers).toEqual([]);
    two!.reply();
    await publishedBySecond;
    expect(two!.answered).toBe(true);
    one!.forward();
    one!.reply();
    await publishedByFirst;
    answers = [...answers];
    expect(answers).toEqual(['#2', '#1']);
    expect(queue.receive(10).map((message) => message.body)).toEqual(['from #2', 'from #1']);
  });

  it('answers a request of no environment (an operator command through the served endpoint) at once', async () => {
    const client = clientOf('');
    const before = held.length;
    await client.send(new PublishCommand({ TopicArn: TOPIC_ARN, Message: 'unscheduled' }));
    expect(held.length).toBe(before);
  });
});
