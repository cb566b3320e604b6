/**
 * Commands of the ordered model (ordered-commands.ts, ordered-world.ts) of the fourteenth session: reading an ordered
 * subscriber's FIFO dead-letter queue whole (review ro13, RO13-8: an aggregate's next event behind ten letters that
 * wait for it), `fence carry` from another flow's inbox (RO13-5), and a redrive that dies between a send and its delete,
 * run again within 5 minutes (review ro15, RO15-1). Each is followed by the world's check. Not a
 * test file.
 */
import fc from 'fast-check';
import type { OrderedWorld } from './ordered-world';

/** The model and the real system as ordered-commands.ts has them (OrderedModel, OrderedReal), without importing it back. */
type Command = fc.AsyncCommand<{ produced: number }, { readonly world: OrderedWorld; readonly scheduler: fc.Scheduler }>;

/**
 * `events` new events of the aggregate committed, relayed and each failing until SQS dead-letters it, then the
 * operator's `dlq redrive --yes` with the real CLI, the aggregate's lowest letter put behind the others in the FIFO
 * dead-letter queue: with eleven or more, its next event sits behind ten that wait for it. The world checks the read
 * was whole (nothing unread), nothing lost, and what was sent is what the fences admit, in sequence.
 */
export class NextEventBehindWaitingLetters implements Command {
  public constructor(
    private readonly aggregate: number,
    private readonly events: number,
  ) {}
  public check = (): boolean => true;
  public async run(model: { produced: number }, real: { readonly world: OrderedWorld; readonly scheduler: fc.Scheduler }): Promise<void> {
    const { world } = real;
    model.produced += this.events;
    for (let event = 0; event < this.events; event++) await world.produce(real.scheduler, this.aggregate, 1);
    while (world.pendingRelay(this.aggregate) > 0) world.relay(this.aggregate, 1);
    await world.check();
    for (let event = 0; event < this.events; event++) await world.exhaust(this.aggregate, 0);
    await world.check();
    await world.dlqRedriveWhole(1, 'next-last');
    await real.world.check();
  }
  public toString = (): string => `produce(aggregate ${this.aggregate}) x${this.events}, each exhausted, then dlqRedrive(--yes, the aggregate's next letter behind the others)`;
}

/**
 * The operator's `fence carry --from-table` naming another flow's inbox with a subscriber of this name (the same
 * aggregate ids `ahead` further): refused, nothing moved (review ro13, RO13-5).
 */
export class CarryFromAnotherFlow implements Command {
  public constructor(private readonly ahead: number) {}
  public check = (): boolean => true;
  public async run(_model: { produced: number }, real: { readonly world: OrderedWorld; readonly scheduler: fc.Scheduler }): Promise<void> {
    await real.world.carryFromAnotherFlow(this.ahead);
    await real.world.check();
  }
  public toString = (): string => `fenceCarry(--from-table another flow's inbox, ${this.ahead} ahead)`;
}

/**
 * The operator's `dlq redrive --yes` dies right after its first SendMessage, before the delete; the consumer
 * dead-letters what it sent again; the operator runs it again 2 minutes later, inside SQS's 5-minute deduplication
 * interval (review ro15, RO15-1). The world checks nothing is lost and nothing sent twice.
 */
export class RedriveDiesAfterSend implements Command {
  public check = (model: { produced: number }): boolean => model.produced > 0;
  public async run(_model: { produced: number }, real: { readonly world: OrderedWorld; readonly scheduler: fc.Scheduler }): Promise<void> {
    await real.world.dlqRedriveDiesAfterSend();
    await real.world.check();
  }
  public toString = (): string => 'dlqRedrive(--yes, dies after its first send; rerun within 5 minutes)';
}

/** The commands of this file, for the search's vocabulary. */
export function dlqOrderCommands(): Array<fc.Arbitrary<Command>> {
  return [
    fc.tuple(fc.integer({ min: 0, max: 1 }), fc.constantFrom(3, 11, 12)).map(([aggregate, events]) => new NextEventBehindWaitingLetters(aggregate, events)),
    fc.integer({ min: 1, max: 3 }).map((ahead) => new CarryFromAnotherFlow(ahead)),
    fc.constant(new RedriveDiesAfterSend()),
  ];
}
