/**
 * Where a subscriber stands to its flow: in the flow's environment or another (account, Region), and whether the flow
 * was imported (`IdempotentEventFlow.fromFlowAttributes`, a flow deployed by another pipeline). A subscriber of a flow
 * in another environment, or of an imported flow, encrypts its queues with a key of its own (the flow's key can not be
 * used from another account or Region, and an imported flow's key policy can not be changed here), and the flow's
 * side reads what it must grant from here. docs/CROSS-ACCOUNT.md.
 */
import { Stack } from 'aws-cdk-lib';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type { IConstruct } from 'constructs';
import { type AwsEnvironment, compareEnvironments, type EnvironmentCrossing, isCrossEnvironment } from '../../private/environments';

/** How a subscriber was placed, as the flow's side needs it when it registers the subscriber. */
export interface FlowPlacement extends EnvironmentCrossing {
  /** The flow's environment (its topic's). */
  readonly flowEnvironment: AwsEnvironment;
  /** The subscriber's environment (its stack's). */
  readonly subscriberEnvironment: AwsEnvironment;
  /** Whether the account or the Region differs. */
  readonly crossEnvironment: boolean;
  /** Whether the subscriber has a queue key of its own: another environment, or an imported flow. */
  readonly ownKey: boolean;
  /** The subscriber's own `alarmActions`, if given. */
  readonly alarmActions?: cloudwatch.IAlarmAction[];
}

const importedFlows = new WeakSet<IConstruct>();
const placements = new WeakMap<IConstruct, FlowPlacement>();

/** Marks `flow` as imported (fromFlowAttributes): its key and outbox are not known here. */
export function markImportedFlow(flow: IConstruct): void {
  importedFlows.add(flow);
}

/** Whether `flow` was imported with fromFlowAttributes. */
export function isImportedFlow(flow: IConstruct): boolean {
  return importedFlows.has(flow);
}

/** The environment of `topic`: its stack's for a topic of this app, the ARN's for an imported one. */
export function topicEnvironment(topic: sns.ITopic): AwsEnvironment {
  return { account: topic.env.account, region: topic.env.region };
}

/**
 * Where `subscriber` stands to the flow whose topic is `topic`; fails (naming both environments) when one side's
 * environment is known and the other's not.
 */
export function placeSubscriber(owner: string, subscriber: IConstruct, flow: IConstruct, topic: sns.ITopic, alarmActions?: cloudwatch.IAlarmAction[]): FlowPlacement {
  const stack = Stack.of(subscriber);
  const subscriberEnvironment = { account: stack.account, region: stack.region };
  const flowEnvironment = topicEnvironment(topic);
  const flowWhat = isImportedFlow(flow) ? `the imported flow's topic ${topic.topicArn}` : `the flow ${flow.node.path}`;
  const crossing = compareEnvironments(owner, flowWhat, flowEnvironment, stack.stackName, subscriberEnvironment);
  const crossEnvironment = isCrossEnvironment(crossing);
  return { ...crossing, flowEnvironment, subscriberEnvironment, crossEnvironment, ownKey: crossEnvironment || isImportedFlow(flow), alarmActions };
}

/** Records where `subscriber` was placed, for its flow's `registerSubscriber`. */
export function recordPlacement(subscriber: IConstruct, placement: FlowPlacement): void {
  placements.set(subscriber, placement);
}

/** Where `subscriber` was placed; undefined for a subscriber created without a flow. */
export function placementOf(subscriber: IConstruct): FlowPlacement | undefined {
  return placements.get(subscriber);
}
