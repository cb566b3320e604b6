/**
 * The SQS event source mapping with the real simulated queue and a scripted function: batching, deletes by outcome
 * and batch response, and the concurrent-receive and lost-delete faults.
 */
import { describe, expect, test } from 'vitest';
import type { SimulatedQueue } from '../../../simulator/aws/queue';
import { FaultPlan, NO_FAULTS, type FaultKind } from '../../../simulator/faults/fault-plan';
import { SimulatedEventSourceMapping, type MappedFunction } from '../../../simulator/lambda/event-source-mapping';
import type { LambdaSqsEvent } from '../../../simulator/lambda/sqs-event';
import type { EventSourceMappingModel, QueueModel } from '../../../simulator/model/flow-model';
import type { InvocationOutcome, SimulationObserver } from '../../../simulator/observation/observer';
import { frozenClock, makeQueue, queueModel } from '../aws/queue-test-kit';

const REGION = 'eu-west-1';

/** Faults that happen exactly where `script` says (kind, then the decision key). */
class ScriptedFaults extends FaultPlan {
  public constructor(private readonly script: (kind: FaultKind, key: readonly (string | number)[]) => boolean) {
    super('scripted', { ...NO_FAULTS, duplicate: 0.5 });
  }

  public override happens(_rate: number, kind: FaultKind, ...key: readonly (string | number)[]): boolean {
    return this.script(kind, key);
  }
}

/** The body of each record of an invocation. */
interface Invocation {
  readonly key: string;
  readonly bodies: readonly string[];
  readonly event: LambdaSqsEvent;
}

/** A function that answers each batch with `respond` after a short real delay, recording what it got and how many ran at once. */
function scriptedFunction(respond: (event: LambdaSqsEvent) => InvocationOutcome = () => ({ kind: 'returned', response: null })) {
  const invocations: Invocation[] = [];
  let running = 0;
  let maxRunning = 0;
  const runner: MappedFunction = {
    invoke: async (event, key, onOutput) => {
      const sqsEvent = event as LambdaSqsEvent;
      onOutput?.(`invoked ${key}`, 'stdout');
      invocations.push({ key, bodies: sqsEvent.Records.map((record) => record.body), event: sqsEvent });
      running += 1;
      maxRunning = Math.max(maxRunning, running);
      await new Promise((resolve) => setTimeout(resolve, 10));
      running -= 1;
      return respond(sqsEvent);
    },
  };
  return { runner, invocations, maxRunning: () => maxRunning };
}

function mappingModel(overrides: Partial<EventSourceMappingModel> = {}): EventSourceMappingModel {
  return {
    key: 'Stack/Mapping',
    stackName: 'Stack',
    logicalId: 'Mapping',
    queue: 'Stack/Orders',
    function: 'Stack/Consumer',
    batchSize: 10,
    reportBatchItemFailures: true,
    enabled: true,
    ...overrides,
  };
}

interface Setup {
  readonly queue: SimulatedQueue;
  readonly clock: ReturnType<typeof frozenClock>;
  readonly mapping: SimulatedEventSourceMapping;
  readonly calls: Parameters<NonNullable<SimulationObserver['onInvocation']>>[];
  readonly faults: [FaultKind, string][];
}

function setup(options: {
  bodies: readonly (string | { body: string; group: string })[];
  runner: MappedFunction;
  model?: Partial<EventSourceMappingModel>;
  queue?: Partial<QueueModel>;
  faults?: FaultPlan;
}): Setup {
  const clock = frozenClock();
  const queue = makeQueue(queueModel('Orders', options.queue), { clock });
  for (const entry of options.bodies) {
    if (typeof entry === 'string') queue.send({ body: entry, origin: { via: 'send-message' } });
    else queue.send({ body: entry.body, messageGroupId: entry.group, messageDeduplicationId: entry.body, origin: { via: 'send-message' } });
  }
  const calls: Setup['calls'] = [];
  const faults: Setup['faults'] = [];
  const mapping = new SimulatedEventSourceMapping({
    model: mappingModel(options.model),
    queue,
    runner: options.runner,
    faults: options.faults ?? new FaultPlan('no faults', NO_FAULTS),
    region: REGION,
    observer: { onInvocation: (...args) => calls.push(args), onFault: (kind, subject) => faults.push([kind, subject]) },
  });
  return { queue, clock, mapping, calls, faults };
}

