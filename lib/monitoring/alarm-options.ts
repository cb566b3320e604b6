import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';

/** Options every alarm construct of this library accepts. */
export interface AlarmOptions {
  /**
   * Actions to run when an alarm fires and when it returns to OK, e.g. `new SnsAction(opsTopic)`.
   *
   * @default - the alarms are created without actions; add some with `alarm.addAlarmAction()`
   */
  readonly alarmActions?: cloudwatch.IAlarmAction[];
}
