/** Queues, a frozen clock and a recording observer for the tests of the simulated SQS and SNS. */
import { CLOCK_BUFFER_BYTES, VirtualClock } from '../../../simulator/aws/clock';
import { SimulatedQueue } from '../../../simulator/aws/queue';
import type { QueueModel } from '../../../simulator/model/flow-model';
import type { SimulationObserver } from '../../../simulator/observation/observer';

/** The real time the test clocks stand still at (2023-11-14T22:13:20Z). */
export const START_MS = 1_700_000_000_000;

/** A virtual clock whose real time never moves (it stands at `startMs`): only `advanceBy` moves it. @default START_MS */
export function frozenClock(startMs: number = START_MS): VirtualClock {
  return new VirtualClock(new SharedArrayBuffer(CLOCK_BUFFER_BYTES), () => startMs);
}

/** A queue model with CloudFormation's defaults, overridable. */
export function queueModel(logicalId: string, overrides: Partial<QueueModel> = {}): QueueModel {
  return {
    key: `Stack/${logicalId}`,
    stackName: 'Stack',
    logicalId,
    fifo: false,
    visibilityTimeoutSeconds: 30,
    messageRetentionSeconds: 345_600,
    ...overrides,
  };
}

/** One observer call: the method name and its arguments. */
export type ObservedCall = readonly [method: keyof SimulationObserver, ...args: unknown[]];

/** An observer that records every call, in order. */
export function recordingObserver(): SimulationObserver & { readonly calls: ObservedCall[] } {
  const calls: ObservedCall[] = [];
  const record =
    (method: keyof SimulationObserver) =>
    (...args: unknown[]): void => {
      calls.push([method, ...args]);
    };
  return {
    calls,
    onEnqueued: record('onEnqueued'),
    onDeleted: record('onDeleted'),
    onRedriven: record('onRedriven'),
    onExpired: record('onExpired'),
    onFanOut: record('onFanOut'),
    onFault: record('onFault'),
  };
}

/** A queue named after its logical id, at `http://127.0.0.1:9/000000000000/<name>`. */
export function makeQueue(
  model: QueueModel,
  options: { clock: VirtualClock; observer?: SimulationObserver; deadLetterQueue?: SimulatedQueue; baseUrl?: string },
): SimulatedQueue {
  const name = model.queueName ?? model.logicalId;
  return new SimulatedQueue({
    model,
    address: { name, url: `${options.baseUrl ?? 'http://127.0.0.1:9'}/000000000000/${name}`, arn: `arn:aws:sqs:us-east-1:000000000000:${name}` },
    clock: options.clock,
    ...(options.deadLetterQueue === undefined ? {} : { deadLetterQueue: options.deadLetterQueue }),
    ...(options.observer === undefined ? {} : { observer: options.observer }),
  });
}
