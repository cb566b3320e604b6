/**
 * The commands of the model-based tests (fast-check `fc.commands`): each is one thing AWS, a user or an operator does
 * to the world of world.ts, and each is followed by the world's checks. Not a test file.
 */
import fc from 'fast-check';
import type { Crash, DeliverySpec, DynamoFault, EffectFailure, Mode, ModelWorld } from './world';
import { LEASE_SECONDS } from './world';

/** The abstract model: only what preconditions need. */
export interface Model {
  published: number;
}

/** The real system: the world and the scheduler of this run's interleavings. */
export interface Real {
  readonly world: ModelWorld;
  readonly scheduler: fc.Scheduler;
}

type Command = fc.AsyncCommand<Model, Real>;

class Publish implements Command {
  public constructor(
    private readonly copies: number,
    private readonly kind: 'deposit' | 'days-pair' | 'days-pair-reversed',
  ) {}
  public check = (): boolean => true;
  public async run(model: Model, real: Real): Promise<void> {
    model.published += this.kind === 'deposit' ? 1 : 2;
    real.world.publish(this.copies, this.kind);
    await real.world.check();
  }
  public toString = (): string => `publish(${this.kind}, ${this.copies} cop${this.copies === 1 ? 'y' : 'ies'})`;
}

class Deliver implements Command {
  public constructor(private readonly spec: DeliverySpec) {}
  public check = (model: Readonly<Model>): boolean => model.published > 0;
  public async run(_model: Model, real: Real): Promise<void> {
    await real.world.deliver(this.spec);
    await real.world.check();
  }
  public toString = (): string => `deliver(${JSON.stringify(this.spec)})`;
}

class DeliverConcurrently implements Command {
  public constructor(
    private readonly batch: number,
    private readonly clockSeconds: number,
    private readonly fresh: boolean,
  ) {}
  public check = (model: Readonly<Model>): boolean => this.fresh || model.published > 0;
  public async run(model: Model, real: Real): Promise<void> {
    if (this.fresh) model.published += 1;
    await real.world.deliverConcurrently(real.scheduler, this.batch, this.clockSeconds, this.fresh);
    await real.world.check();
  }
  public toString = (): string => `deliverConcurrently(batch ${this.batch}, clock +${this.clockSeconds}s${this.fresh ? ', a fresh event' : ''})`;
}

class AdvanceClock implements Command {
  public constructor(private readonly seconds: number) {}
  public check = (): boolean => true;
  public async run(_model: Model, real: Real): Promise<void> {
    real.world.advanceClock(this.seconds);
    await real.world.check();
  }
  public toString = (): string => `advanceClock(${this.seconds}s)`;
}

class Redrive implements Command {
  public check = (): boolean => true;
  public async run(_model: Model, real: Real): Promise<void> {
    real.world.redrive();
    await real.world.check();
  }
  public toString = (): string => 'redrive()';
}

class ResolveBlocked implements Command {
  public check = (): boolean => true;
  public async run(_model: Model, real: Real): Promise<void> {
    await real.world.resolveBlocked();
    await real.world.check();
  }
  public toString = (): string => 'resolveBlocked()';
}

const crash: fc.Arbitrary<Crash | undefined> = fc.option(fc.record({ request: fc.integer({ min: 1, max: 4 }), when: fc.constantFrom<'before' | 'after'>('before', 'after') }), { freq: 3, nil: undefined });

/** The commands of `mode`, with AWS's fault vocabulary for it. */
export function commandsFor(mode: Mode, maxCommands: number): fc.Arbitrary<Iterable<Command>> {
  const leaseModes = mode === 'lease' || mode === 'multi-step';
  const faults: DynamoFault[] =
    mode === 'transactional' ? ['none', 'lost-write', 'conflict', 'lost-then-conflict', 'throttle'] : mode === 'aggregate' ? ['none', 'throttle'] : ['none', 'lost-write', 'throttle'];
  // an unknown outcome that did not take effect is the case where a lost message would show: drawn twice as often
  const effectFailures: EffectFailure[] = leaseModes ? ['none', 'retryable', 'unknown-before', 'unknown-before', 'unknown-after'] : ['none'];
  const spec: fc.Arbitrary<DeliverySpec> = fc.record({
    env: fc.integer({ min: 0, max: 1 }),
    batch: fc.integer({ min: 1, max: 4 }),
    from: fc.constantFrom<'head' | 'tail'>('head', 'tail'),
    crash,
    fault: fc.constantFrom(...faults),
    effectFailure: fc.constantFrom(...effectFailures),
    deadLetterFails: fc.boolean(),
  });
  return fc.commands(
    [
      fc.tuple(fc.integer({ min: 1, max: 2 }), mode === 'transactional' ? fc.constantFrom<'deposit' | 'days-pair' | 'days-pair-reversed'>('deposit', 'days-pair', 'days-pair-reversed') : fc.constant<'deposit'>('deposit')).map(([copies, kind]) => new Publish(copies, kind)),
      spec.map((value) => new Deliver(value)),
      spec.map((value) => new Deliver(value)),
      fc.tuple(fc.integer({ min: 1, max: 3 }), fc.constantFrom(0, LEASE_SECONDS - 2, LEASE_SECONDS + 10), fc.boolean()).map(([batch, seconds, fresh]) => new DeliverConcurrently(fresh ? 1 : batch, seconds, fresh)),
      fc.integer({ min: 1, max: LEASE_SECONDS + 15 }).map((seconds) => new AdvanceClock(seconds)),
      fc.constant(new Redrive()),
      ...(leaseModes ? [fc.constant(new ResolveBlocked())] : []),
    ],
    { maxCommands },
  );
}
