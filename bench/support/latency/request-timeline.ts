/**
 * Records when each DynamoDB request of a client started and ended, and which request's response came last before it
 * was sent (`after`), with SDK middleware on the client itself (so the code under measurement is unchanged), per
 * recording: `start()` before an invocation, `stop()` after it returns the requests it sent. Measured around the whole
 * `send` (first middleware step: serialization, signing, SDK retries and the response's parsing inside), so the
 * response is complete when its end is taken, and the code that goes on from it sends its next request before any
 * other response is handled, unless it yields to the event loop (a timer, I/O): then `after` may name another record's
 * request. The clock is `performance.now()`; the figures derived from it are the critical path's (critical-path.ts).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { TimedRequest } from './critical-path';

/** The requests of one client, recorded between `start()` and `stop()` (one timeline per client). */
export class RequestTimeline {
  private recording: Array<{ operation: string; startMs: number; endMs?: number; after?: number }> | undefined;
  /** The request of the recording whose response came last, by its index. */
  private lastCompleted: number | undefined;

  public constructor(client: DynamoDBClient) {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const requests = this.recording;
        if (requests === undefined) return next(args);
        const operation = String(context.commandName ?? '').replace(/Command$/, '');
        const entry = { operation, startMs: performance.now(), ...(this.lastCompleted === undefined ? {} : { after: this.lastCompleted }) } as { operation: string; startMs: number; endMs?: number; after?: number };
        const index = requests.push(entry) - 1;
        try {
          return await next(args);
        } finally {
          entry.endMs = performance.now();
          if (this.recording === requests) this.lastCompleted = index;
        }
      },
      { step: 'initialize', name: 'benchRequestTimeline', priority: 'low' },
    );
  }

  /** Starts a recording (a recording under way is dropped). */
  public start(): void {
    this.recording = [];
    this.lastCompleted = undefined;
  }

  /**
   * Ends the recording: the requests sent since `start()`, in order of sending (`after` indexes this list). A request
   * still under way is listed as ending now (an invocation returns after its requests, so that is a bench's bug).
   */
  public stop(): TimedRequest[] {
    const requests = this.recording ?? [];
    this.recording = undefined;
    const now = performance.now();
    return requests.map((request) => ({ ...request, endMs: request.endMs ?? now }));
  }

  /** Runs `body` as one recording: its result and the requests it sent. */
  public async record<T>(body: () => Promise<T>): Promise<{ value: T; requests: TimedRequest[] }> {
    this.start();
    try {
      const value = await body();
      return { value, requests: this.stop() };
    } finally {
      this.recording = undefined;
    }
  }
}
