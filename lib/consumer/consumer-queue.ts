import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { CONSUMER_DEFAULTS, minimumVisibilityTimeout } from './private/defaults';
import { warnOfFewReceives } from './private/few-receives-warning';
import { validateQueueOptions } from './private/validate-consumer-props';

/** Properties of a {@link ConsumerQueue}. */
export interface ConsumerQueueProps {
  /**
   * How many times a message is received before SQS moves it to the dead-letter queue.
   *
   * Every receive that ends without the consumer acknowledging the message counts, including a batch item
   * failure and a visibility timeout that expires while the function is still running. Between 1 and 1000.
   *
   * @default 5
   */
  readonly maxReceiveCount?: number;

  /**
   * Key that encrypts both queues.
   *
   * Pass the topic's customer-managed key: SNS can deliver to a KMS-encrypted queue only when the key policy
   * lets `sns.amazonaws.com` use the key. Both queues are always encrypted at rest.
   *
   * @default - SQS-managed server-side encryption (SSE-SQS)
   */
  readonly encryptionKey?: kms.IKey;

  /**
   * How long a received message stays invisible to other consumers.
   *
   * Set it to at least 6 times the consuming function's timeout so that Lambda can retry a throttled batch
   * before the message becomes visible again. Between 0 seconds and 12 hours.
   *
   * @default Duration.minutes(3) (6 x the default function timeout of 30 seconds)
   */
  readonly visibilityTimeout?: Duration;

  /**
   * How long the queue keeps a message that has not been consumed.
   *
   * Between 1 minute and 14 days.
   *
   * @default Duration.days(4)
   */
  readonly retentionPeriod?: Duration;

  /**
   * How long the dead-letter queue keeps a message.
   *
   * A standard queue's dead-letter queue keeps the message's original enqueue timestamp, so this must be at
   * least `retentionPeriod`, or dead-lettered messages expire early. Between 1 minute and 14 days.
   *
   * @default Duration.days(14)
   */
  readonly deadLetterRetentionPeriod?: Duration;

  /**
   * What happens to both queues when they are removed from the stack.
   *
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;

  /**
   * Whether both queues are SQS FIFO queues (the ordered path's: `OrderedRelay`'s relay queue and each
   * `OrderedSubscriber`'s queue). A FIFO queue hands out each message group's messages in order, one at a time, and
   * deduplicates by the deduplication id each sender gives (content-based deduplication stays off). A FIFO queue's
   * dead-letter queue must be FIFO too, and SNS delivers to a FIFO queue only from a FIFO topic.
   *
   * @default false
   */
  readonly fifo?: boolean;
}

/**
 * An encrypted, TLS-only SQS queue (standard, or FIFO with `fifo`) with its dead-letter queue.
 *
 * A message that has been received `maxReceiveCount` times without being deleted moves to the dead-letter
 * queue, where it waits for inspection and redrive.
 */
export class ConsumerQueue extends Construct {
  /** The queue the consumer reads from. */
  public readonly queue: sqs.IQueue;

  /** Where messages go after `maxReceiveCount` receives, and where the runtime dead-letters permanent failures. */
  public readonly deadLetterQueue: sqs.IQueue;

  /** The key that encrypts both queues; undefined when they use SQS-managed encryption. */
  public readonly encryptionKey?: kms.IKey;

  /** The configured number of receives before a message is dead-lettered. */
  public readonly maxReceiveCount: number;

  /** The configured retention of the queue. */
  public readonly retentionPeriod: Duration;

  /** The configured retention of the dead-letter queue. */
  public readonly deadLetterRetentionPeriod: Duration;

  /** The configured visibility timeout of the queue. */
  public readonly visibilityTimeout: Duration;

  public constructor(scope: Construct, id: string, props: ConsumerQueueProps = {}) {
    super(scope, id);
    validateQueueOptions(`ConsumerQueue '${id}'`, props);

    this.maxReceiveCount = props.maxReceiveCount ?? CONSUMER_DEFAULTS.MAX_RECEIVE_COUNT;
    warnOfFewReceives(this, this.maxReceiveCount);
    this.retentionPeriod = props.retentionPeriod ?? CONSUMER_DEFAULTS.RETENTION_PERIOD;
    this.deadLetterRetentionPeriod = props.deadLetterRetentionPeriod ?? CONSUMER_DEFAULTS.DEAD_LETTER_RETENTION_PERIOD;
    this.visibilityTimeout = props.visibilityTimeout ?? minimumVisibilityTimeout(CONSUMER_DEFAULTS.FUNCTION_TIMEOUT);
    this.encryptionKey = props.encryptionKey;

    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
    const encryption = props.encryptionKey ? sqs.QueueEncryption.KMS : sqs.QueueEncryption.SQS_MANAGED;
    // Only FIFO queues name the FIFO settings, so a standard queue's template stays what it was.
    const fifo: Pick<sqs.QueueProps, 'fifo' | 'contentBasedDeduplication'> = props.fifo === true ? { fifo: true, contentBasedDeduplication: false } : {};

    const deadLetterQueue = new sqs.Queue(this, 'DeadLetterQueue', {
      ...fifo,
      encryption,
      encryptionMasterKey: props.encryptionKey,
      enforceSSL: true,
      retentionPeriod: this.deadLetterRetentionPeriod,
      removalPolicy,
    });
    Validations.of(deadLetterQueue).acknowledge({
      id: 'Serverless-SQSRedrivePolicy',
      reason:
        'This queue is the dead-letter queue at the end of the redrive chain; messages here wait for inspection and redrive ' +
        'to the source queue. A further dead-letter queue would only move the problem.',
    });
    this.deadLetterQueue = deadLetterQueue;

    this.queue = new sqs.Queue(this, 'Resource', {
      ...fifo,
      encryption,
      encryptionMasterKey: props.encryptionKey,
      enforceSSL: true,
      visibilityTimeout: this.visibilityTimeout,
      retentionPeriod: this.retentionPeriod,
      deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount: this.maxReceiveCount },
      removalPolicy,
    });
  }

  /**
   * The age of the oldest message in the queue: how far the consumer is behind.
   *
   * @default - maximum over 5 minutes
   */
  public metricApproximateAgeOfOldestMessage(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.queue.metricApproximateAgeOfOldestMessage({ statistic: cloudwatch.Stats.MAXIMUM, ...props });
  }

  /**
   * The number of messages waiting in the dead-letter queue. Any value above zero needs attention.
   *
   * @default - maximum over 5 minutes
   */
  public metricDeadLetterMessagesVisible(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ statistic: cloudwatch.Stats.MAXIMUM, ...props });
  }
}