const failIfBodyStartsWith =
  (prefix: string) =>
  (event: LambdaSqsEvent): InvocationOutcome => ({
    kind: 'returned',
    response: { batchItemFailures: event.Records.filter((record) => record.body.startsWith(prefix)).map((record) => ({ itemIdentifier: record.messageId })) },
  });

describe('SimulatedEventSourceMapping: batches', () => {
  test('invokes with Lambda SQS records, a deterministic invocation key, and reports the invocation with its output', async () => {
    const fn = scriptedFunction();
    const { mapping, queue, calls } = setup({ bodies: ['a', 'b'], runner: fn.runner });
    expect(await mapping.runRound(1)).toBe(1);
    const [invocation] = fn.invocations;
    const [first, second] = invocation.event.Records;
    expect(invocation.key).toBe(`Stack/Mapping|${first.messageId}|1`);
    expect(first).toMatchObject({ body: 'a', eventSource: 'aws:sqs', eventSourceARN: queue.address.arn, awsRegion: REGION, attributes: { ApproximateReceiveCount: '1' } });
    expect(second.body).toBe('b');
    expect(calls).toEqual([
      [
        'Stack/Mapping',
        {
          functionKey: 'Stack/Consumer',
          messages: [
            { messageId: first.messageId, origin: { via: 'send-message' }, receiveCount: 1 },
            { messageId: second.messageId, origin: { via: 'send-message' }, receiveCount: 1 },
          ],
          outcome: { kind: 'returned', response: null },
          failedMessageIds: [],
          // the lines the function wrote during this invocation, for the per-invocation checks
          output: [`invoked ${invocation.key}`],
        },
      ],
    ]);
    expect(queue.counts().total).toBe(0);
  });

  test('spreads the messages round-robin over `parallelism` batches and runs them at once', async () => {
    const fn = scriptedFunction();
    const { mapping } = setup({ bodies: ['1', '2', '3', '4', '5'], runner: fn.runner });
    expect(await mapping.runRound(3)).toBe(3);
    expect(fn.invocations.map((invocation) => invocation.bodies)).toEqual([
      ['1', '4'],
      ['2', '5'],
      ['3'],
    ]);
    expect(fn.maxRunning()).toBe(3);
  });

  test('receives at most parallelism × BatchSize messages, capped by MaximumConcurrency', async () => {
    const bodies = Array.from({ length: 25 }, (_, index) => `m${index}`);
    const fn = scriptedFunction();
    const { mapping, queue } = setup({ bodies, runner: fn.runner, model: { batchSize: 2 } });
    expect(await mapping.runRound(3)).toBe(3);
    expect(fn.invocations.map((invocation) => invocation.bodies.length)).toEqual([2, 2, 2]);
    expect(queue.counts()).toEqual({ visible: 19, inFlight: 0, total: 19 });

    const capped = scriptedFunction();
    const limited = setup({ bodies, runner: capped.runner, model: { batchSize: 2, maximumConcurrency: 2 } });
    expect(await limited.mapping.runRound(5)).toBe(2);
    expect(limited.queue.counts().total).toBe(21);
  });

  test('resolves 0 and invokes nothing when no message is visible or the mapping is disabled', async () => {
    const fn = scriptedFunction();
    expect(await setup({ bodies: [], runner: fn.runner }).mapping.runRound(2)).toBe(0);
    const disabled = setup({ bodies: ['a'], runner: fn.runner, model: { enabled: false } });
    expect(await disabled.mapping.runRound(2)).toBe(0);
    expect(fn.invocations).toEqual([]);
    expect(disabled.queue.counts().visible).toBe(1);
  });

  test('a FIFO queue keeps each message group in one batch, in order, with different groups in concurrent batches, and no concurrent copies', async () => {
    const fn = scriptedFunction();
    const { mapping, faults } = setup({
      bodies: [
        { body: 'a1', group: 'A' },
        { body: 'b1', group: 'B' },
        { body: 'a2', group: 'A' },
        { body: 'a3', group: 'A' },
        { body: 'c1', group: 'C' },
      ],
      runner: fn.runner,
      queue: { fifo: true },
      faults: new ScriptedFaults((kind) => kind === 'concurrent-receive'),
    });
    expect(await mapping.runRound(2)).toBe(2);
    expect(fn.invocations.map((invocation) => invocation.bodies)).toEqual([
      ['a1', 'a2', 'a3'],
      ['b1', 'c1'],
    ]);
    expect(fn.maxRunning()).toBe(2);
    expect(faults).toEqual([]);
  });
});

