/**
 * The commands of the ordered path's model-based test (fast-check `fc.commands`) over ordered-world.ts: what the
 * producers, the stream and relay, SQS, Lambda and the operator do. Each is followed by the world's check. Not a test file.
 */
import fc from 'fast-check';
import type { OrderedCrash, OrderedFault, OrderedWorld } from './ordered-world';
import { dlqOrderCommands } from './ordered-dlq-commands';

/** The abstract model: only what preconditions need. */
export interface OrderedModel {
  produced: number;
}

/** The real system and the scheduler of this run's interleavings. */
export interface OrderedReal {
  readonly world: OrderedWorld;
  readonly scheduler: fc.Scheduler;
}

type Command = fc.AsyncCommand<OrderedModel, OrderedReal>;

export class Produce implements Command {
  public constructor(
    private readonly aggregate: number,
    private readonly producers: number,
    private readonly fault: OrderedFault,
  ) {}
  public check = (): boolean => true;
  public async run(model: OrderedModel, real: OrderedReal): Promise<void> {
    model.produced += this.producers;
    await real.world.produce(real.scheduler, this.aggregate, this.producers, this.fault);
    await real.world.check();
  }
  public toString = (): string =>
    `produce(aggregate ${this.aggregate}, ${this.producers} producer${this.producers === 1 ? '' : 's'} at once${this.fault === 'none' ? '' : `, ${this.fault}`})`;
}

export class Relay implements Command {
  public constructor(
    private readonly aggregate: number,
    private readonly copies: number,
    private readonly all: boolean,
  ) {}
  public check = (model: Readonly<OrderedModel>): boolean => model.produced > 0;
  public async run(_model: OrderedModel, real: OrderedReal): Promise<void> {
    do real.world.relay(this.aggregate, this.copies);
    while (this.all && real.world.pendingRelay(this.aggregate) > 0);
    await real.world.check();
  }
  public toString = (): string => `relay(aggregate ${this.aggregate}, ${this.all ? 'every pending record' : 'one record'}, ${this.copies} cop${this.copies === 1 ? 'y' : 'ies'})`;
}

export class Deliver implements Command {
  public constructor(
    private readonly aggregate: number,
    private readonly offset: number,
    private readonly crash: OrderedCrash | undefined,
    private readonly fault: OrderedFault,
  ) {}
  public check = (model: Readonly<OrderedModel>): boolean => model.produced > 0;
  public async run(_model: OrderedModel, real: OrderedReal): Promise<void> {
    await real.world.deliver(this.aggregate, this.offset, this.crash, this.fault);
    await real.world.check();
  }
  public toString = (): string =>
    `deliver(aggregate ${this.aggregate}, ${this.offset === 0 ? 'first of group' : `message ${this.offset} of group`}${this.crash === undefined ? '' : `, dies ${this.crash.when} request ${this.crash.request}`}${this.fault === 'none' ? '' : `, ${this.fault}`})`;
}

class DeliverConcurrently implements Command {
  public constructor(private readonly aggregate: number, private readonly offsets: readonly [number, number]) {}
  public check = (model: Readonly<OrderedModel>): boolean => model.produced > 0;
  public async run(_model: OrderedModel, real: OrderedReal): Promise<void> {
    await real.world.deliverConcurrently(real.scheduler, this.aggregate, this.offsets);
    await real.world.check();
  }
  public toString = (): string => `deliverConcurrently(aggregate ${this.aggregate}, messages ${this.offsets.join(' and ')})`;
}

class Redrive implements Command {
  public constructor(private readonly how: 'as-is' | 'reversed' | 'planned') {}
  public check = (model: Readonly<OrderedModel>): boolean => model.produced > 0;
  public async run(_model: OrderedModel, real: OrderedReal): Promise<void> {
    await real.world.redrive(this.how);
    await real.world.check();
  }
  public toString = (): string => `redrive(${this.how})`;
}

/** The handler fails on one message until SQS dead-letters it. */
export class Exhaust implements Command {
  public constructor(private readonly aggregate: number, private readonly offset: number) {}
  public check = (model: Readonly<OrderedModel>): boolean => model.produced > 0;
  public async run(_model: OrderedModel, real: OrderedReal): Promise<void> {
    await real.world.exhaust(this.aggregate, this.offset);
    await real.world.check();
  }
  public toString = (): string => `exhaust(aggregate ${this.aggregate}, ${this.offset === 0 ? 'first of group' : `message ${this.offset} of group`}: fails until dead-lettered)`;
}

