/** A recorded run of one consumer function for the apply attribution's tests (apply-attribution, violation-causes). */
import { ApplyAttribution } from '../../../simulator/check/apply-attribution';
import type { RequestFault } from '../../../simulator/faults/dynamodb-proxy';
import type { InvocationOutcome } from '../../../simulator/observation/observer';

export const RETURNED: InvocationOutcome = { kind: 'returned', response: {} };

/** A run of one consumer function `Fn`, on a clock the test moves. */
export function attributedRun(consumer: { subscriber: string; mode: string; inboxTable?: string; windowSeconds?: number; outboxTable?: string }) {
  let now = 1_000_000;
  const attribution = new ApplyAttribution(
    () => now,
    () => ['pk'],
  );
  attribution.watch('Fn', consumer);
  let invocations = 0;
  return {
    attribution,
    later: (seconds: number) => (now += seconds * 1000),
    /**
     * One invocation carrying `events` (id, receive count), sending `writes` in order (a read too: `operation` `GetItem`),
     * in the execution environment numbered `environment`, and starting `calls` outside the simulator (each after the
     * number of those writes its `afterRequest` says).
     */
    invoke(
      events: readonly ([string, number] | [string, number, string])[],
      writes: readonly { body: object; fault?: RequestFault; applied: boolean; operation?: string }[],
      outcome: InvocationOutcome = RETURNED,
      failed: readonly string[] = [],
      environment = 1,
      calls: readonly { method?: string; host?: string; path: string; afterRequest: number }[] = [],
    ) {
      invocations += 1;
      const key = `Mapping|m-${invocations}|1`;
      writes.forEach((write, index) => {
        for (const call of calls.filter((candidate) => candidate.afterRequest === index)) attribution.onOutsideCall('Fn', key, { method: call.method ?? 'POST', host: call.host ?? '127.0.0.1:8080', path: call.path, afterRequest: call.afterRequest });
        const request = { operation: write.operation ?? 'TransactWriteItems', index: index + 1, sequence: index + 1, body: Buffer.from(JSON.stringify(write.body)) };
        attribution.onRequest('Fn', key, request, write.fault ?? 'none', environment);
        if (write.fault !== 'throttle' && write.fault !== 'conflict' && write.fault !== 'crash-before') attribution.onAnswered('Fn', key, request, write.applied);
      });
      for (const call of calls.filter((candidate) => candidate.afterRequest >= writes.length)) attribution.onOutsideCall('Fn', key, { method: call.method ?? 'POST', host: call.host ?? '127.0.0.1:8080', path: call.path, afterRequest: call.afterRequest });
      attribution.onInvocation('Fn', key, {
        messages: events.map(([eventId, receiveCount, subject], index) => ({ messageId: `msg-${eventId}-${index}`, receiveCount, origin: { eventId, via: 'sns', ...(subject === undefined ? {} : { subject }) } })),
        outcome,
        failedMessageIds: failed.map((eventId) => `msg-${eventId}-0`),
      });
    },
  };
}

