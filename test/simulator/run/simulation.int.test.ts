/**
 * The simulator end to end on the example app: its synthesized templates, its real bundled Lambda assets, the shared
 * DynamoDB Local, and the example's scenario (PlaceOrder and Fulfilment commands, six effect probes).
 */
import * as path from 'node:path';
import { beforeAll, describe, expect, inject, test } from 'vitest';
import { fulfilmentCommands, placeOrderCommands } from '../../../example/simulation/scenario';
import type { FaultKind } from '../../../simulator/faults/fault-plan';
import { loadScenario, type SimulationScenario } from '../../../simulator/run/scenario';
import { seededRandom, seedNumber } from '../../../simulator/schedule/seeded-random';
import type { RunProfile } from '../../../simulator/run/run-profile';
import { runSimulation, type SimulationResult } from '../../../simulator/run/simulation';
import { exampleAssembly } from '../../support/example-assembly';

const PROJECT = path.resolve(__dirname, '../../..');
// Loyalty is the loyalty team's subscriber, in the example's second account (example/loyalty-example-stack.ts)
const SUBSCRIBERS = ['Billing', 'Invoicing', 'Notifications', 'Shipping', 'CustomerStats', 'Loyalty', 'OrderTracking'];
/** A seed whose first orders include a malformed one (checked in the test). */
const SEED = 'ci-7';

let assemblyDirectory: string;
let scenario: SimulationScenario;

beforeAll(async () => {
  assemblyDirectory = await exampleAssembly();
  scenario = await loadScenario('example/simulation/scenario.ts', PROJECT);
});

function simulate(options: { count: number; seed: string; concurrency: number; rates?: Parameters<typeof runSimulation>[0]['rates'] }): Promise<SimulationResult> {
  return runSimulation({ cwd: PROJECT, assemblyDirectory, scenario, dynamoDbEndpoint: inject('dynamoDbEndpoint'), ...options });
}

function faultsOfKind(result: SimulationResult, kind: FaultKind): number {
  return result.subscribers.reduce((sum, subscriber) => sum + (subscriber.faultsByKind[kind] ?? 0), 0);
}

