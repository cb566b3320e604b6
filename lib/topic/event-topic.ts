import { Annotations, Lazy, Names, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { allowSnsDeliveriesWithKey, denyTopicAccessWithoutTls } from '../private/topic-security';
import { validateStringPattern } from '../private/validate-props';
import { grantKeyViaService, KMS_SEND_MESSAGE_ACTIONS } from '../private/kms-actions';
import { libraryGrantOrResource } from '../private/library-statements';

/** SNS standard topic names: 1 to 256 of `A-Z a-z 0-9 - _`. */
const TOPIC_NAME_PATTERN = /^[A-Za-z0-9_-]{1,256}$/;


/** Properties of an {@link EventTopic}. */
export interface EventTopicProps {
  /**
   * Name of the topic.
   *
   * `TopicName` is create-only, and CloudFormation creates a replacement before it deletes the old topic. This
   * standard topic is replaced only when its logical id changes (the construct moved or was renamed); a name of your
   * own must then change too, or the update fails.
   *
   * @default - a name derived from the construct path, so the key policy can name the topic's ARN without a
   * circular reference; a new logical id comes with a new path, so with a new name
   */
  readonly topicName?: string;

  /**
   * Display name of the topic (shown for SMS and email subscriptions).
   *
   * @default - no display name
   */
  readonly displayName?: string;

  /**
   * Customer-managed KMS key to encrypt the topic with. Share it with subscriber queues so SNS can deliver to them.
   *
   * If the key is defined in this app, its key policy gets the statement that lets SNS deliver to queues encrypted
   * with it. An imported key's policy can not be changed: add that statement yourself (a warning says so).
   *
   * @default - a key is created, with rotation on, retained on removal per `removalPolicy`
   */
  readonly encryptionKey?: kms.IKey;

  /**
   * What happens to the KMS key the topic creates when it is removed from the stack. The topic itself holds no
   * messages and is always deleted.
   *
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
}

/**
 * The SNS topic events are published to: a standard topic (EventBridge Pipes can not target FIFO topics), encrypted
 * with a customer-managed KMS key, and accepting only TLS requests.
 *
 * The key policy lets SNS use the key for this topic's deliveries, so subscriber queues can be encrypted with
 * {@link EventTopic.encryptionKey} too.
 */
export class EventTopic extends Construct {
  /** The SNS topic. */
  public readonly topic: sns.ITopic;

  /** ARN of the topic. */
  public readonly topicArn: string;

  /** Name of the topic. */
  public readonly topicName: string;

  /** The KMS key the topic is encrypted with; SNS may use it to deliver to queues encrypted with it. */
  public readonly encryptionKey: kms.IKey;

  /** Role ARNs allowed to publish once {@link restrictPublishersTo} was called; undefined: no restriction. */
  private allowedPublisherArns?: string[];

  public constructor(scope: Construct, id: string, props: EventTopicProps = {}) {
    super(scope, id);
    validateStringPattern(`EventTopic '${id}'`, 'topicName', props.topicName, TOPIC_NAME_PATTERN, '1 to 256 of A-Z, a-z, 0-9, - and _');

    // The key policy names this topic's ARN while the topic names the key: build the ARN from a known name to avoid a
    // circular reference between the two resources.
    const topicName = props.topicName ?? Names.uniqueResourceName(this, { maxLength: 256, separator: '-' });
    const topicArn = Stack.of(this).formatArn({ service: 'sns', resource: topicName });

    this.encryptionKey =
      props.encryptionKey ??
      new kms.Key(this, 'Key', {
        description: `Encrypts the event topic ${topicName} and the queues subscribed to it`,
        enableKeyRotation: true,
        removalPolicy: props.removalPolicy ?? RemovalPolicy.RETAIN,
      });

    // SNS encrypts each delivery to an SSE-KMS queue with the queue's key, so it needs this key when subscriber queues
    // share it; scoped to deliveries from this topic.
    allowSnsDeliveriesWithKey(this, this.encryptionKey, topicArn, 'AllowSnsToDeliverToQueuesEncryptedWithThisKey', 'idempotent-event-flow:eventTopicKeyPolicy');

    const topic = new sns.Topic(this, 'Resource', {
      topicName,
      displayName: props.displayName,
      masterKey: this.encryptionKey,
    });
    denyTopicAccessWithoutTls(topic);
    this.topic = topic;
    this.topicArn = topic.topicArn;
    this.topicName = topic.topicName;
  }

  /**
   * Denies `sns:Publish` on the topic to every principal but `roles` (and the roles later given
   * {@link grantPublish}): a topic policy statement with `ArnNotEquals` `aws:PrincipalArn`. Anyone else in the account
   * with a broad `sns:Publish` can then not inject events that consumers would apply exactly once.
   * `IdempotentEventFlow` calls it with its relay's role unless `restrictTopicPublishers` is false.
   *
   * @param roles the roles that may publish, e.g. the outbox relay's
   */
  public restrictPublishersTo(...roles: iam.IRole[]): void {
    if (this.allowedPublisherArns === undefined) {
      const allowed: string[] = [];
      this.allowedPublisherArns = allowed;
      this.topic.addToResourcePolicy(
        new iam.PolicyStatement({
          sid: 'DenyPublishingToAllButTheRelay',
          effect: iam.Effect.DENY,
          principals: [new iam.AnyPrincipal()],
          actions: ['sns:Publish'],
          resources: [this.topicArn],
          conditions: { ArnNotEquals: { 'aws:PrincipalArn': Lazy.list({ produce: () => allowed }) } },
        }),
      );
    }
    this.allowedPublisherArns.push(...roles.map((role) => role.roleArn));
  }

  /**
   * Grants `sns:Publish` on the topic, and `kms:Decrypt` and `kms:GenerateDataKey` on its key. When publishers are
   * restricted ({@link restrictPublishersTo}), a role grantee is added to the allowed publishers; another grantee (a
   * user, an account) draws a warning, since the topic policy denies it.
   *
   * Only for a publisher outside the app (a system that is not part of the CDK app, publishing events whose ids stay the
   * same when it retries): a function of the app emits its events through the outbox, in the transaction of its change
   * (`grantAppendEvents`), and `idempotent-event-flow simulate` fails a run in which one publishes to the topic itself.
   *
   * @param grantee the publisher
   */
  public grantPublish(grantee: iam.IGrantable): iam.Grant {
    if (this.allowedPublisherArns !== undefined) {
      const principal = grantee.grantPrincipal;
      if (principal instanceof iam.Role || (principal as Partial<iam.IRole>).roleArn !== undefined) {
        this.allowedPublisherArns.push((principal as iam.IRole).roleArn);
      } else {
        Annotations.of(this).addWarningV2(
          'idempotent-event-flow:publisherNotAllowed',
          'grantPublish was given a principal that is not a role, but the topic denies sns:Publish to every principal but ' +
            'its allowed roles (restrictPublishersTo): publish through a role, or create the flow with restrictTopicPublishers: false.',
        );
      }
    }
    const grant = libraryGrantOrResource('grantPublish', {
      grantee,
      actions: ['sns:Publish'],
      resourceArns: [this.topicArn],
      resource: this.topic,
    });
    return grant.combine(grantKeyViaService('grantPublish', this.encryptionKey, grantee, 'sns', KMS_SEND_MESSAGE_ACTIONS)!);
  }

  /**
   * Messages SNS failed to deliver (after its delivery retries).
   *
   * @default - sum over 5 minutes
   */
  public metricNumberOfNotificationsFailed(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.topic.metricNumberOfNotificationsFailed(props);
  }

  /**
   * Messages published to the topic.
   *
   * @default - sum over 5 minutes
   */
  public metricNumberOfMessagesPublished(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.topic.metricNumberOfMessagesPublished(props);
  }
}
