import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { Construct } from 'constructs';
import type { AlarmOptions } from '../monitoring/alarm-options';

/** Creates an alarm that fires when `metric` reaches `threshold` within one period, and wires the actions. */
export function createThresholdAlarm(
  scope: Construct,
  id: string,
  metric: cloudwatch.IMetric,
  threshold: number,
  description: string,
  options: AlarmOptions,
): cloudwatch.Alarm {
  const alarm = new cloudwatch.Alarm(scope, id, {
    metric,
    threshold,
    evaluationPeriods: 1,
    datapointsToAlarm: 1,
    comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    // No data means no messages, errors or failed executions: nothing is wrong.
    treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    alarmDescription: description,
  });
  for (const action of options.alarmActions ?? []) {
    alarm.addAlarmAction(action);
    alarm.addOkAction(action);
  }
  return alarm;
}

/** Alarm period used for every alarm of this library: short, so a dead-lettered message is noticed within minutes. */
export const ALARM_PERIOD = Duration.minutes(1);
