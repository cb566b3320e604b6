/**
 * The simulator runs an app with the ordered path (test/simulator/fixtures/ordered): Pipe -> SQS FIFO relay queue ->
 * fan-out function (its sns:Publish through the simulator's SNS endpoint) -> SNS FIFO topic -> the OrderedSubscriber's
 * FIFO queue, with faults, and checks each aggregate's order; a subscriber built with the fence-less transactional
 * factory is refused by the runtime (a configuration error), and one that applies the records of one batch in the
 * wrong order inside one invocation fails the check; a gap the pipe leaves (a record it gave up) is kept open by the real fence. Served, it says the ordered subscriber's Operator output as an
 * OrderedSubscriber writes it, so the printed operator commands act on it in sequence.
 */
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { EXIT_CODE } from '../../../simulator/cli/main';
import { runPrinted, whileServed } from '../../cli/printed-commands';
import { ORDERED_FIXTURE as FIXTURE, PROJECT, simulateOrdered as simulate, synthesizeOrdered, type OrderedAssemblies } from './ordered-fixture';

/** A pipe's stream source parameters, as the template has them. */
interface StreamSourceParameters {
  readonly DynamoDBStreamParameters: { MaximumRetryAttempts: number };
}

let synthesized: OrderedAssemblies | undefined;
let ordered: string;
let unordered: string;
let reversing: string;
let pipeGaps: string;

beforeAll(async () => {
  synthesized = await synthesizeOrdered([{}, { consumer: 'unordered' }, { consumer: 'reversing' }]);
  [ordered, unordered, reversing] = synthesized.assemblies as [string, string, string];
  // the ordered relay's pipe gives a record up at its first failed send (OrderedRelay maximumRetryAttempts: 0)
  pipeGaps = synthesized.edited(ordered, (template) => {
    const [, pipe] = Object.entries(template.Resources).find(([logicalId, resource]) => resource.Type === 'AWS::Pipes::Pipe' && logicalId.startsWith('OrderedRelay'))!;
    (pipe.Properties!.SourceParameters as StreamSourceParameters).DynamoDBStreamParameters.MaximumRetryAttempts = 0;
  });
});

afterAll(() => synthesized?.remove());

