import { describe, expect, test } from 'vitest';
import { describeStartedMoveTask, findStartedMoveTask } from '../../cli/dead-letters/move-task-status';

const DESTINATION = 'arn:aws:sqs:us-east-1:000000000000:Queue';

describe('findStartedMoveTask: the task a redrive started, among those ListMessageMoveTasks lists (most recent first)', () => {
  test('a running task by its handle', () => {
    const running = { TaskHandle: 'h-1', Status: 'RUNNING', ApproximateNumberOfMessagesMoved: 0, DestinationArn: DESTINATION };
    expect(findStartedMoveTask([running], 'h-1', DESTINATION)).toEqual({ entry: running, foundBy: 'handle' });
    expect(describeStartedMoveTask({ entry: running, foundBy: 'handle' })).toBe('RUNNING, 0 moved so far');
  });

  test('a finished task (listed without its handle): the most recent one, with its failure reason', () => {
    const failed = { Status: 'FAILED', FailureReason: 'AWS.SimpleQueueService.NonExistentQueue', ApproximateNumberOfMessagesMoved: 3, ApproximateNumberOfMessagesToMove: 9, DestinationArn: DESTINATION };
    const started = findStartedMoveTask([failed, { Status: 'COMPLETED' }], 'h-2', DESTINATION);
    expect(started).toEqual({ entry: failed, foundBy: 'most-recent' });
    expect(describeStartedMoveTask(started)).toBe("FAILED (AWS.SimpleQueueService.NonExistentQueue), 3 of 9 moved; the queue's most recent task, as SQS lists a task's handle only while it runs");
  });

  test('not ours: the most recent task runs under another handle, or moved to another queue; nothing listed', () => {
    expect(findStartedMoveTask([{ TaskHandle: 'h-other', Status: 'RUNNING' }, { Status: 'COMPLETED', DestinationArn: DESTINATION }], 'h-3', DESTINATION)).toBeUndefined();
    expect(findStartedMoveTask([{ Status: 'COMPLETED', DestinationArn: `${DESTINATION}-other` }], 'h-3', DESTINATION)).toBeUndefined();
    expect(findStartedMoveTask([], 'h-3', DESTINATION)).toBeUndefined();
    expect(describeStartedMoveTask(undefined)).toBe('status unknown: ListMessageMoveTasks did not list it');
  });
});
