/**
 * `simulate --serve` prints the operator commands of each subscriber: for an ordered subscriber, whose subscription
 * dead-letter queue IS its FIFO dead-letter queue (OrderedSubscriber's Operator output names the one queue twice), one
 * `dlq redrive` line and the queue once in `dlq list`, not the same queue twice.
 */
import { describe, expect, test } from 'vitest';
import { servingText } from '../../simulator/cli/simulate-serve';
import type { RunServices } from '../../simulator/run/run-services';

const SQS = 'http://127.0.0.1:9324';
const DLQ = `${SQS}/000000000000/App-LedgerDeadLetterQueue.fifo`;

function services(subscriptionDeadLetterQueueUrl: string): RunServices {
  return {
    dynamoDbEndpoint: 'http://127.0.0.1:8000',
    sqsEndpoint: SQS,
    region: 'us-east-1',
    watchesApp: false,
    startAwsEndpoint: async () => 'http://127.0.0.1:4566',
    relays: [],
    subscribers: [
      {
        name: 'Ledger',
        queueUrl: `${SQS}/000000000000/App-LedgerQueue.fifo`,
        deadLetterQueueUrls: [DLQ],
        subscriptionDeadLetterQueueUrl,
        inboxTable: 'App-LedgerInbox',
        deduplicationWindowSeconds: 2592000,
        outboxTables: [],
        deployment: {
          format: 1,
          subscriberName: 'Ledger',
          ordered: true,
          processingMode: 'transactional',
          deduplicationWindowSeconds: 2592000,
          keepBlockedMessageBody: false,
          inboxTable: 'App-LedgerInbox',
          queueUrl: `${SQS}/000000000000/App-LedgerQueue.fifo`,
          deadLetterQueueUrl: DLQ,
          subscriptionDeadLetterQueueUrl,
        },
      },
    ],
    now: () => 0,
    runClockWithRealTime: () => undefined,
  } as unknown as RunServices;
}

describe('simulate --serve, an ordered subscriber', () => {
  test('its one FIFO dead-letter queue gets one dlq redrive line, and dlq list names it once', () => {
    const text = servingText(services(DLQ), 0);
    const redrives = text.split('\n').filter((line) => line.includes(' dlq redrive '));
    expect(redrives).toHaveLength(1);
    expect(redrives[0]).toContain(`--dead-letter-queue ${DLQ}`);
    expect(text).not.toContain('--subscription-dead-letter-queue');
    const list = text.split('\n').find((line) => line.includes(' dlq list '))!;
    expect(list.split(DLQ).length - 1).toBe(1);
  });

  test('a subscription dead-letter queue of its own still gets its line', () => {
    const other = `${SQS}/000000000000/App-LedgerSubscriptionDlq.fifo`;
    const redrives = servingText(services(other), 0).split('\n').filter((line) => line.includes(' dlq redrive '));
    expect(redrives).toHaveLength(2);
    expect(redrives[1]).toContain(`--subscription-dead-letter-queue ${other}`);
  });
});
