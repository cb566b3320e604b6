/**
 * What registering a subscriber on a flow gives it in its own stack, for `IdempotentEventFlow` and for a flow imported
 * with `fromFlowAttributes` alike: its alarms and its `Operator` output. For a subscriber in another account or Region
 * than the flow, the flow's alarm actions and outbox table are resources of another environment, which CDK can not
 * refer to: the subscriber's own `alarmActions` are used (a warning when there are none), and the output names the
 * outbox only when its name is a literal.
 */
import { Annotations, CfnOutput, type Duration, Token } from 'aws-cdk-lib';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { placementOf } from '../consumer/private/flow-placement';
import { subscriberOperatorOutputValue } from '../consumer/private/subscriber-operator-output';
import { ProcessingMode } from '../consumer/processing-mode';
import type { Subscriber } from '../consumer/subscriber';
import { SubscriberAlarms } from '../monitoring/subscriber-alarms';
import { describeEnvironment } from './environments';

/** What the flow passes on to the subscriber's alarms and output. */
export interface RegistrationDefaults {
  readonly alarmActions?: cloudwatch.IAlarmAction[];
  readonly maxMessageAge?: Duration;
  readonly maxEndToEndLatency?: Duration;
  /** Whether the flow was imported (fromFlowAttributes): its subscribers' alarms have only their own actions. */
  readonly imported?: boolean;
  /** The flow's outbox table, for `replay`; none for an imported flow. */
  readonly outboxTable?: dynamodb.ITable;
  /** The attribute its TTL reads (the output names it, a literal, wherever the subscriber is); none for an imported flow. */
  readonly outboxTimeToLiveAttribute?: string;
}

/** Creates the subscriber's `Alarms` and `Operator` output in its own stack; returns the alarms. */
export function giveSubscriberAlarmsAndOutput(subscriber: Subscriber, defaults: RegistrationDefaults): SubscriberAlarms {
  const placement = placementOf(subscriber);
  const remote = placement?.crossEnvironment === true;
  const alarmActions = placement?.alarmActions ?? (remote ? undefined : defaults.alarmActions);
  if ((remote || defaults.imported === true) && (alarmActions ?? []).length === 0) {
    const where = remote
      ? `The subscriber is in ${describeEnvironment(placement!.subscriberEnvironment)}, its flow in ${describeEnvironment(placement!.flowEnvironment)}: ` +
        "the flow's alarmActions can not be used here"
      : 'The subscriber\'s flow was imported (fromFlowAttributes): it has no alarmActions to lend';
    Annotations.of(subscriber).addWarningV2(
      'idempotent-event-flow:subscriberNoAlarmActions',
      `${where}, so the subscriber's alarms notify nobody. Pass alarmActions (of the subscriber's environment) to the Subscriber.`,
    );
  }
  const alarms = new SubscriberAlarms(subscriber, 'Alarms', {
    subscriber,
    alarmActions,
    maxMessageAge: defaults.maxMessageAge,
    maxEndToEndLatency: defaults.maxEndToEndLatency,
  });
  const outbox = defaults.outboxTable;
  const nameable = outbox !== undefined && (!remote || !Token.isUnresolved(outbox.tableName));
  new CfnOutput(subscriber, 'Operator', {
    description:
      // an aggregate subscriber keeps no inbox table: its example is a command it can use
      subscriber.processingMode === ProcessingMode.AGGREGATE
        ? `What operators of subscriber ${subscriber.subscriberName} need, e.g. for idempotent-event-flow dlq redrive --subscriber-output <this value>`
        : `What operators of subscriber ${subscriber.subscriberName} need, e.g. for idempotent-event-flow blocked list ` +
          `--table <inboxTable> --subscriber ${subscriber.subscriberName}`,
    value: subscriberOperatorOutputValue(subscriber, nameable ? outbox : undefined, defaults.outboxTimeToLiveAttribute),
  });
  return alarms;
}