/** The operator's `dlq redrive` of the ordered subscriber: only what the fences admit now. */
class RedriveReady implements Command {
  public check = (model: Readonly<OrderedModel>): boolean => model.produced > 0;
  public async run(_model: OrderedModel, real: OrderedReal): Promise<void> {
    await real.world.redriveReady();
    await real.world.check();
  }
  public toString = (): string => 'dlqRedrive(as the fences admit)';
}

/** The operator's `replay` of an aggregate's events from a sequence on, from the outbox history. */
export class Replay implements Command {
  public constructor(private readonly aggregate: number, private readonly fromSequence: number) {}
  public check = (model: Readonly<OrderedModel>): boolean => model.produced > 0;
  public async run(_model: OrderedModel, real: OrderedReal): Promise<void> {
    await real.world.replay(this.aggregate, this.fromSequence);
    await real.world.check();
  }
  public toString = (): string => `replay(aggregate ${this.aggregate}, from #${this.fromSequence})`;
}

export class Age implements Command {
  public check = (model: Readonly<OrderedModel>): boolean => model.produced > 0;
  public async run(_model: OrderedModel, real: OrderedReal): Promise<void> {
    real.world.age();
    await real.world.check();
  }
  public toString = (): string => 'age(past the inbox window)';
}

/** The subscriber is redeployed with a longer deduplication window (review ro12, RO12-7). */
export class RaiseWindow implements Command {
  public check = (): boolean => true;
  public async run(_model: OrderedModel, real: OrderedReal): Promise<void> {
    real.world.raiseWindow();
    await real.world.check();
  }
  public toString = (): string => 'raiseWindow(x3)';
}

// ---- issue 38 (h1): permanent failures to the FIFO dead-letter queue, outbox restores, the heads carried over ----

/** The handler fails permanently on one message: it must reach the FIFO dead-letter queue at once, with its reason. */
class Permanent implements Command {
  public constructor(private readonly aggregate: number, private readonly offset: number) {}
  public check = (model: Readonly<OrderedModel>): boolean => model.produced > 0;
  public async run(_model: OrderedModel, real: OrderedReal): Promise<void> {
    await real.world.permanent(this.aggregate, this.offset);
    await real.world.check();
  }
  public toString = (): string => `permanent(aggregate ${this.aggregate}, ${this.offset === 0 ? 'first of group' : `message ${this.offset} of group`}: PermanentError)`;
}

/** The outbox table is restored to an earlier point in a new table, or replaced by an empty one: the heads go back. */
export class RestoreOutbox implements Command {
  public constructor(private readonly kind: 'replace' | 'point-in-time', private readonly back: number) {}
  public check = (model: Readonly<OrderedModel>): boolean => model.produced > 0;
  public async run(_model: OrderedModel, real: OrderedReal): Promise<void> {
    await real.world.restore(this.kind, this.back);
    await real.world.check();
  }
  public toString = (): string => (this.kind === 'replace' ? 'replaceOutboxTable(every head gone)' : `restoreOutbox(point in time: every head at least ${this.back} back)`);
}

/**
 * The operator's `outbox heads --from-history --history-table <old> --yes` (`former`) or `outbox heads --from-fences
 * --yes` (`fences`: only what was applied, so the old table's events in flight race the new generation's, review F2),
 * then the dead-lettered events written again.
 */
export class CarryHeads implements Command {
  /** `allowUndrained`: `--allow-undrained` with `--from-fences` (the carry goes on with events in flight). */
  public constructor(private readonly source: 'former' | 'fences', private readonly allowUndrained = true) {}
  public check = (model: Readonly<OrderedModel>): boolean => model.produced > 0;
  public async run(_model: OrderedModel, real: OrderedReal): Promise<void> {
    await real.world.carryHeads(this.source, this.allowUndrained);
    await real.world.check();
  }
  public toString = (): string =>
    `outboxHeads(from ${this.source === 'former' ? 'the old table\'s history' : `the fences${this.allowUndrained ? ', --allow-undrained' : ''}`}, then the reused ones written again)`;
}

