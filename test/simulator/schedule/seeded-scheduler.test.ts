/**
 * The scheduler's steps around a request that is with DynamoDB, driven directly (no worker, no proxy): the proxy's
 * part is played by the test, which forwards a request when its turn comes and says it was dispatched.
 * - While a dispatched request is with DynamoDB, the seed may take another environment's step (the two cores work at
 *   once), and what the seed can choose does not depend on whether DynamoDB has answered.
 * - No second request is forwarded before the first one's answer: DynamoDB applies them in the seed's order.
 * And the turns: one step chosen among all, a worker step of each other environment beside it, and what the workers
 * did delivered environment by environment before the next turn.
 */
import { describe, expect, test } from 'vitest';
import type { QuietReport } from '../../../simulator/lambda/worker-protocol';
import { SeededScheduler } from '../../../simulator/schedule/seeded-scheduler';
import { type ScheduledEnvironment } from '../../../simulator/schedule/scheduled-environment';
import { type ScheduledRequest } from '../../../simulator/schedule/schedule-types';

const SEEDS = Array.from({ length: 12 }, (_, index) => `pipeline-${index}`);

/** The report of a worker that runs one invocation and waits for `outstanding` requests it sent. */
function quietWith(requests: number, answered: number): QuietReport {
  return { type: 'quiet', invocations: 1, started: requests, scheduledStarted: requests, finished: answered, scheduledFinished: answered, timersFired: 0, timers: 0, nextTimerDue: -1 };
}

/** An environment running an invocation that sent `count` requests at once; their forward turns are recorded. */
function runningWith(scheduler: SeededScheduler, label: string, count: number, forwarded: string[]): { environment: ScheduledEnvironment; requests: ScheduledRequest[] } {
  const environment = scheduler.environment(label);
  environment.attach({ fireTimer: () => undefined, timeOut: () => undefined, stalled: () => undefined }, 60_000);
  environment.invocationBegan();
  const requests = Array.from({ length: count }, (_, index) => {
    const request = environment.arrive('GetItem', Buffer.from(`{"request":"${label}-${index}"}`));
    void request.forwardTurn.then(() => forwarded.push(`${label}-${index}`));
    return request;
  });
  environment.quiet(quietWith(count, 0));
  return { environment, requests };
}

const turns = async (count = 20): Promise<void> => {
  for (let turn = 0; turn < count; turn += 1) await new Promise((resolve) => setImmediate(resolve));
};

describe('the seeded scheduler and a request with DynamoDB', () => {
  test("while a dispatched request waits for DynamoDB's answer, some seed starts another environment's invocation", async () => {
    const startedMeanwhile: string[] = [];
    for (const seed of SEEDS) {
      const scheduler = new SeededScheduler(seed);
      const forwarded: string[] = [];
      const { requests } = runningWith(scheduler, 'A#1', 1, forwarded);
      await turns();
      expect(forwarded).toEqual(['A#1-0']);
      // another invocation waits to start; the proxy sends the request to DynamoDB, which has not answered yet
      let started = false;
      scheduler.environment('B#1').requestStart(() => (started = true));
      requests[0]!.dispatched();
      await turns();
      if (started) startedMeanwhile.push(seed);
    }
    expect(startedMeanwhile.length).toBeGreaterThan(0);
  });

  test("no seed forwards a second request before the first one's answer", async () => {
    for (const seed of SEEDS) {
      const scheduler = new SeededScheduler(seed);
      const forwarded: string[] = [];
      const { environment, requests } = runningWith(scheduler, 'A#1', 2, forwarded);
      await turns();
      expect(forwarded).toHaveLength(1);
      const first = requests[Number(forwarded[0]!.slice(-1))]!;
      first.dispatched();
      await turns();
      // whatever the seed chose meanwhile (the first one's reply, which waits, or the second's forward), the second
      // request is still held
      expect(forwarded, seed).toHaveLength(1);
      // DynamoDB answers the first: from then on the second may go (before or after the first's reply reaches the worker)
      let replied = false;
      void first.replyTurn().then(() => (replied = true));
      await turns();
      if (replied) {
        first.answered();
        environment.quiet(quietWith(2, 1));
        await turns();
      }
      expect(forwarded, seed).toHaveLength(2);
    }
  });
});

