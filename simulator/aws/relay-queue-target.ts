/**
 * A pipe's SQS queue target (the ordered relay's FIFO queue): each record the pipe relays is sent to the queue with the
 * `MessageGroupId` and `MessageDeduplicationId` of the pipe's `TargetParameters.SqsQueueParameters`. A parameter that
 * starts with `$` is a JSON path into the source event (the DynamoDB stream record, before the input template), as
 * Pipes evaluates dynamic path parameters (eb-pipes-event-target.html, "Dynamic path parameters"); any other value is
 * a literal. What a pipe sends when a path finds nothing is not documented: the simulator leaves the parameter out, so
 * the FIFO queue refuses a send without its `MessageGroupId`. A send the queue refuses (an {@link SqsError}) is the
 * target's refusal (`RelayTarget.refusal`): the pipe retries it by its retry policy and then dead-letters the record
 * (./stream-relay.ts), as it does with target errors (eb-pipes-error-troubleshooting.html).
 */
import type { RelayQueueTarget } from '../model/flow-model';
import { evaluateJsonPath, parseJsonPath, type JsonPath } from '../../operator/patterns/json-path';
import { eventIdOf, eventSubjectOf } from './message-ids';
import type { SimulatedQueue } from './queue';
import { SqsError } from './sqs-errors';
import type { RelayTarget } from './stream-relay';

/** A parameter: a path to evaluate, or a literal. */
type Parameter = { readonly path: JsonPath } | { readonly literal: string };

function compile(value: string | undefined): Parameter | undefined {
  if (value === undefined) return undefined;
  return value.startsWith('$') ? { path: parseJsonPath(value) } : { literal: value };
}

/** The parameter's value for `sourceEvent`; a path that finds no string gives none, and `unfound` names it. */
function valueOf(parameter: Parameter | undefined, name: string, sourceEvent: unknown, unfound: string[]): string | undefined {
  if (parameter === undefined) return undefined;
  if ('literal' in parameter) return parameter.literal;
  const result = evaluateJsonPath(parameter.path, sourceEvent);
  if (!result.found || typeof result.value !== 'string' || result.value.length === 0) {
    unfound.push(`SqsQueueParameters.${name} ${parameter.path.text} finds no string in the stream record`);
    return undefined;
  }
  return result.value;
}

/** A send the queue refused, with the parameters whose paths found nothing. */
class RefusedSend extends Error {
  public constructor(
    public readonly error: SqsError,
    unfound: readonly string[],
  ) {
    super(`SQS refused the send: ${error.errorName}: ${error.message}${unfound.length === 0 ? '' : ` (${unfound.join('; ')})`}`);
  }
}

/** The relay target that sends to `queue` with the group and deduplication ids `target` names. */
export function relayQueueTarget(target: RelayQueueTarget, queue: SimulatedQueue): RelayTarget {
  const groupId = compile(target.messageGroupId);
  const deduplicationId = compile(target.messageDeduplicationId);
  return {
    kind: 'queue',
    publish: (message, sourceEvent) => {
      const unfound: string[] = [];
      const messageGroupId = valueOf(groupId, 'MessageGroupId', sourceEvent, unfound);
      const messageDeduplicationId = valueOf(deduplicationId, 'MessageDeduplicationId', sourceEvent, unfound);
      const eventId = eventIdOf(message);
      const subject = eventSubjectOf(message);
      try {
        const { messageId } = queue.send({
          body: message,
          ...(messageGroupId === undefined ? {} : { messageGroupId }),
          ...(messageDeduplicationId === undefined ? {} : { messageDeduplicationId }),
          origin: { via: 'pipe', ...(eventId === undefined ? {} : { eventId }), ...(subject === undefined ? {} : { subject }) },
        });
        return { messageId };
      } catch (error) {
        throw error instanceof SqsError ? new RefusedSend(error, unfound) : error;
      }
    },
    refusal: (error) => (error instanceof RefusedSend ? error.message : undefined),
  };
}