/**
 * The runbook's steps 1-3 at once with `--from-fences`, while the old table's events are still in flight (in the stream
 * and the queue): the outbox table replaced or restored, the heads carried from the fences (a new generation based at
 * what the subscriber applied). What follows races the old table's events against the new generation's.
 */
export class ReplaceAndCarryFromFences implements Command {
  public constructor(
    private readonly kind: 'replace' | 'point-in-time',
    private readonly back: number,
    private readonly producing: readonly number[],
    private readonly inFlight: number,
    private readonly newFirst: boolean,
  ) {}
  public check = (model: Readonly<OrderedModel>): boolean => model.produced > 0;
  public async run(model: OrderedModel, real: OrderedReal): Promise<void> {
    model.produced += this.producing.length * (1 + this.inFlight);
    // the old table's last events, committed and queued, not yet applied: what the fences cannot see
    for (const index of this.producing) {
      for (let event = 0; event < this.inFlight; event++) await real.world.produce(real.scheduler, index, 1);
      while (real.world.pendingRelay(index) > 0) real.world.relay(index, 1);
    }
    await real.world.restore(this.kind, this.back);
    await real.world.carryHeads('fences');
    // the producers go on at once: the new generation's events queue behind (or, delivered out of order, before) the old ones
    for (const index of this.producing) {
      await real.world.produce(real.scheduler, index, 1);
      while (real.world.pendingRelay(index) > 0) real.world.relay(index, 1);
      // the new generation's event arrives before the old ones (a redrive, a replay, or a standard queue's order)
      if (this.newFirst) await real.world.deliver(index, -1);
    }
    await real.world.check();
  }
  public toString = (): string =>
    `${this.producing.map((index) => `produce(aggregate ${index}) x${this.inFlight} relayed + `).join('')}${this.kind === 'replace' ? 'replaceOutboxTable' : `restoreOutbox(every head at least ${this.back} back)`} + outboxHeads(from the fences, old events in flight)` +
    `${this.producing.map((index) => ` + produce(aggregate ${index}) relayed${this.newFirst ? ', delivered first' : ''}`).join('')}`;
}

const raceAcrossCarry = fc
  .tuple(
    fc.constantFrom<'replace' | 'point-in-time'>('replace', 'point-in-time'),
    fc.integer({ min: 1, max: 3 }),
    fc.constantFrom<readonly number[]>([], [0], [1], [0, 1], [0, 1]),
    fc.integer({ min: 0, max: 2 }),
    fc.boolean(),
  )
  .map(([kind, back, producing, inFlight, newFirst]) => new ReplaceAndCarryFromFences(kind, back, producing, inFlight, newFirst));

/** The commands of issue 38 items 1 and 2. */
function restoreCommands(): Array<fc.Arbitrary<Command>> {
  return [
    fc.tuple(aggregate, fc.constantFrom(0, 0, 1)).map(([index, offset]) => new Permanent(index, offset)),
    fc.tuple(fc.constantFrom<'replace' | 'point-in-time'>('replace', 'point-in-time'), fc.integer({ min: 1, max: 3 })).map(([kind, back]) => new RestoreOutbox(kind, back)),
    fc.constantFrom<'former' | 'fences'>('former', 'fences').map((source) => new CarryHeads(source)),
    // review F2: a generation carried from the fences, the old table's events racing it (steered: the race needs both)
    raceAcrossCarry,
    raceAcrossCarry,
  ];
}
// ---- end of issue 38 (h1) ----

// ---- issue 38, items 3 and 4 (the operator's fence skip and inbox forget, with the real CLI) ----------------------

/**
 * The operator's `fence skip` from where the fence stands to `ahead` sequences on: any --to, past the head included;
 * the model's dead letters in the subscriber's FIFO dead-letter queue, passed on purpose with `--drop-dead-letters` or not.
 */
export class FenceSkip implements Command {
  public constructor(private readonly aggregate: number, private readonly ahead: number, private readonly dropDeadLetters = false) {}
  public check = (model: Readonly<OrderedModel>): boolean => model.produced > 0;
  public async run(_model: OrderedModel, real: OrderedReal): Promise<void> {
    await real.world.fenceSkip(this.aggregate, this.ahead, this.dropDeadLetters);
    await real.world.check();
  }
  public toString = (): string => `fenceSkip(aggregate ${this.aggregate}, fence + ${this.ahead}${this.dropDeadLetters ? ', --drop-dead-letters' : ''})`;
}

