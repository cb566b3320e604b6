/**
 * A flow deployed by another pipeline (another CDK app, usually another account), as its subscribers see it:
 * `IdempotentEventFlow.fromFlowAttributes(scope, id, { topicArn })`. docs/CROSS-ACCOUNT.md.
 */
import { Arn, ArnFormat, Token } from 'aws-cdk-lib';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { markImportedFlow } from './consumer/private/flow-placement';
import type { IEventFlow, Subscriber } from './consumer/subscriber';
import type { SubscriberDefaults } from './consumer/subscriber-options';
import type { IOutboxTable } from './outbox/outbox-table';
import { giveSubscriberAlarmsAndOutput } from './private/subscriber-registration';
import { validationError } from './private/validation-error';

/** What a subscriber needs to know of a flow deployed elsewhere: {@link IdempotentEventFlow.fromFlowAttributes}. */
export interface EventFlowAttributes {
  /**
   * The ARN of the flow's topic, a literal (`topicArn` in the flow's `Operator` stack output), e.g.
   * `arn:aws:sns:eu-west-1:111111111111:Payments-EventTopic-1A2B3C4D`. Its account and Region are the flow's
   * environment. The flow must let the subscriber's account subscribe (`subscriberAccounts` on its side).
   */
  readonly topicArn: string;
}

/** The imported flow: its topic only. Subscribers of it encrypt their queues with keys of their own. */
class ImportedEventFlow extends Construct implements IEventFlow {
  public readonly topic: sns.ITopic;
  public readonly subscriberDefaults: SubscriberDefaults = {};
  private readonly registered: Subscriber[] = [];

  public constructor(scope: Construct, id: string, attributes: EventFlowAttributes) {
    super(scope, id);
    const owner = `IdempotentEventFlow.fromFlowAttributes '${id}'`;
    const topicArn = attributes.topicArn;
    if (Token.isUnresolved(topicArn)) {
      throw validationError(
        `${owner}: topicArn must be a literal ARN (its account and Region tell where the flow is), but a token was provided (${topicArn}); ` +
          'pass the topicArn of the flow\'s Operator output',
      );
    }
    const parts = Arn.split(topicArn, ArnFormat.NO_RESOURCE_NAME);
    if (!topicArn.startsWith('arn:') || parts.service !== 'sns' || !/^\d{12}$/.test(parts.account ?? '') || !parts.region || !/^[A-Za-z0-9_-]{1,256}(\.fifo)?$/.test(parts.resource)) {
      throw validationError(`${owner}: topicArn must be an SNS topic ARN (arn:<partition>:sns:<region>:<12-digit account>:<topic name>), but '${topicArn}' was provided`);
    }
    if (parts.resource.endsWith('.fifo')) {
      throw validationError(`${owner}: topicArn must name a standard topic (the flow's), but the FIFO topic '${topicArn}' was provided; an ordered relay's subscribers use OrderedSubscriber`);
    }
    this.topic = sns.Topic.fromTopicArn(this, 'Topic', topicArn);
    markImportedFlow(this);
  }

  /** Not known for an imported flow: its subscribers encrypt their queues with keys of their own. */
  public get encryptionKey(): kms.IKey {
    throw validationError(`The flow ${this.node.path} was imported (fromFlowAttributes): its key is not known here; its subscribers use keys of their own`);
  }

  /** Not known for an imported flow: a subscriber of it can not use `publishesEvents`. */
  public get outboxTable(): IOutboxTable {
    throw validationError(`The flow ${this.node.path} was imported (fromFlowAttributes): its outbox is not known here, so its subscribers can not use publishesEvents`);
  }

  public registerSubscriber(subscriber: Subscriber): void {
    const owner = `IdempotentEventFlow.fromFlowAttributes '${this.node.id}'`;
    if (subscriber.flow !== this) {
      throw validationError(`${owner}: registerSubscriber takes a subscriber created with flow: this flow, but ${subscriber.node.path} was not`);
    }
    if (this.registered.includes(subscriber)) {
      throw validationError(`${owner}: the subscriber ${subscriber.node.path} is registered already; a Subscriber created with flow registers itself`);
    }
    const namesake = this.registered.find((existing) => existing.subscriberName === subscriber.subscriberName);
    if (namesake !== undefined) {
      throw validationError(
        `${owner}: subscriberName '${subscriber.subscriberName}' of ${subscriber.node.path} is already the name of ${namesake.node.path}; ` +
          'subscribers of one flow must have different names. Set subscriberName on one of them',
      );
    }
    this.registered.push(subscriber);
    giveSubscriberAlarmsAndOutput(subscriber, { imported: true });
  }
}

/** The imported flow's construct (used by `IdempotentEventFlow.fromFlowAttributes`). */
export function importEventFlow(scope: Construct, id: string, attributes: EventFlowAttributes): IEventFlow {
  return new ImportedEventFlow(scope, id, attributes);
}
