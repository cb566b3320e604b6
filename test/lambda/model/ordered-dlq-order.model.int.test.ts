/**
 * The ordered model (test/support/model/ordered-world.ts) on reading an ordered subscriber's FIFO dead-letter queue
 * whole (review ro13, RO13-8): an aggregate's next event in the dead-letter queue behind ten letters that wait for it.
 * `dlq redrive --yes` must read past them (nothing unread), send the whole run in sequence and lose nothing; the
 * world's checks say so. Fixed runs of the model's own commands (the search in ordered.model.int.test.ts draws
 * `NextEventBehindWaitingLetters` too). DynamoDB Local, the simulator's SQS, the real CLI.
 */
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { failureReport } from '../../support/model/search';
import { Deliver, Exhaust, Produce, Relay, type OrderedModel, type OrderedReal } from '../../support/model/ordered-commands';
import { CarryFromAnotherFlow, NextEventBehindWaitingLetters, RedriveDiesAfterSend } from '../../support/model/ordered-dlq-commands';
import { OrderedWorld } from '../../support/model/ordered-world';

const RUNS: ReadonlyArray<{ readonly name: string; readonly maxReceiveCount: number; readonly commands: () => Iterable<fc.AsyncCommand<OrderedModel, OrderedReal>> }> = [
  {
    name: 'eleven dead letters of an aggregate, its next event last: read past the ten in front',
    maxReceiveCount: 1,
    commands: () => [new NextEventBehindWaitingLetters(0, 11)],
  },
  {
    // #1 applied first: the fence at 1, then twelve more dead-lettered, #2 behind eleven that wait for it
    name: 'twelve dead letters after an applied event, the next one behind the others, with three receives each',
    maxReceiveCount: 3,
    commands: () => [new Produce(1, 1, 'none'), new Relay(1, 1, true), new Deliver(1, 0, undefined, 'none'), new NextEventBehindWaitingLetters(1, 12)],
  },
  {
    // review ro13, RO13-5: #1 applied, then `fence carry` from another flow's inbox (same subscriber name and aggregate
    // ids, two further): refused, nothing moved; #2 applies after it
    name: "fence carry from another flow's inbox is refused, nothing moved",
    maxReceiveCount: 1,
    commands: () => [new Produce(0, 1, 'none'), new Relay(0, 1, true), new Deliver(0, 0, undefined, 'none'), new CarryFromAnotherFlow(2), new Produce(0, 1, 'none')],
  },
  {
    // review ro15, RO15-1: #1 applied, #2 and #3 dead-lettered; the redrive dies after sending #2, the consumer
    // dead-letters it again, the rerun comes 2 minutes later: #2 must reach the queue again, #3 after it
    name: 'a redrive that died between a send and its delete, rerun within 5 minutes, loses nothing',
    maxReceiveCount: 1,
    commands: () => [
      new Produce(0, 3, 'none'),
      new Relay(0, 1, true),
      new Deliver(0, 0, undefined, 'none'),
      new Exhaust(0, 0),
      new Exhaust(0, 0),
      new RedriveDiesAfterSend(),
    ],
  },
];

for (const run of RUNS) {
  test(`ordered path, the fourteenth session's operator commands: ${run.name}`, async () => {
    const failure = await failureReport(
      fc.asyncProperty(fc.scheduler(), async (scheduler) => {
        const world = await OrderedWorld.start(run.maxReceiveCount, 'model-ordered-dlq-order');
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