/** The operator's `inbox forget` of any key: an applied event's record, the fence's own key, an unknown event. */
class InboxForget implements Command {
  public constructor(private readonly aggregate: number, private readonly key: 'applied' | 'fence' | 'unknown', private readonly withOutput: boolean) {}
  public check = (model: Readonly<OrderedModel>): boolean => model.produced > 0;
  public async run(_model: OrderedModel, real: OrderedReal): Promise<void> {
    await real.world.inboxForget(this.aggregate, this.key, this.withOutput);
    await real.world.check();
  }
  public toString = (): string => `inboxForget(aggregate ${this.aggregate}, ${this.key} key${this.withOutput ? ', with the ordered output' : ''})`;
}

/** The operator's `dlq redrive --allow-expired --yes` of the ordered subscriber (the real CLI, the simulated SQS). */
export class DlqRedriveAllowExpired implements Command {
  public check = (model: Readonly<OrderedModel>): boolean => model.produced > 0;
  public async run(_model: OrderedModel, real: OrderedReal): Promise<void> {
    await real.world.dlqRedriveAllowExpired();
    await real.world.check();
  }
  public toString = (): string => 'dlqRedrive(--allow-expired)';
}

/** The operator's `fence replay` of an aggregate, with the subscriber's Operator output (review ro12, RO12-2, RO12-3). */
export class FenceReplay implements Command {
  public constructor(private readonly aggregate: number) {}
  public check = (model: Readonly<OrderedModel>): boolean => model.produced > 0;
  public async run(_model: OrderedModel, real: OrderedReal): Promise<void> {
    await real.world.fenceReplay(this.aggregate);
    await real.world.check();
  }
  public toString = (): string => `fenceReplay(aggregate ${this.aggregate})`;
}

/** The subscriber's inbox table restored `back` changes ago, then `fence carry` from the table restored from (review ro12, RO12-4). */
export class RestoreInbox implements Command {
  /** `proof` 'records': the carry first with `--outbox-table` only (the records and the outbox history prove the table). */
  public constructor(private readonly back: number, private readonly proof: 'outputs' | 'records' = 'outputs') {}
  public check = (model: Readonly<OrderedModel>): boolean => model.produced > 0;
  public async run(_model: OrderedModel, real: OrderedReal): Promise<void> {
    await real.world.restoreInbox(this.back, this.proof);
    await real.world.check();
  }
  public toString = (): string => `restoreInbox(${this.back} back, then fence carry${this.proof === 'records' ? ' by records and --outbox-table' : ''})`;
}

/**
 * The commands added in the thirteenth session: `fence replay`, the inbox table restored and the fences carried, a
 * raised deduplication window (until then in a fixed run only), and `dlq redrive --yes` reading a FIFO dead-letter
 * queue whole (more than 10 letters of an aggregate).
 */
function thirteenthCommands(): Array<fc.Arbitrary<Command>> {
  return [
    aggregate.map((index) => new FenceReplay(index)),
    fc.integer({ min: 1, max: 3 }).map((back) => new RestoreInbox(back)),
    fc.constant(new RaiseWindow()),
    fc.constantFrom(1, 6, 11).map((copies) => new DlqRedriveWhole(copies)),
  ];
}

/**
 * The operator's `dlq redrive --yes` of the ordered subscriber with the real CLI, each dead letter `copies` times in the
 * FIFO dead-letter queue (more than one receive of an aggregate's group: review ro12, RO12-8).
 */
export class DlqRedriveWhole implements Command {
  public constructor(private readonly copies: number) {}
  public check = (model: Readonly<OrderedModel>): boolean => model.produced > 0;
  public async run(_model: OrderedModel, real: OrderedReal): Promise<void> {
    await real.world.dlqRedriveWhole(this.copies);
    await real.world.check();
  }
  public toString = (): string => `dlqRedrive(--yes, each letter x${this.copies})`;
}