describe('SimulatedEventSourceMapping: what is deleted', () => {
  test('with ReportBatchItemFailures, every message but the listed failures is deleted; the failures come back', async () => {
    const fn = scriptedFunction(failIfBodyStartsWith('fail'));
    const { mapping, queue, clock, calls } = setup({ bodies: ['ok-1', 'fail-2', 'ok-3'], runner: fn.runner });
    await mapping.runRound(1);
    const failedId = fn.invocations[0].event.Records[1].messageId;
    expect(calls[0][1].failedMessageIds).toEqual([failedId]);
    expect(queue.counts()).toEqual({ visible: 0, inFlight: 1, total: 1 });
    clock.advanceBy(queue.model.visibilityTimeoutSeconds * 1000);
    await mapping.runRound(1);
    expect(fn.invocations[1].event.Records.map((record) => [record.messageId, record.attributes.ApproximateReceiveCount])).toEqual([[failedId, '2']]);
  });

  test('without ReportBatchItemFailures, a returned invocation deletes every message whatever it returned', async () => {
    const fn = scriptedFunction(failIfBodyStartsWith('fail'));
    const { mapping, queue, calls } = setup({ bodies: ['ok', 'fail'], runner: fn.runner, model: { reportBatchItemFailures: false } });
    await mapping.runRound(1);
    expect(calls[0][1].failedMessageIds).toEqual([]);
    expect(queue.counts().total).toBe(0);
  });

  test('an invalid batch response fails the whole batch: nothing is deleted', async () => {
    const fn = scriptedFunction(() => ({ kind: 'returned', response: { batchItemFailures: [{ itemIdentifier: 'not-in-the-batch' }] } }));
    const { mapping, queue, calls } = setup({ bodies: ['a', 'b'], runner: fn.runner });
    await mapping.runRound(1);
    expect(calls[0][1].failedMessageIds).toEqual(fn.invocations[0].event.Records.map((record) => record.messageId));
    expect(queue.counts()).toEqual({ visible: 0, inFlight: 2, total: 2 });
  });

  test.each<[string, InvocationOutcome]>([
    ['threw', { kind: 'threw', errorName: 'Error', errorMessage: 'boom' }],
    ['crashed', { kind: 'crashed', atRequest: 2, afterCommit: true }],
    ['timed out', { kind: 'timed-out', timeoutSeconds: 30 }],
  ])('a function that %s deletes nothing, even without ReportBatchItemFailures', async (_case, outcome) => {
    const fn = scriptedFunction(() => outcome);
    const { mapping, queue, calls } = setup({ bodies: ['a', 'b'], runner: fn.runner, model: { reportBatchItemFailures: false } });
    await mapping.runRound(1);
    expect(calls[0][1]).toMatchObject({ outcome, failedMessageIds: fn.invocations[0].event.Records.map((record) => record.messageId) });
    expect(queue.counts()).toEqual({ visible: 0, inFlight: 2, total: 2 });
  });
});

