import { Duration } from 'aws-cdk-lib';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type { Construct } from 'constructs';
import type { ConsumerQueue } from '../consumer/consumer-queue';
import type { AlarmOptions } from '../monitoring/alarm-options';
import { ALARM_PERIOD, createThresholdAlarm } from './threshold-alarm';

/** How long before SQS deletes a dead letter of a FIFO dead-letter queue its `DeadLetterExpiring` alarm fires, at least. */
const FIFO_DEAD_LETTER_EXPIRY_WARNING = Duration.days(2);

/**
 * The `DeadLetterExpiring` alarm of a FIFO queue's dead-letter queue (the ordered path's): its oldest message has
 * waited the queue's retention less 2 days (at least a minute). A FIFO queue counts a moved message's retention from
 * the move (SQS developer guide, setting-up-dead-letter-queue-retention.html), as the metric does, so unlike a standard
 * queue's the threshold does not subtract the source queue's retention.
 */
export function deadLetterExpiringAlarm(scope: Construct, id: string, queue: ConsumerQueue, owner: string, options: AlarmOptions): cloudwatch.Alarm {
  const retention = queue.deadLetterRetentionPeriod;
  const after = Duration.seconds(Math.max(60, retention.toSeconds() - FIFO_DEAD_LETTER_EXPIRY_WARNING.toSeconds()));
  return createThresholdAlarm(
    scope,
    id,
    queue.deadLetterQueue.metricApproximateAgeOfOldestMessage({ period: ALARM_PERIOD, statistic: 'Maximum' }),
    after.toSeconds(),
    `${owner}: a dead letter has waited ${after.toHumanString()} in its FIFO dead-letter queue: SQS deletes it within ` +
      `${FIFO_DEAD_LETTER_EXPIRY_WARNING.toHumanString()} (its retention is ${retention.toHumanString()}), and once the outbox's history item of the event ` +
      'expired too it is the event\'s only copy. Act before then: `idempotent-event-flow dlq redrive` (or `fence redrive`) sends what the fences admit and ' +
      'deletes proven duplicates; a letter it leaves is yours to decide (docs/ORDERED-DELIVERY.md, "A dead letter about to expire").',
    options,
  );
}
