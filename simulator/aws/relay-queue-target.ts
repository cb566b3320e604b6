/**
 * A pipe's SQS queue target (the ordered relay's FIFO queue): each record the pipe relays is sent to the queue with the
 * `MessageGroupId` and `MessageDeduplicationId` of the pipe's `TargetParameters.SqsQueueParameters`. A parameter that
 * starts with `$` is a JSON path into the source event (the DynamoDB stream record, before the input template), as
 * Pipes evaluates dynamic path parameters (eb-pipes-event-target.html, "Dynamic path parameters"); any other value is
 * a literal. A path that finds no string fails the record's publish with an error naming the path.
 */
import type { RelayQueueTarget } from '../model/flow-model';
import { evaluateJsonPath, parseJsonPath, type JsonPath } from '../patterns/json-path';
import { eventIdOf } from './message-ids';
import type { SimulatedQueue } from './queue';
import type { RelayTarget } from './stream-relay';

/** A parameter: a path to evaluate, or a literal. */
type Parameter = { readonly path: JsonPath } | { readonly literal: string };

function compile(value: string | undefined): Parameter | undefined {
  if (value === undefined) return undefined;
  return value.startsWith('$') ? { path: parseJsonPath(value) } : { literal: value };
}

function valueOf(parameter: Parameter | undefined, name: string, sourceEvent: unknown, queue: SimulatedQueue): string | undefined {
  if (parameter === undefined) return undefined;
  if ('literal' in parameter) return parameter.literal;
  const result = evaluateJsonPath(parameter.path, sourceEvent);
  if (!result.found || typeof result.value !== 'string' || result.value.length === 0) {
    throw new Error(`pipe target queue ${queue.model.key}: SqsQueueParameters.${name} ${parameter.path.text} finds no string in the stream record`);
  }
  return result.value;
}

/** The relay target that sends to `queue` with the group and deduplication ids `target` names. */
export function relayQueueTarget(target: RelayQueueTarget, queue: SimulatedQueue): RelayTarget {
  const groupId = compile(target.messageGroupId);
  const deduplicationId = compile(target.messageDeduplicationId);
  return {
    kind: 'queue',
    publish: (message, sourceEvent) => {
      const messageGroupId = valueOf(groupId, 'MessageGroupId', sourceEvent, queue);
      const messageDeduplicationId = valueOf(deduplicationId, 'MessageDeduplicationId', sourceEvent, queue);
      const eventId = eventIdOf(message);
      const { messageId } = queue.send({
        body: message,
        ...(messageGroupId === undefined ? {} : { messageGroupId }),
        ...(messageDeduplicationId === undefined ? {} : { messageDeduplicationId }),
        origin: { via: 'pipe', ...(eventId === undefined ? {} : { eventId }) },
      });
      return { messageId };
    },
  };
}
