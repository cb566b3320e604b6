import { Size, Token } from 'aws-cdk-lib';
import * as sns from 'aws-cdk-lib/aws-sns';
import type { IConstruct } from 'constructs';
import { MAX_MESSAGE_BYTES } from '../../../lambda/contract/wire-format';
import { validationError } from '../../private/validation-error';

/**
 * The relay publishes to SNS with PublishBatch, even a batch of one (EventBridge user guide, "Batching and concurrency"
 * for pipes), and the messages of one PublishBatch must fit the topic's `MaximumMessageSize` together (SNS API
 * reference, PublishBatch: 262,144 bytes unless the topic sets more, up to 1 MiB). What a pipe does with a batch SNS
 * refuses is not documented. So the relay's batch size and the largest event producers may append are chosen together:
 * batch size x largest event <= the topic's limit, and no batch can be too large.
 */

/** The most messages one PublishBatch takes, and so the relay's largest batch. */
export const MAX_RELAY_BATCH_SIZE = 10;

/** The relay's batch size and the largest event producers may append, in bytes as delivered. */
export interface RelayEventSizing {
  readonly batchSize: number;
  readonly maxEventBytes: number;
}

const bytes = (value: number): string => `${value.toLocaleString('en-US')} bytes`;

/**
 * The topic's `MaximumMessageSize`, in bytes: the value set on its `AWS::SNS::Topic` when the topic is defined in this
 * app with a literal one, else the SNS default of 262,144 bytes (an imported topic's can not be known at synth).
 */
export function topicMaximumMessageBytes(topic: sns.ITopic): number {
  const resource = topic.node.defaultChild;
  const size = resource instanceof sns.CfnTopic ? resource.maximumMessageSize : undefined;
  return size !== undefined && !Token.isUnresolved(size) ? size : MAX_MESSAGE_BYTES;
}

/**
 * Chooses the relay's batch size and the largest event so that a full batch fits the topic's limit:
 * - neither given: batches of 10, events of at most a tenth of the limit (26,214 bytes with the SNS default);
 * - `batchSize` given: events of at most the limit over it;
 * - `maxEventSize` given: batches of as many such events as fit the limit (at most 10);
 * - both given: their product must fit the limit, else synth fails naming both props, the bound and the values.
 * A batch size that is a token is taken as the largest, 10.
 *
 * @param propName maps `batchSize` and `maxEventSize` to the prop names the user wrote
 */
export function relayEventSizing(
  owner: string,
  given: { readonly batchSize?: number; readonly maxEventSize?: Size },
  topicLimitBytes: number,
  propName: (setting: 'batchSize' | 'maxEventSize') => string = (setting) => setting,
): RelayEventSizing {
  const batchSize = given.batchSize === undefined || Token.isUnresolved(given.batchSize) ? undefined : given.batchSize;
  const maxEventBytes = given.maxEventSize?.toBytes();
  const limit = `the topic's MaximumMessageSize (${bytes(topicLimitBytes)}), which one SNS PublishBatch of a full relay batch must fit`;
  if (maxEventBytes !== undefined) {
    if (!Number.isInteger(maxEventBytes) || maxEventBytes < 1) {
      throw validationError(`${owner}: ${propName('maxEventSize')} must be a whole number of bytes of at least 1, but ${maxEventBytes} bytes was provided`);
    }
    if (maxEventBytes > topicLimitBytes) {
      throw validationError(`${owner}: ${propName('maxEventSize')} must be at most ${limit}, but ${bytes(maxEventBytes)} was provided`);
    }
    if (batchSize === undefined) return { batchSize: Math.min(MAX_RELAY_BATCH_SIZE, Math.floor(topicLimitBytes / maxEventBytes)), maxEventBytes };
    if (batchSize * maxEventBytes > topicLimitBytes) {
      throw validationError(
        `${owner}: ${propName('batchSize')} x ${propName('maxEventSize')} must be at most ${limit}, but ` +
          `${batchSize} x ${bytes(maxEventBytes)} = ${bytes(batchSize * maxEventBytes)} was provided; lower one of them`,
      );
    }
    return { batchSize, maxEventBytes };
  }
  const effectiveBatchSize = batchSize ?? MAX_RELAY_BATCH_SIZE;
  return { batchSize: given.batchSize ?? MAX_RELAY_BATCH_SIZE, maxEventBytes: Math.floor(topicLimitBytes / effectiveBatchSize) };
}

/** Per outbox table, the largest event its relays let producers append (the smallest, when several relay it). */
const maxEventBytesByOutbox = new WeakMap<IConstruct, number>();

/** Records that a relay of `outboxTable` takes events of at most `maxEventBytes`. */
export function limitOutboxEvents(outboxTable: IConstruct, maxEventBytes: number): void {
  const known = maxEventBytesByOutbox.get(outboxTable);
  maxEventBytesByOutbox.set(outboxTable, known === undefined ? maxEventBytes : Math.min(known, maxEventBytes));
}

/** The largest event producers of `outboxTable` may append: its relays' limit, or the SNS message limit with none. */
export function outboxMaxEventBytes(outboxTable: IConstruct): number {
  return maxEventBytesByOutbox.get(outboxTable) ?? MAX_MESSAGE_BYTES;
}
