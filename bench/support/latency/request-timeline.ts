/**
 * Records when each DynamoDB request of a client started and ended, with SDK middleware on the client itself (so the
 * code under measurement is unchanged), per recording: `start()` before an invocation, `stop()` after it returns the
 * requests it sent. Measured per HTTP attempt (below the SDK's retry middleware), so an SDK retry is a request of its
 * own. The clock is `performance.now()`; the figures derived from it are the critical path's (critical-path.ts).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { TimedRequest } from './critical-path';

/** The requests of one client, recorded between `start()` and `stop()`. */
export class RequestTimeline {
  private recording: TimedRequest[] | undefined;

  public constructor(client: DynamoDBClient) {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const requests = this.recording;
        if (requests === undefined) return next(args);
        const operation = String(context.commandName ?? '').replace(/Command$/, '');
        const startMs = performance.now();
        try {
          return await next(args);
        } finally {
          requests.push({ operation, startMs, endMs: performance.now() });
        }
      },
      { step: 'deserialize', name: 'benchRequestTimeline', priority: 'low' },
    );
  }

  /** Starts a recording (a recording under way is dropped). */
  public start(): void {
    this.recording = [];
  }

  /** Ends the recording: the requests sent since `start()` (those that ended by now), in order of their end. */
  public stop(): TimedRequest[] {
    const requests = this.recording ?? [];
    this.recording = undefined;
    return requests;
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
