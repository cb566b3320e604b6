/**
 * A message move task (StartMessageMoveTask) on the simulation's clock. SQS moves the messages of a dead-letter queue
 * asynchronously, at `MaxNumberOfMessagesPerSecond` when it is given (1 to 500), else at a rate it picks from the
 * backlog, at most 500 a second (StartMessageMoveTask API reference); the simulator then moves 500 a second, the fastest
 * SQS does. The task counts the messages to move when it starts (`ApproximateNumberOfMessagesToMove`: those visible
 * then) and moves the k-th of them k / rate seconds after it started. It runs beside the two queues: whoever next uses
 * either queue, or lists the task, first finds done what was due by then, each moved message enqueued at the moment it
 * moved, so a consumer of the destination sees them arrive as the clock passes. The task is COMPLETED once it moved
 * them all, or found none left visible to move (received or expired meanwhile). Not emulated: cancelling
 * (CancelMessageMoveTask), a task without a destination, failures.
 */
import type { SimulatedQueue } from './queue';

/** The most messages a second a move task moves (StartMessageMoveTask, `MaxNumberOfMessagesPerSecond`). */
export const MAX_MESSAGES_MOVED_PER_SECOND = 500;

/** What `ListMessageMoveTasks` reports of a task, from its own state. */
export interface MessageMoveTaskStatus {
  readonly status: 'RUNNING' | 'COMPLETED';
  readonly moved: number;
  readonly toMove: number;
}

/** One message move task from a dead-letter queue to a destination queue. */
export class MessageMoveTask {
  public readonly taskHandle: string;
  public readonly source: SimulatedQueue;
  public readonly destination: SimulatedQueue;
  /** As given to StartMessageMoveTask; undefined when SQS picks the rate. */
  public readonly maxNumberOfMessagesPerSecond?: number;
  /** Virtual epoch ms. */
  public readonly startedAt: number;
  /** The messages visible on the source when the task started. */
  public readonly toMove: number;

  private readonly messagesPerSecond: number;
  private moved = 0;
  private completed = false;
  private catchingUp = false;
  private readonly removeHooks: ReadonlyArray<() => void>;

  public constructor(options: { taskHandle: string; source: SimulatedQueue; destination: SimulatedQueue; maxNumberOfMessagesPerSecond?: number }) {
    const { source, destination, maxNumberOfMessagesPerSecond } = options;
    const rate = maxNumberOfMessagesPerSecond;
    if (rate !== undefined && (!Number.isInteger(rate) || rate < 1 || rate > MAX_MESSAGES_MOVED_PER_SECOND)) {
      throw new RangeError(`maxNumberOfMessagesPerSecond must be an integer from 1 to ${MAX_MESSAGES_MOVED_PER_SECOND}, got ${maxNumberOfMessagesPerSecond}`);
    }
    this.taskHandle = options.taskHandle;
    this.source = source;
    this.destination = destination;
    this.maxNumberOfMessagesPerSecond = maxNumberOfMessagesPerSecond;
    this.messagesPerSecond = maxNumberOfMessagesPerSecond ?? MAX_MESSAGES_MOVED_PER_SECOND;
    this.toMove = source.counts().visible;
    this.startedAt = source.clock.now();
    this.completed = this.toMove === 0;
    this.removeHooks = this.completed ? [] : [source, destination].map((queue) => queue.beforeEachOperation(() => this.catchUp()));
  }

  /** The task as of now (after it caught up with the clock). */
  public status(): MessageMoveTaskStatus {
    this.catchUp();
    return { status: this.completed ? 'COMPLETED' : 'RUNNING', moved: this.moved, toMove: this.toMove };
  }

  /** Moves what was due by now, each message at the moment it was due. */
  private catchUp(): void {
    if (this.completed || this.catchingUp) return;
    this.catchingUp = true;
    try {
      const elapsed = this.source.clock.now() - this.startedAt;
      const due = Math.min(this.toMove, Math.floor((elapsed * this.messagesPerSecond) / 1000));
      while (this.moved < due) {
        const at = this.startedAt + Math.ceil(((this.moved + 1) * 1000) / this.messagesPerSecond);
        if (!this.source.moveFirstVisibleTo(this.destination, at)) {
          this.complete();
          return;
        }
        this.moved += 1;
      }
      if (this.moved >= this.toMove) this.complete();
    } finally {
      this.catchingUp = false;
    }
  }

  private complete(): void {
    this.completed = true;
    for (const remove of this.removeHooks) remove();
  }
}