describe('simulating the example app', () => {
  test('every event reaches every matching subscriber exactly once under every kind of fault', async () => {
    // GIVEN seeded orders that include a malformed one, and high fault rates
    const commands = placeOrderCommands(16, seededRandom(seedNumber(SEED)));
    const malformed = commands.filter((command) => !Number.isInteger(command.totalCents));
    expect(malformed.length).toBeGreaterThan(0);

    // WHEN
    const result = await simulate({ count: 16, seed: SEED, concurrency: 2, rates: { duplicate: 0.25, lostResponse: 0.06, throttle: 0.06, crash: 0.06 } });

    // THEN no invariant is violated, and every subscriber saw events, redeliveries and effects
    expect(result.violations).toEqual([]);
    expect(result.failurePathsNotMet).toEqual([]);
    expect(result.subscribers.map((subscriber) => subscriber.name).sort()).toEqual([...SUBSCRIBERS].sort());
    for (const subscriber of result.subscribers) {
      expect(subscriber.events, subscriber.name).toBeGreaterThan(0);
      expect(subscriber.deliveries, subscriber.name).toBeGreaterThan(subscriber.events);
      expect(subscriber.effects, subscriber.name).toBeDefined();
    }
    // 16 orders placed, 4 of them fulfilled (3 steps each)
    expect(fulfilmentCommands(16, seededRandom(seedNumber(SEED)))).toHaveLength(12);
    expect(result.producer).toMatchObject({ total: 16 + 12, succeeded: 16 + 12 });
    expect(result.relay.committedEvents).toBe(16 + 16 - malformed.length + 12);
    // the order check read every step of every fulfilled order at the ordered subscriber, and found them in sequence
    expect(result.subscribers.find((subscriber) => subscriber.name === 'OrderTracking')?.orderChecked).toEqual({ aggregates: 4, events: 12 });
    expect(result.subscribers.filter((subscriber) => subscriber.orderChecked !== undefined).map((subscriber) => subscriber.name)).toEqual(['OrderTracking']);
    // every kind of fault was injected somewhere, and the runtime suppressed the duplicates it caused
    for (const kind of ['duplicate-delivery', 'concurrent-receive', 'lost-delete', 'lost-response', 'throttle'] as const) {
      expect(faultsOfKind(result, kind), kind).toBeGreaterThan(0);
    }
    expect(faultsOfKind(result, 'crash') + faultsOfKind(result, 'crash-after-commit')).toBeGreaterThan(0);
    expect(result.subscribers.reduce((sum, subscriber) => sum + subscriber.duplicatesSuppressed, 0)).toBeGreaterThan(0);
    // requests refused with a transaction conflict (as DynamoDB refuses them; how many depends on timing) are counted by operation
    const { refused, byOperation } = result.transactionConflicts;
    expect(Object.values(byOperation).reduce((sum, count) => sum + count, 0)).toBe(refused);
    // the operator resolved the steps whose outcome the faults left unknown, and redrove their messages
    expect(result.operator).toBeDefined();
    expect((result.operator?.resolvedSuccess ?? 0) + (result.operator?.resolvedTryAgain ?? 0)).toBeGreaterThan(0);
    expect(result.operator?.movedBack).toBeGreaterThan(0);
    expect(result.operator?.refused).toEqual([]);
    // the malformed order was dead-lettered by the validating subscribers, with its reason, and never applied
    const billingDeadLetters = result.deadLetters.get('Billing') ?? [];
    for (const order of malformed) {
      expect(billingDeadLetters.find((finding) => finding.eventId === `order-placed-${order.orderId}`)?.explanation).toMatch(/^SchemaValidationError: .*totalCents/);
    }
  });

  test('a clean run delivers each event once: no retries, no duplicates, only the malformed order dead-lettered', async () => {
    const profiles: RunProfile[] = [];
    const result = await runSimulation({
      cwd: PROJECT,
      assemblyDirectory,
      scenario,
      dynamoDbEndpoint: inject('dynamoDbEndpoint'),
      count: 6,
      seed: SEED,
      concurrency: 2,
      rates: { duplicate: 0, lostResponse: 0, throttle: 0, crash: 0 },
      onProfile: (profile) => void profiles.push(profile),
    });

    // where its time went: every phase once, in order, within the run's own measure; the rounds by scheduler turn
    expect(profiles).toHaveLength(1);
    const [profile] = profiles;
    expect(profile!.phases.map(({ phase }) => phase)).toEqual(['assembly', 'IAM engine', 'DynamoDB Local start', 'local flow', 'rounds', 'operator', 'checks', 'stop']);
    // realSeconds is taken when the report is built, before the services stop: every phase but 'stop' lies within it
    // (the rounding of each figure aside); 'stop' (DynamoDB Local, the workers, the local S3 of an app that offloads)
    // comes after it, however long it takes on a loaded machine
    expect(profile!.phases.every(({ seconds }) => seconds >= 0)).toBe(true);
    expect(profile!.phases.filter(({ phase }) => phase !== 'stop').reduce((sum, { seconds }) => sum + seconds, 0)).toBeLessThanOrEqual(result.realSeconds + 0.5);
    expect(profile!.steps.map(({ kind }) => kind)).toEqual(expect.arrayContaining(['starts', 'forwards', 'replies']));
    expect(profile!.coldStarts).toBeGreaterThanOrEqual(SUBSCRIBERS.length);
    // at concurrency 2, workers of two environments ran in one turn
    expect(profile!.stepsBeside).toBeGreaterThan(0);

    expect(result.violations).toEqual([]);
    expect(result.totalFaults).toBe(0);
    for (const subscriber of result.subscribers) {
      expect(subscriber.deliveries, subscriber.name).toBe(subscriber.events);
      expect(subscriber.retries, subscriber.name).toBe(0);
      expect(subscriber.duplicatesSuppressed, subscriber.name).toBe(0);
      expect(subscriber.effects?.applied, subscriber.name).toBe(subscriber.effects?.max);
    }
  });

  test('without the operator, a message whose step outcome is unknown stays blocked in the dead-letter queue, explained, and the run fails: its event was never applied', async () => {
    const rates = { duplicate: 0, lostResponse: 0.15, throttle: 0, crash: 0 };
    const result = await runSimulation({ cwd: PROJECT, assemblyDirectory, scenario, dynamoDbEndpoint: inject('dynamoDbEndpoint'), count: 8, seed: SEED, concurrency: 2, rates, operator: false });

    expect(result.violations.length).toBeGreaterThan(0);
    expect(result.violations).toEqual(
      result.violations.map(() => ({
        kind: 'unapplied-event',
        subscriber: expect.stringMatching(/^(Notifications|Invoicing)$/),
        detail: expect.stringMatching(/never acknowledged by it.*sent away by: MessageBlockedError: .*\(blocked for an operator, and the operator was off in this run\)$/),
      })),
    );
    expect(result.operator).toBeUndefined();
    const blocked = [...(result.deadLetters.get('Notifications') ?? []), ...(result.deadLetters.get('Invoicing') ?? [])].filter((finding) => finding.explanation?.startsWith('MessageBlockedError'));
    expect(blocked.length).toBeGreaterThan(0);
  });

  test('a seed replays the same orders and events, and both runs hold every invariant', async () => {
    const rates = { duplicate: 0.3, lostResponse: 0.05, throttle: 0.05, crash: 0.05 };
    // 16 orders: on the ordered path the budget of steered failed receives is each order's, and each message's too,
    // and at concurrency 1 one FIFO batch carries every order's events, one steered fault per invocation. At 12 orders
    // (3 fulfilled) OrderTracking's first messages each spent theirs on the two crashes steered to that batch, and its
    // later invocations were too few to meet a failed record or a conflict (not-exercised, rightly: steering may not
    // fail a message's receives beyond its budget, whichever order's event the fault went to); at 8 orders (2
    // fulfilled) its 6 events came in too few invocations even before
    const first = await simulate({ count: 16, seed: 'replay', concurrency: 1, rates });
    const second = await simulate({ count: 16, seed: 'replay', concurrency: 1, rates });

    expect(first.totalFaults).toBeGreaterThan(0);
    expect([first.violations, second.violations]).toEqual([[], []]);
    expect([first.failurePathsNotMet, second.failurePathsNotMet]).toEqual([[], []]);
    // every subscriber met the failure paths the rates steer to it: a failed record and a conflict among them
    for (const subscriber of first.subscribers) {
      expect({ name: subscriber.name, handlerError: subscriber.failurePaths['handler-error'] > 0, conflict: subscriber.failurePaths.conflict > 0 }).toEqual({ name: subscriber.name, handlerError: true, conflict: true });
    }
    expect(second.producer).toEqual(first.producer);
    expect(second.relay.committedEvents).toBe(first.relay.committedEvents);
    const events = (result: SimulationResult) => result.subscribers.map(({ name, events: count }) => ({ name, events: count }));
    expect(events(second)).toEqual(events(first));
  });

});
