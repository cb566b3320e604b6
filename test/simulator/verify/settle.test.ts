/**
 * verify's wait until the deployed flow is quiet (simulator/verify/settle.ts), against the simulator's SQS endpoint
 * (real SQS protocol, the real SDK client) and the scenario's effect probes, on an injected clock: an event counts as
 * settled once, whatever number of tallies its probe gives it; the time limit says what it still waited for.
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { SimulatedQueue } from '../../../simulator/aws/queue';
import { startSqsEndpoint, type SqsEndpoint } from '../../../simulator/aws/sqs-endpoint';
import type { EffectProbe } from '../../../simulator/run/scenario';
import type { VerifyClients } from '../../../simulator/verify/clients';
import type { DeployedFlow } from '../../../simulator/verify/deployed-flow';
import type { RunEvent } from '../../../simulator/verify/observe';
import { NotQuietError, openEvents, waitUntilQuiet, type SettleOptions } from '../../../simulator/verify/settle';
import { frozenClock, makeQueue, queueModel } from '../aws/queue-test-kit';

const clock = frozenClock();
const queues = new Map<string, SimulatedQueue>();
let server: SqsEndpoint;
let sqs: SQSClient;
let invoicingQueue: SimulatedQueue;
let invoicingDeadLetters: SimulatedQueue;

beforeAll(async () => {
  server = await startSqsEndpoint({ resolveQueue: (url) => queues.get(url) });
  invoicingDeadLetters = makeQueue(queueModel('InvoicingDlq'), { clock, baseUrl: server.endpoint });
  invoicingQueue = makeQueue(queueModel('InvoicingQueue'), { clock, baseUrl: server.endpoint });
  for (const queue of [invoicingQueue, invoicingDeadLetters]) queues.set(queue.address.url, queue);
  sqs = new SQSClient({ region: 'us-east-1', endpoint: server.endpoint, credentials: { accessKeyId: 'simulated', secretAccessKey: 'simulated' }, maxAttempts: 1 });
});

afterAll(async () => {
  sqs.destroy();
  await server.stop();
});

/** The flow of one standard subscriber, Invoicing, whose queues are the simulated ones. */
function flow(): DeployedFlow {
  return {
    stackNames: ['App'],
    flows: [],
    resources: [],
    subscribers: [
      {
        name: 'Invoicing',
        stackName: 'App',
        environment: {},
        deployment: { format: 1, subscriberName: 'Invoicing', processingMode: 'multi-step', queueUrl: invoicingQueue.address.url, deadLetterQueueUrl: invoicingDeadLetters.address.url },
      },
    ],
  };
}

function runEvent(id: string): RunEvent {
  const event = { id, type: 'com.example.OrderPlaced', data: { orderId: id } };
  return { event, body: JSON.stringify(event), ordered: false };
}

/** Invoicing's probe as the example's: two tallies per event (its invoice, its mail), applied for `applied` only. */
function invoicingProbe(applied: ReadonlySet<string>): EffectProbe {
  return async ({ events }) =>
    events.flatMap((event) => [
      { subject: `order ${event.id} invoices`, eventIds: [event.id], applied: applied.has(event.id) ? 1 : 0 },
      { subject: `order ${event.id} invoice mails`, eventIds: [event.id], applied: applied.has(event.id) ? 1 : 0 },
    ]);
}

/** Settle options on a clock that moves only when the wait pauses. */
function options(probe: EffectProbe, events: readonly RunEvent[], timeoutSeconds: number): SettleOptions & { readonly progress: string[] } {
  let nowMs = 0;
  const progress: string[] = [];
  return {
    progress,
    timeoutSeconds,
    pollSeconds: 5,
    probes: { Invoicing: probe },
    readEvents: async () => new Map(events.map((item) => [item.event.id, item])),
    onProgress: (line) => progress.push(line),
    deadLetterBaseline: new Map([[invoicingDeadLetters.address.url, 0]]),
    now: () => nowMs,
    pause: async (seconds) => void (nowMs += seconds * 1000),
  };
}

const clients = (): VerifyClients => ({ sqs }) as unknown as VerifyClients;

describe('waitUntilQuiet', () => {
  test('an event whose probe gives it two tallies, dead-lettered once, is settled: the flow is quiet', async () => {
    // GIVEN two events: one applied (both its tallies 1), one rejected for good (both tallies 0, one dead letter)
    invoicingDeadLetters.send({ body: JSON.stringify({ id: 'e-malformed' }), origin: { via: 'send-message', eventId: 'e-malformed' } });
    const settle = options(invoicingProbe(new Set(['e-applied'])), [runEvent('e-applied'), runEvent('e-malformed')], 60);

    // WHEN verify waits, THEN the flow is quiet: one open event against one dead letter
    await expect(waitUntilQuiet(clients(), flow(), settle)).resolves.toBeUndefined();
    expect(settle.progress.join('\n')).not.toContain('neither applied nor dead-lettered');
  });

  test('at the time limit it says, in its error, what it still waited for', async () => {
    // GIVEN an event neither applied nor dead-lettered, and the other dead-lettered (the DLQ holds it; its count is
    // not above the baseline, yet a dead letter carrying a run event's id is the run's: R43b-5)
    const settle = { ...options(invoicingProbe(new Set()), [runEvent('e-late'), runEvent('e-malformed')], 20), deadLetterBaseline: new Map([[invoicingDeadLetters.address.url, 1]]) };

    // WHEN verify waits past its limit
    const error = await waitUntilQuiet(clients(), flow(), settle).catch((caught: unknown) => caught);

    // THEN NotQuietError, with the limit and each thing it waited for, apart
    expect(error).toBeInstanceOf(NotQuietError);
    expect((error as NotQuietError).timeoutSeconds).toBe(20);
    expect((error as NotQuietError).waitingFor).toEqual(['Invoicing: 1 of 2 event(s) neither applied nor dead-lettered yet (in the relay or on the way)']);
    expect((error as NotQuietError).message).toContain('still waiting for Invoicing: 1 of 2 event(s)');
  });
});

describe('openEvents', () => {
  const taken = new Set(['e1', 'e2', 'e3']);

  test('an aggregate tally adds the shortfall its events\' own tallies do not explain; events not taken are not counted', () => {
    // e1 applied; e2 short on its own tally; the customer tally over e1..e3 is short by 2: e2 and one more (e3)
    const tallies = [
      { subject: 'order e1', eventIds: ['e1'], applied: 1 },
      { subject: 'order e2', eventIds: ['e2'], applied: 0 },
      { subject: 'customer c1', eventIds: ['e1', 'e2', 'e3', 'not-taken'], applied: 1 },
    ];
    expect(openEvents(tallies, taken)).toBe(2);
  });

  test('two aggregate tallies over the same events (two counts per customer) count their events once', () => {
    const tallies = [
      { subject: 'customer c1 ledger', eventIds: ['e1', 'e2'], applied: 1 },
      { subject: 'customer c1 stats', eventIds: ['e2', 'e1'], applied: 0 },
    ];
    expect(openEvents(tallies, taken)).toBe(2);
  });
});
