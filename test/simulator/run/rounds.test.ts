/** The run loop on a real simulated queue and mapping with a scripted function: when it stops, and what it says then. */
import { describe, expect, test, vi } from 'vitest';
import { checkSettled } from '../../../simulator/check/invariants';
import { FaultPlan, NO_FAULTS } from '../../../simulator/faults/fault-plan';
import { SimulatedEventSourceMapping, type MappedFunction } from '../../../simulator/lambda/event-source-mapping';
import type { InvocationOutcome } from '../../../simulator/observation/observer';
import { RunLedger } from '../../../simulator/observation/ledger';
import { runRounds } from '../../../simulator/run/rounds';
import { frozenClock, makeQueue, queueModel } from '../aws/queue-test-kit';

function flowWith(outcome: InvocationOutcome) {
  const clock = frozenClock();
  const ledger = new RunLedger();
  // a queue that is no subscriber's (e.g. one a consumer sends to): no "not drained" check looks at it
  const queue = makeQueue(queueModel('Downstream', { visibilityTimeoutSeconds: 60 }), { clock, observer: ledger });
  const runner: MappedFunction = { invoke: async () => outcome };
  const mapping = new SimulatedEventSourceMapping({
    model: { key: 'Stack/Mapping', stackName: 'Stack', logicalId: 'Mapping', queue: queue.model.key, function: 'Stack/Fn', batchSize: 10, reportBatchItemFailures: true, enabled: true },
    queue,
    runner,
    faults: new FaultPlan('none', NO_FAULTS),
    region: 'us-east-1',
    observer: ledger,
  });
  queue.send({ body: 'work', origin: { via: 'send-message' } });
  const flow = { queues: new Map([[queue.model.key, queue]]), mappings: [mapping], subscribers: [] };
  return { clock, ledger, flow };
}

const OPTIONS = { concurrency: 1, maxSimulatedSeconds: 300, maxRounds: 1000, toProduce: 0 };

describe('runRounds', () => {
  test('a run that reaches maxSimulatedSeconds with messages in flight says it was cut off, and the check reports it', async () => {
    // GIVEN a function that always fails: its message comes back after every visibility timeout
    const { clock, ledger, flow } = flowWith({ kind: 'threw', errorName: 'Error', errorMessage: 'boom' });

    const outcome = await runRounds(flow, [], ledger, clock, undefined, OPTIONS);

    expect(outcome.cutOff).toEqual({ limit: 'simulated-time', maxSimulatedSeconds: 300, maxRounds: 1000, inFlight: [{ queue: 'Downstream', messages: 1 }] });
    expect(checkSettled(outcome)).toEqual([expect.objectContaining({ kind: 'not-settled', detail: expect.stringContaining('Downstream') })]);
  });

  test('a run that does work in every round (a flow feeding itself) stops at maxRounds, and the check reports it', async () => {
    // GIVEN a producer that never runs out of commands: every round has work, so the clock never moves
    const { clock, ledger, flow } = flowWith({ kind: 'returned', response: null });
    const endless = { remaining: 1, figures: { total: 1, succeeded: 0, retried: 0, failed: [] }, next: async () => 1 };

    const outcome = await runRounds(flow, [], ledger, clock, endless, { ...OPTIONS, maxRounds: 25 });

    expect(outcome.rounds).toBe(25);
    expect(outcome.cutOff?.limit).toBe('rounds');
    expect(checkSettled(outcome)).toEqual([expect.objectContaining({ kind: 'not-settled', detail: expect.stringContaining('25 rounds (work was still being done in every round)') })]);
  });

  test('settling waits no real time: the last look at the streams follows at once (real time decides nothing a seed should)', async () => {
    const { clock, ledger, flow } = flowWith({ kind: 'returned', response: null });
    const waits = vi.spyOn(globalThis, 'setTimeout');
    try {
      const outcome = await runRounds(flow, [], ledger, clock, undefined, OPTIONS);

      expect(outcome.cutOff).toBeUndefined();
      expect(waits).not.toHaveBeenCalled();
    } finally {
      waits.mockRestore();
    }
  });

  test('a run where everything was handled is settled', async () => {
    const { clock, ledger, flow } = flowWith({ kind: 'returned', response: null });

    const outcome = await runRounds(flow, [], ledger, clock, undefined, OPTIONS);

    expect(outcome.cutOff).toBeUndefined();
    expect(checkSettled(outcome)).toEqual([]);
  });
});

describe('the start of a round', () => {
  test("no mapping invokes its function before every mapping has received its batches: a slow polling check (IAM's first evaluation) does not decide which invocations the scheduler's first turns see", async () => {
    const clock = frozenClock();
    const ledger = new RunLedger();
    const log: string[] = [];
    const mappingOf = (name: string, turnsToAuthorize: number) => {
      const queue = makeQueue(queueModel(name, { visibilityTimeoutSeconds: 60 }), { clock, observer: ledger });
      queue.send({ body: 'work', origin: { via: 'send-message' } });
      const runner: MappedFunction = {
        invoke: async () => {
          log.push(`${name} invoked`);
          return { kind: 'returned', response: null };
        },
      };
      const authorizePolling = async (): Promise<undefined> => {
        for (let turn = 0; turn < turnsToAuthorize; turn += 1) await new Promise((resolve) => setImmediate(resolve));
        log.push(`${name} may poll`);
        return undefined;
      };
      const mapping = new SimulatedEventSourceMapping({
        model: { key: `Stack/${name}Mapping`, stackName: 'Stack', logicalId: `${name}Mapping`, queue: queue.model.key, function: `Stack/${name}Fn`, batchSize: 10, reportBatchItemFailures: true, enabled: true },
        queue,
        runner,
        faults: new FaultPlan('none', NO_FAULTS),
        region: 'us-east-1',
        observer: ledger,
        authorizePolling,
      });
      return { queue, mapping };
    };
    const fast = mappingOf('Fast', 0);
    const slow = mappingOf('Slow', 5);
    const flow = { queues: new Map([fast, slow].map(({ queue }) => [queue.model.key, queue])), mappings: [fast.mapping, slow.mapping], subscribers: [] };

    await runRounds(flow, [], ledger, clock, undefined, { ...OPTIONS, concurrency: 4 });

    expect(log.slice(0, 4)).toEqual(['Fast may poll', 'Slow may poll', 'Fast invoked', 'Slow invoked']);
  });
});