/**
 * The subscriber's inbox table restored `back` changes ago and, before the runbook's `fence carry`, an operator command
 * that sends the aggregate's events (`fence replay`, or `dlq redrive --yes`): it must refuse what the restored fences
 * would take twice (review ro13, RO13-9: the carry came with every restore, so no command ever ran between).
 */
export class RestoreInboxThen implements Command {
  public constructor(private readonly back: number, private readonly step: 'fence replay' | 'dlq redrive', private readonly aggregate: number) {}
  public check = (model: Readonly<OrderedModel>): boolean => model.produced > 0;
  public async run(_model: OrderedModel, real: OrderedReal): Promise<void> {
    await real.world.restoreInboxThen(this.back, this.step, this.aggregate);
    await real.world.check();
  }
  public toString = (): string => `restoreInbox(${this.back} back, then ${this.step === 'fence replay' ? `fenceReplay(aggregate ${this.aggregate})` : 'dlqRedrive(--yes)'} before the fence carry)`;
}

/**
 * The commands added in the fourteenth session (review ro13, RO13-9): an operator command between an inbox restore and
 * its carry. Their own list (a command more changes what every seed draws: `thirteenth` replays without them).
 */
function fourteenthCommands(): Array<fc.Arbitrary<Command>> {
  return [fc.tuple(fc.integer({ min: 1, max: 3 }), fc.constantFrom<'fence replay' | 'dlq redrive'>('fence replay', 'dlq redrive'), aggregate).map(([back, step, index]) => new RestoreInboxThen(back, step, index))];
}

/**
 * The commands added in the fifteenth session: `fence skip --drop-dead-letters`, passing on purpose the sequences
 * whose events the dead-letter queue holds (without it, `fence skip` refuses them); `fence carry` after an inbox
 * restore with `--outbox-table` only (proven by the restored table's records and the outbox history, or refused).
 */
function fifteenthCommands(): Array<fc.Arbitrary<Command>> {
  return [
    fc.tuple(aggregate, fc.integer({ min: 1, max: 3 })).map(([index, ahead]) => new FenceSkip(index, ahead, true)),
    fc.integer({ min: 1, max: 3 }).map((back) => new RestoreInbox(back, 'records')),
  ];
}

/**
 * The subscriber's inbox table restored `back` changes ago with the table restored from gone (review ro15b, RO15B-3):
 * `fence skip` of each fence to what the subscriber applied, then `fence carry --accept-fences-as-applied`.
 */
export class RestoreInboxSourceGone implements Command {
  public constructor(private readonly back: number) {}
  public check = (model: Readonly<OrderedModel>): boolean => model.produced > 0;
  public async run(_model: OrderedModel, real: OrderedReal): Promise<void> {
    await real.world.restoreInboxSourceGone(this.back);
    await real.world.check();
  }
  public toString = (): string => `restoreInbox(${this.back} back, the table restored from gone: fence skip to the ledger, fence carry --accept-fences-as-applied)`;
}

/** The commands added in the sixteenth session: an inbox restore whose table restored from is gone. */
function sixteenthCommands(): Array<fc.Arbitrary<Command>> {
  return [fc.integer({ min: 1, max: 3 }).map((back) => new RestoreInboxSourceGone(back))];
}

/**
 * The commands added in the twelfth session: every operator option of the ordered path is a command of the model
 * (`outbox heads --from-fences` as the runbook has it, refused while events are in flight; `dlq redrive --allow-expired`).
 */
function laterCommands(): Array<fc.Arbitrary<Command>> {
  return [fc.constant(new CarryHeads('fences', false)), fc.constant(new DlqRedriveAllowExpired())];
}

const aggregate = fc.integer({ min: 0, max: 1 });

/** Which commands a run draws from: every one (`all`), or those of an earlier session, which its recorded seeds replay. */
export type OrderedVocabulary = 'found' | 'twelfth' | 'thirteenth' | 'fourteenth' | 'fifteenth' | 'all';
const fault = fc.constantFrom<OrderedFault>('none', 'none', 'none', 'lost-write', 'conflict', 'lost-then-conflict', 'throttle');