describe('SimulatedEventSourceMapping: SQS faults', () => {
  test('a concurrent receive hands the same message to another, concurrent batch of the round', async () => {
    const fn = scriptedFunction();
    let firstId: string | undefined;
    const faults = new ScriptedFaults((kind, key) => {
      firstId ??= String(key[1]);
      return kind === 'concurrent-receive' && key[1] === firstId;
    });
    const { mapping, queue, faults: reported } = setup({ bodies: ['one', 'two', 'three'], runner: fn.runner, faults });
    expect(await mapping.runRound(2)).toBe(2);
    expect(fn.invocations.map((invocation) => invocation.bodies)).toEqual([
      ['one', 'two'],
      ['one', 'three'],
    ]);
    expect(fn.maxRunning()).toBe(2);
    const [original, copy] = fn.invocations.map((invocation) => invocation.event.Records[0]);
    expect(copy.messageId).toBe(original.messageId);
    expect(copy.receiptHandle).not.toBe(original.receiptHandle);
    expect([original.attributes.ApproximateReceiveCount, copy.attributes.ApproximateReceiveCount]).toEqual(['1', '2']);
    expect(reported).toEqual([['concurrent-receive', 'Stack/Orders']]);
    // the copy's receipt handle is the latest: its batch's delete removed the message
    expect(queue.counts().total).toBe(0);
  });

  test('at parallelism 1 the copy of a concurrent receive runs in a second batch AFTER the first: nothing runs concurrently', async () => {
    const fn = scriptedFunction();
    let firstId: string | undefined;
    const faults = new ScriptedFaults((kind, key) => {
      firstId ??= String(key[1]);
      return kind === 'concurrent-receive' && key[1] === firstId;
    });
    const { mapping, faults: reported } = setup({ bodies: ['one', 'two'], runner: fn.runner, faults });
    expect(await mapping.runRound(1)).toBe(2);
    expect(fn.invocations.map((invocation) => invocation.bodies)).toEqual([['one', 'two'], ['one']]);
    expect(fn.maxRunning()).toBe(1);
    expect(reported).toEqual([['concurrent-receive', 'Stack/Orders']]);
  });

  test('a lost delete leaves the message on the queue: it comes back after the visibility timeout', async () => {
    const fn = scriptedFunction();
    const faults = new ScriptedFaults((kind, key) => kind === 'lost-delete' && key[2] === 1);
    const { mapping, queue, clock, faults: reported } = setup({ bodies: ['kept'], runner: fn.runner, faults });
    await mapping.runRound(1);
    expect(reported).toEqual([['lost-delete', 'Stack/Orders']]);
    expect(queue.counts()).toEqual({ visible: 0, inFlight: 1, total: 1 });
    clock.advanceBy(queue.model.visibilityTimeoutSeconds * 1000);
    await mapping.runRound(1);
    expect(fn.invocations[1].event.Records[0].attributes.ApproximateReceiveCount).toBe('2');
    expect(queue.counts().total).toBe(0);
  });

  test('fault decisions are keyed by queue, message id and receive count', async () => {
    const keys: [FaultKind, readonly (string | number)[]][] = [];
    const faults = new ScriptedFaults((kind, key) => {
      keys.push([kind, key]);
      return false;
    });
    const fn = scriptedFunction();
    const { mapping } = setup({ bodies: ['a'], runner: fn.runner, faults });
    await mapping.runRound(1);
    const { messageId } = fn.invocations[0].event.Records[0];
    expect(keys).toEqual([
      ['concurrent-receive', ['Stack/Orders', messageId, 1]],
      ['lost-delete', ['Stack/Orders', messageId, 1]],
    ]);
  });
});