describe('simulate an app with the ordered path', () => {
  test('with faults, every event reaches the ordered subscriber once and in its aggregate order: OK', async () => {
    const { code, stdout } = await simulate(ordered, '--count', '9', '--seed', 'ordered');
    // 9 events, and faults injected on the ordered subscriber's path (duplicates, crashes, lost responses, ...)
    const [, faults] = /^Shipping\s+ordered\s+9\s+\d+\s+\d+\s+(\d+)\s/m.exec(stdout) ?? [];
    expect(Number(faults)).toBeGreaterThan(0);
    expect(stdout).toContain('OK: every business change of the producer committed with its events;');
    expect(stdout).not.toContain('[aggregate-order]');
    // and the report says what the order check read
    expect(stdout).toContain('  Shipping: 9 event(s) of 3 aggregate(s) checked\n');
    expect(code).toBe(EXIT_CODE.OK);
  });

  test('a transactional consumer (no sequence fence) on the ordered queue is refused by the runtime, naming createOrderedConsumer: the run fails (issue 38 item 8)', async () => {
    const { code, stdout } = await simulate(unordered, '--count', '9', '--seed', 'ordered', '--no-faults');
    expect(stdout).toMatch(/ConfigurationError[^\n]*subscriber 'Shipping' runs behind an ordered subscriber's FIFO queue[^\n]*createTransactionalConsumer[^\n]*Build the handler with createOrderedConsumer/);
    expect(stdout).not.toContain('OK:');
    expect(code).toBe(EXIT_CODE.FAILURE);
  });

  test('a consumer that applies a batch of one aggregate last first, inside one invocation: the order broken inside the batch is named', async () => {
    const { code, stdout } = await simulate(reversing, '--count', '9', '--seed', 'ordered', '--no-faults');
    // each event applied once, no gap: only the order inside a batch is wrong
    expect(stdout).not.toMatch(/\[effect-count\]|a gap never filled/);
    expect(stdout).toMatch(/\[aggregate-order\] Shipping: aggregate order-\d: event step-c\d+ \(sequence [23]\) was applied before sequence [12] of its aggregate/);
    expect(code).toBe(EXIT_CODE.FAILURE);
  });

  test("a gap the pipe leaves (a send to the FIFO relay queue given up: MaximumRetryAttempts 0) is kept open by the real fence: the events behind it wait, are dead-lettered and named", async () => {
    const { code, stdout } = await simulate(pipeGaps, '--count', '9', '--seed', 'h2', '--relay-failure-rate', '0.5');
    expect(stdout).toMatch(/^relay: [^\n]*\d+ event\(s\) given up and dead-lettered by the pipe/m);
    expect(stdout).toMatch(/\[unapplied-event\] Shipping: [^\n]*SequenceGapError: aggregate 'order-\d': this event is sequence \d, but the subscriber has applied up to \d and waits for \d/);
    expect(stdout).not.toMatch(/\[aggregate-order\]|\[effect-count\]/);
    expect(code).toBe(EXIT_CODE.FAILURE);
  });

  test("served (--serve), it prints the ordered subscriber's Operator output marked ordered, and the printed dlq redrive and replay plan in sequence (issue 33)", async () => {
    await whileServed(['simulate', '--assembly', ordered, '--scenario', `${FIXTURE}/scenario.ts`, '--count', '3', '--seed', 'serve', '--no-faults', '--quiet', '--serve', '--endpoint', inject('dynamoDbEndpoint')], PROJECT, async ({ stdout, stderr, environment }) => {
      expect(stderr).not.toContain('error:');
      const redrive = stdout.split('\n').find((line) => /idempotent-event-flow dlq redrive --subscriber-output '\{.*"subscriberName":"Shipping".*\}' --dead-letter-queue /.test(line));
      expect(redrive).toBeDefined();
      const deployment = JSON.parse(/--subscriber-output '(\{.*\})'/.exec(redrive!)![1]!) as Record<string, unknown>;
      expect(deployment).toMatchObject({ subscriberName: 'Shipping', processingMode: 'transactional', ordered: true, outboxTable: expect.any(String), inboxTable: expect.any(String) });
      expect(deployment.queueUrl).toMatch(/\.fifo$/);

      const planned = await runPrinted(`${redrive!} --json`, environment);
      expect(planned).toMatchObject({ code: 0, stderr: '' });
      expect(JSON.parse(planned.stdout)).toMatchObject({ dryRun: true, ordered: true, decisions: [] });
      const replay = stdout.split('\n').find((line) => /idempotent-event-flow replay --subscriber-output '\{.*"subscriberName":"Shipping"/.test(line));
      expect(replay).toBeDefined();
      // every event of the run was applied: a replay of any of them is a duplicate by design, not sent
      const replayed = await runPrinted(`${replay!.replace(/--event-id \S+/, '--since 2000-01-01T00:00:00Z')} --json`, environment);
      expect(replayed).toMatchObject({ code: 0, stderr: '' });
      const events = (JSON.parse(replayed.stdout) as { ordered: boolean; events: Array<{ decision: string }> }).events;
      expect(events.length).toBe(3);
      expect(events.every((event) => event.decision === 'applied')).toBe(true);
      // and where it stands: every aggregate applied to its last committed event, none held up
      const fenceList = stdout.split('\n').find((line) => line.trim().startsWith('npx idempotent-event-flow fence list Shipping --table'));
      expect(fenceList).toContain('--outbox-table');
      const listed = await runPrinted(`${fenceList!} --json`, environment);
      expect(listed).toMatchObject({ code: 0, stderr: '' });
      expect(JSON.parse(listed.stdout)).toEqual([]);
    });
  });
});