/**
 * The ordered path's command vocabulary, weighted towards producing and delivering. `replayPath`: a failure's commands
 * replay path (`fc.commands`' `replayPath`, printed by test/support/model/search.ts), only to replay its path.
 * `vocabulary`: `found` leaves out the commands added since the eleventh session (`outbox heads --from-fences` without
 * `--allow-undrained`, `dlq redrive --allow-expired`), `twelfth` those added since the twelfth (`fence replay`, the
 * inbox restore, the raised window, `dlq redrive --yes`
 * with more than 10 letters of an aggregate), `thirteenth` those added since the thirteenth (an operator command between
 * an inbox restore and its carry), `fourteenth` those added since the fourteenth (`fence skip --drop-dead-letters`,
 * `fence carry --outbox-table` proven by records), `fifteenth` those added since the fifteenth (an inbox restore whose
 * table restored from is gone),
 * so a seed and path found before replay the same commands (a command more changes what every seed draws). @default 'all'
 */
export function orderedCommands(maxCommands: number, replayPath?: string, vocabulary: OrderedVocabulary = 'all'): fc.Arbitrary<Iterable<Command>> {
  const crash = fc.option(fc.record({ request: fc.integer({ min: 1, max: 2 }), when: fc.constantFrom<'before' | 'after'>('before', 'after') }), { nil: undefined, freq: 3 });
  return fc.commands(
    [
      fc.tuple(aggregate, fc.constantFrom(1, 1, 2), fault).map(([index, producers, dynamoFault]) => new Produce(index, producers, dynamoFault)),
      fc.tuple(aggregate, fc.constantFrom(1, 1, 1, 2), fc.boolean()).map(([index, copies, all]) => new Relay(index, copies, all)),
      fc.tuple(aggregate, fc.constantFrom(1, 1, 1, 2), fc.boolean()).map(([index, copies, all]) => new Relay(index, copies, all)),
      fc.tuple(aggregate, fc.constantFrom(0, 0, 0, 1, 2), crash, fault).map(([index, offset, dies, dynamoFault]) => new Deliver(index, offset, dies, dynamoFault)),
      fc.tuple(aggregate, fc.constantFrom(0, 0, 1), crash, fault).map(([index, offset, dies, dynamoFault]) => new Deliver(index, offset, dies, dynamoFault)),
      fc.tuple(aggregate, fc.constantFrom<readonly [number, number]>([0, 1], [1, 0], [0, 0])).map(([index, offsets]) => new DeliverConcurrently(index, offsets)),
      fc.constantFrom<'as-is' | 'reversed' | 'planned'>('as-is', 'reversed', 'planned').map((how) => new Redrive(how)),
      fc.tuple(aggregate, fc.constantFrom(0, 0, 1)).map(([index, offset]) => new Exhaust(index, offset)),
      fc.tuple(aggregate, fc.constantFrom(0, 1)).map(([index, offset]) => new Exhaust(index, offset)),
      fc.constant(new RedriveReady()),
      fc.constant(new RedriveReady()),
      fc.tuple(aggregate, fc.integer({ min: 1, max: 4 })).map(([index, from]) => new Replay(index, from)),
      fc.constant(new Age()),
      fc.constant(new Age()),
      ...restoreCommands(),
      fc.tuple(aggregate, fc.integer({ min: 1, max: 3 })).map(([index, ahead]) => new FenceSkip(index, ahead)),
      fc.tuple(aggregate, fc.constantFrom<'applied' | 'fence' | 'unknown'>('applied', 'fence', 'fence', 'unknown'), fc.boolean()).map(([index, key, withOutput]) => new InboxForget(index, key, withOutput)),
      ...(vocabulary === 'found' ? [] : laterCommands()),
      ...(vocabulary === 'all' || vocabulary === 'fifteenth' || vocabulary === 'fourteenth' || vocabulary === 'thirteenth' ? thirteenthCommands() : []),
      ...(vocabulary === 'all' || vocabulary === 'fifteenth' || vocabulary === 'fourteenth' ? fourteenthCommands() : []),
      ...(vocabulary === 'all' || vocabulary === 'fifteenth' || vocabulary === 'fourteenth' ? dlqOrderCommands() : []),
      ...(vocabulary === 'all' || vocabulary === 'fifteenth' ? fifteenthCommands() : []),
      ...(vocabulary === 'all' ? sixteenthCommands() : []),
    ],
    { maxCommands, size: 'max', ...(replayPath === undefined ? {} : { replayPath }) },
  );
}
