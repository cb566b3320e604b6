/**
 * The ordered model (test/support/model/ordered-world.ts) on the age of what the operator's plans call never applied
 * (review r8b, R8b-10): the outbox's history outlives the inbox's records, so `replay` (and a planned redrive) of an
 * event applied longer ago than the deduplication window finds no record of it below the fence. The plan must call it
 * unproven, never "never applied, write it again" (the world's invariant: no `reused` entry is applied). Fixed runs of
 * the model's own commands (the search in ordered.model.int.test.ts draws them too, rarely in this order). DynamoDB Local.
 */
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { failureReport } from '../../support/model/search';
import { Age, Deliver, Exhaust, Produce, Relay, Replay, type OrderedModel, type OrderedReal } from '../../support/model/ordered-commands';
import { OrderedWorld } from '../../support/model/ordered-world';

const RUNS: ReadonlyArray<{ readonly name: string; readonly maxReceiveCount: number; readonly commands: () => Iterable<fc.AsyncCommand<OrderedModel, OrderedReal>> }> = [
  {
    // #1 and #2 applied, the clock past the window (#1's record expired, the fence holds #2), then `replay` from #1
    name: 'replay of an event applied longer ago than the window: unproven, not never applied',
    maxReceiveCount: 1,
    commands: () => [new Produce(0, 1, 'none'), new Produce(0, 1, 'none'), new Relay(0, 1, true), new Deliver(0, 0, undefined, 'none'), new Deliver(0, 0, undefined, 'none'), new Age(), new Replay(0, 1)],
  },
  {
    // #1 applied, a copy of it dead-lettered behind #2's failures is planned after the window: the drain's planned
    // redrive must not write it again (the runbook's step 5 decides from the subscriber's state)
    name: 'a dead letter of an event applied longer ago than the window, planned after it',
    maxReceiveCount: 1,
    commands: () => [new Produce(0, 1, 'none'), new Relay(0, 2, true), new Deliver(0, 0, undefined, 'none'), new Produce(0, 1, 'none'), new Relay(0, 1, true), new Deliver(0, 1, undefined, 'none'), new Age(), new Exhaust(0, 0)],
  },
];

for (const run of RUNS) {
  test(`ordered path, the plan's age rule: ${run.name}`, async () => {
    const failure = await failureReport(
      fc.asyncProperty(fc.scheduler(), async (scheduler) => {
        const world = await OrderedWorld.start(run.maxReceiveCount, 'model-ordered-age');
        try {
          await fc.asyncModelRun(() => ({ model: { produced: 0 } satisfies OrderedModel, real: { world, scheduler } satisfies OrderedReal }), run.commands());
          await world.drain();
          if (world.violations.length > 0) throw new Error(world.report());
        } finally {
          await world.stop();
        }
      }),
      { runs: 1, seed: 1 },
    );
    expect(failure).toBeUndefined();
  });
}
