import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { Construct } from 'constructs';
import { OutboxRelay } from '../outbox/outbox-relay';
import { ALARM_PERIOD, createThresholdAlarm } from '../private/threshold-alarm';
import { AlarmOptions } from './alarm-options';

/** Properties of {@link RelayAlarms}. */
export interface RelayAlarmsProps extends AlarmOptions {
  /** The relay to watch. */
  readonly relay: OutboxRelay;
}

/**
 * Alarms that make a stuck or failing relay visible, so no outbox event is lost silently:
 * - `DeadLetters`: the pipe's dead-letter queue holds a message (an event the pipe gave up on);
 * - `ExecutionFailed`: the pipe had a failed execution (it retries, but something is wrong: IAM, KMS, the topic).
 */
export class RelayAlarms extends Construct {
  /** Fires as soon as the pipe's dead-letter queue holds a message. */
  public readonly deadLetterAlarm: cloudwatch.Alarm;
  /** Fires when a pipe execution failed. */
  public readonly executionFailedAlarm: cloudwatch.Alarm;
  /** Every alarm of this construct. */
  public readonly alarms: cloudwatch.IAlarm[];

  public constructor(scope: Construct, id: string, props: RelayAlarmsProps) {
    super(scope, id);
    const relayPath = props.relay.node.path;
    this.deadLetterAlarm = createThresholdAlarm(
      this,
      'DeadLetters',
      props.relay.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: ALARM_PERIOD, statistic: 'Maximum' }),
      1,
      `Outbox relay ${relayPath}: the pipe dead-letter queue holds events the pipe gave up on. Inspect and replay them.`,
      props,
    );
    this.executionFailedAlarm = createThresholdAlarm(
      this,
      'ExecutionFailed',
      props.relay.metricExecutionFailed({ period: ALARM_PERIOD, statistic: 'Sum' }),
      1,
      `Outbox relay ${relayPath}: a pipe execution failed. Check the pipe's log group and its state.`,
      props,
    );
    this.alarms = [this.deadLetterAlarm, this.executionFailedAlarm];
  }
}
