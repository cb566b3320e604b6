/**
 * The ordered fan-out: each relayed event published to the SNS FIFO topic with its aggregate as the message group and
 * its id as the deduplication id, in order; a failed publish stops its group for the rest of the batch. SNS has no
 * local server here, so the publisher is a recording fake (it only records commands and fails the ones it is told to).
 */
import type { PublishCommand } from '@aws-sdk/client-sns';
import { describe, expect, test } from 'vitest';
import { createLogger } from '../../../lambda/logger';
import { createOrderedFanOut } from '../../../lambda/ordered/ordered-fan-out';
import { sequenceText } from '../../../lambda/contract/ordered-wire-format';
import { envelopeObject } from '../helpers';

const TOPIC = 'arn:aws:sns:eu-west-1:111122223333:orders.fifo';

function ordered(aggregate: string, sequence: number, id: string): string {
  return JSON.stringify(envelopeObject({ id, partitionkey: aggregate, sequence: sequenceText(sequence) }));
}

function record(body: string, group: string, messageId: string) {
  return { messageId, body, attributes: { ApproximateReceiveCount: '1', MessageGroupId: group } };
}

describe('createOrderedFanOut', () => {
  test('publishes in order with group = aggregate and deduplication id = event id; the body is the envelope (also when the relay double-encoded it)', async () => {
    const sent: PublishCommand['input'][] = [];
    const handler = createOrderedFanOut({ topicArn: TOPIC, client: { send: async (command) => void sent.push(command.input) }, logger: createLogger({ sink: () => undefined }) });
    const first = ordered('order-1', 1, 'e1');
    const response = await handler({ Records: [record(first, 'order-1', 'm1'), record(JSON.stringify(ordered('order-1', 2, 'e2')), 'order-1', 'm2')] });
    expect(response.batchItemFailures).toEqual([]);
    expect(sent.map(({ MessageGroupId, MessageDeduplicationId, TopicArn }) => ({ MessageGroupId, MessageDeduplicationId, TopicArn }))).toEqual([
      { MessageGroupId: 'order-1', MessageDeduplicationId: 'e1', TopicArn: TOPIC },
      { MessageGroupId: 'order-1', MessageDeduplicationId: 'e2', TopicArn: TOPIC },
    ]);
    expect(sent[0]?.Message).toBe(first);
    expect(JSON.parse(sent[1]?.Message ?? '')).toMatchObject({ id: 'e2', sequence: sequenceText(2) });
  });

  test('a failed publish fails its message and skips the rest of its group; other groups go on', async () => {
    const sent: string[] = [];
    const handler = createOrderedFanOut({
      topicArn: TOPIC,
      client: {
        send: async (command) => {
          if (command.input.MessageDeduplicationId === 'a1') throw new Error('throttled');
          sent.push(command.input.MessageDeduplicationId as string);
        },
      },
      logger: createLogger({ sink: () => undefined }),
    });
    const response = await handler({
      Records: [record(ordered('a', 1, 'a1'), 'a', 'm1'), record(ordered('b', 1, 'b1'), 'b', 'm2'), record(ordered('a', 2, 'a2'), 'a', 'm3')],
    });
    expect(response.batchItemFailures.map((failure) => failure.itemIdentifier)).toEqual(['m1', 'm3']);
    expect(sent).toEqual(['b1']);
  });
});
