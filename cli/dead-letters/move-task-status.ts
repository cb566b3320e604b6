/**
 * Which of the tasks ListMessageMoveTasks lists is the one a redrive just started. Pure. SQS lists a task's
 * `TaskHandle` only while it is RUNNING, so a task that already finished (a few messages move in well under a second)
 * is listed without it: then it is the queue's most recent task that is not running (only one task runs per source
 * queue at a time, and the list is most recent first).
 */
import type { ListMessageMoveTasksResultEntry } from '@aws-sdk/client-sqs';

/** The task a redrive started, as listed. */
export interface StartedMoveTask {
  readonly entry: ListMessageMoveTasksResultEntry;
  /** `handle`: listed with its handle (running); `most-recent`: the queue's most recent finished task. */
  readonly foundBy: 'handle' | 'most-recent';
}

/** Finds the task started with `taskHandle` to `destinationArn` among `results` (most recent first), or undefined. */
export function findStartedMoveTask(results: readonly ListMessageMoveTasksResultEntry[], taskHandle: string | undefined, destinationArn: string): StartedMoveTask | undefined {
  const byHandle = taskHandle === undefined ? undefined : results.find((entry) => entry.TaskHandle === taskHandle);
  if (byHandle !== undefined) return { entry: byHandle, foundBy: 'handle' };
  const mostRecent = results[0];
  if (mostRecent === undefined || mostRecent.TaskHandle !== undefined || mostRecent.Status === 'RUNNING') return undefined;
  if (mostRecent.DestinationArn !== undefined && mostRecent.DestinationArn !== destinationArn) return undefined;
  return { entry: mostRecent, foundBy: 'most-recent' };
}

/** What a redrive says of its task: `RUNNING, 0 moved so far`, `COMPLETED, 2 of 2 moved; ...`, `FAILED (reason), ...`. */
export function describeStartedMoveTask(started: StartedMoveTask | undefined): string {
  if (started === undefined) return 'status unknown: ListMessageMoveTasks did not list it';
  const { Status, ApproximateNumberOfMessagesMoved, ApproximateNumberOfMessagesToMove, FailureReason } = started.entry;
  const status = `${Status ?? 'status unknown'}${FailureReason === undefined ? '' : ` (${FailureReason})`}`;
  const moved = `${ApproximateNumberOfMessagesMoved ?? '?'}${Status !== 'RUNNING' && ApproximateNumberOfMessagesToMove !== undefined ? ` of ${ApproximateNumberOfMessagesToMove}` : ''} moved${Status === 'RUNNING' ? ' so far' : ''}`;
  const how = started.foundBy === 'most-recent' ? "; the queue's most recent task, as SQS lists a task's handle only while it runs" : '';
  return `${status}, ${moved}${how}`;
}