describe('a turn: one step chosen among all, and a worker step of each other environment beside it', () => {
  test('three invocations waiting to start all start in one turn, whatever the seed', async () => {
    for (const seed of SEEDS) {
      const scheduler = new SeededScheduler(seed);
      const started: string[] = [];
      for (const label of ['A#1', 'B#1', 'C#1']) {
        const environment = scheduler.environment(label);
        environment.attach({ fireTimer: () => undefined, timeOut: () => undefined, stalled: () => undefined }, 60_000);
        environment.requestStart(() => {
          started.push(label);
          environment.invocationBegan();
        });
      }
      await turns();
      expect(started.sort(), seed).toEqual(['A#1', 'B#1', 'C#1']);
      expect(scheduler.figures(), seed).toMatchObject({ turns: 1, steps: 3, starts: 3 });
    }
  });

  test("beside one environment's forward, another environment's worker runs; the environment whose request is forwarded runs nothing else", async () => {
    const turnsWithBoth: string[] = [];
    for (const seed of SEEDS) {
      const scheduler = new SeededScheduler(seed);
      const forwarded: string[] = [];
      const { environment: a } = runningWith(scheduler, 'A#1', 2, forwarded);
      const forwardTurns: number[] = [];
      a.attach({ fireTimer: () => undefined, timeOut: () => undefined, stalled: () => undefined }, 60_000);
      let startTurn: number | undefined;
      scheduler.environment('B#1').requestStart(() => (startTurn = scheduler.figures().turns));
      const recordForwards = (): void => {
        while (forwardTurns.length < forwarded.length) forwardTurns.push(scheduler.figures().turns);
      };
      for (let turn = 0; turn < 20; turn += 1) {
        await turns(1);
        recordForwards();
      }
      // the first turn: the seed picked one of A#1's two forwards or B#1's start; B#1 starts in that turn either way,
      // and A#1 never had both of its requests forwarded (the first is not answered)
      expect(startTurn, seed).toBe(1);
      expect(forwarded.length, seed).toBeLessThanOrEqual(1);
      if (forwardTurns[0] === 1) turnsWithBoth.push(seed);
    }
    expect(turnsWithBoth.length).toBeGreaterThan(0);
  });

  test("what the workers of a turn did reaches the run environment by environment in the labels' order, before the next turn", async () => {
    const scheduler = new SeededScheduler('deliveries');
    const delivered: string[] = [];
    const environments = ['A#1', 'B#1'].map((label) => {
      const environment = scheduler.environment(label);
      environment.attach({ fireTimer: () => undefined, timeOut: () => undefined, stalled: () => undefined }, 60_000);
      return environment;
    });
    const [a, b] = environments as [ScheduledEnvironment, ScheduledEnvironment];
    // B's worker wrote first (its lines came in first), then A's; B's invocation ended in between
    b.deliver(() => delivered.push('B line 1'));
    b.deliver(() => delivered.push('B ended'));
    a.deliver(() => delivered.push('A line 1'));
    a.deliver(() => delivered.push('A line 2'));
    // a start offered meanwhile waits for the deliveries
    let startedAfter: string[] | undefined;
    a.requestStart(() => {
      startedAfter = [...delivered];
      a.invocationBegan();
    });
    expect(delivered).toEqual([]);
    await turns();
    expect(delivered).toEqual(['A line 1', 'A line 2', 'B line 1', 'B ended']);
    expect(startedAfter).toEqual(delivered);
  });

  test('what names no environment (a blocked call) comes after the environments, sorted, whichever came first', async () => {
    const scheduler = new SeededScheduler('unattributed');
    const delivered: string[] = [];
    const a = scheduler.environment('A#1');
    scheduler.deliverUnattributed('fn-b', () => delivered.push('blocked call of fn-b'));
    scheduler.deliverUnattributed('fn-a', () => delivered.push('blocked call of fn-a'));
    a.deliver(() => delivered.push('A line'));
    await turns();
    expect(delivered).toEqual(['A line', 'blocked call of fn-a', 'blocked call of fn-b']);
  });
});

describe("a write's reply beside a turn", () => {
  test("is sometimes left out, so the write stays ongoing into later turns (another request may still meet it); a read's never is", async () => {
    const keptOngoing: string[] = [];
    for (const seed of SEEDS) {
      for (const operation of ['PutItem', 'GetItem']) {
        const scheduler = new SeededScheduler(seed);
        const a = scheduler.environment('A#1');
        a.attach({ fireTimer: () => undefined, timeOut: () => undefined, stalled: () => undefined }, 60_000);
        a.invocationBegan();
        const request = a.arrive(operation, Buffer.from('{"TableName":"t","Item":{"pk":{"S":"x"}}}'));
        a.quiet(quietWith(1, 0));
        let replyTurn: number | undefined;
        let startTurn: number | undefined;
        void request.forwardTurn.then(async () => {
          // as A's request goes to DynamoDB, B's invocation asks to start: the next turn offers B's start and A's reply
          scheduler.environment('B#1').requestStart(() => (startTurn = scheduler.figures().turns));
          request.dispatched();
          await request.replyTurn();
          replyTurn = scheduler.figures().turns;
          request.answered();
          a.quiet(quietWith(1, 1));
        });
        await turns();
        expect(startTurn, seed).toBe(2);
        expect(replyTurn, seed).toBeGreaterThanOrEqual(2);
        if (operation === 'GetItem') expect(replyTurn, `${seed}: a read's reply runs in the turn B starts in`).toBe(2);
        else if (replyTurn! > startTurn!) keptOngoing.push(seed);
      }
    }
    expect(keptOngoing.length).toBeGreaterThan(0);
    expect(keptOngoing.length).toBeLessThan(SEEDS.length);
  });
});
