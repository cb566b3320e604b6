import { Duration } from 'aws-cdk-lib';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type { Construct } from 'constructs';
import type { ConsumerQueue } from '../consumer/consumer-queue';
import type { AlarmOptions } from '../monitoring/alarm-options';
import { ALARM_PERIOD, createThresholdAlarm } from './threshold-alarm';

/** How long before SQS deletes a dead letter of a FIFO dead-letter queue its `DeadLetterExpiring` alarm fires, at least. */
const FIFO_DEAD_LETTER_EXPIRY_WARNING = Duration.days(2);

/** What an ordered subscriber's `DeadLetterExpiring` tells on-call to do. */
export const SUBSCRIBER_DEAD_LETTER_ACTION =
  '`idempotent-event-flow dlq redrive` (or `fence redrive`) sends what the fences admit and deletes proven duplicates; a letter it leaves is yours to decide (docs/ORDERED-DELIVERY.md, "A dead letter about to expire").';

/** What the ordered relay's `RelayDeadLetterExpiring` tells on-call to do: its letters are events no subscriber received. */
export const RELAY_DEAD_LETTER_ACTION =
  'a relay dead letter is an event the fan-out never published, so no subscriber has it, and `dlq redrive` / `fence redrive` do not handle it. ' +
  'For each ordered subscriber, `idempotent-event-flow fence replay` its aggregate from the outbox history; once the history item expired, send the letter\'s body back to the relay queue ' +
  '(its aggregate as the message group, after the aggregate\'s earlier letters), then delete it (docs/ORDERED-DELIVERY.md, "A dead letter about to expire").';

/**
 * The `DeadLetterExpiring` alarm of a FIFO queue's dead-letter queue (the ordered path's): its oldest message has
 * waited the queue's retention less 2 days (at least a minute). A FIFO queue counts a moved message's retention from
 * the move (SQS developer guide, setting-up-dead-letter-queue-retention.html), as the metric does, so unlike a standard
 * queue's the threshold does not subtract the source queue's retention. `action` is what its description tells on-call
 * to do (a subscriber's letters and the relay's are handled differently).
 */
export function deadLetterExpiringAlarm(scope: Construct, id: string, queue: ConsumerQueue, owner: string, options: AlarmOptions, action: string = SUBSCRIBER_DEAD_LETTER_ACTION): cloudwatch.Alarm {
  const retention = queue.deadLetterRetentionPeriod;
  const after = Duration.seconds(Math.max(60, retention.toSeconds() - FIFO_DEAD_LETTER_EXPIRY_WARNING.toSeconds()));
  return createThresholdAlarm(
    scope,
    id,
    queue.deadLetterQueue.metricApproximateAgeOfOldestMessage({ period: ALARM_PERIOD, statistic: 'Maximum' }),
    after.toSeconds(),
    `${owner}: a dead letter has waited ${after.toHumanString()} in its FIFO dead-letter queue: SQS deletes it within ` +
      `${FIFO_DEAD_LETTER_EXPIRY_WARNING.toHumanString()} (its retention is ${retention.toHumanString()}), and once the outbox's history item of the event ` +
      `expired too it is the event's only copy. Act before then: ${action}`,
    options,
  );
}
