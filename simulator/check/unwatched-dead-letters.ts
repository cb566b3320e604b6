/**
 * Dead letters are only as good as the alarm that tells someone they are there: a run fails when a dead-letter queue
 * holds messages at its end (a subscriber's, a subscription's, the relay's) and no CloudWatch alarm of the templates
 * watches it (see ../model/resources/queue-alarms.ts). Deployed, those events would sit there until their retention
 * ends, unseen.
 */
import type { SimulatedQueue } from '../aws/queue';
import type { ResourceKey } from '../model/flow-model';
import type { Violation } from './invariants';

/** A dead-letter queue and what it holds at the end of the run. */
export interface DeadLetterQueueContents {
  readonly queue: SimulatedQueue;
  /** Who put them there, in words: e.g. `subscriber Billing`, `relay Stack/Pipe`. */
  readonly owner: string;
}

/** One violation per dead-letter queue that holds messages and that no alarm watches. */
export function checkUnwatchedDeadLetters(queues: readonly DeadLetterQueueContents[], queueAlarms: ReadonlyMap<ResourceKey, readonly string[]> | undefined): Violation[] {
  const seen = new Set<ResourceKey>();
  const violations: Violation[] = [];
  for (const { queue, owner } of queues) {
    if (seen.has(queue.model.key)) continue;
    seen.add(queue.model.key);
    const held = queue.counts().total;
    if (held === 0 || (queueAlarms?.get(queue.model.key)?.length ?? 0) > 0) continue;
    violations.push({
      kind: 'unwatched-dead-letters',
      detail:
        `${held} dead letter(s) of ${owner} are on queue ${queue.model.constructPath ?? queue.model.key}, and no CloudWatch alarm in the templates watches it ` +
        '(an AWS/SQS alarm with its QueueName dimension, e.g. ApproximateNumberOfMessagesVisible): deployed, nobody would be told',
    });
  }
  return violations;
}
