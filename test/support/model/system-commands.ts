/**
 * The commands of the model-based tests of an event's whole life (issue 28): what producers, AWS, time and the
 * operator do to the world of system-world.ts, each followed by the world's checks, and the configurations a run is
 * drawn with. Not a test file.
 */
import fc from 'fast-check';
import type { DeliverySpec, EventSpec, Mode, SystemConfig, SystemWorld } from './system-world';
import type { ObjectDamage, OffloadCase } from './offloaded-events';

type Command = fc.AsyncCommand<object, SystemWorld>;

/** A command that runs `act` on the world, then its checks. */
function command(label: string, act: (world: SystemWorld) => Promise<void> | void): Command {
  return {
    check: () => true,
    run: async (_model, world) => {
      await act(world);
      await world.check();
    },
    toString: () => label,
  };
}

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** The configurations a run is drawn with: every mode, and values other than the defaults. */
export function systemConfig(modes: readonly Mode[]): fc.Arbitrary<SystemConfig> {
  return fc
    .record({
      mode: fc.constantFrom(...modes),
      keepBlockedMessageBody: fc.boolean(),
      maxProcessedMessages: fc.integer({ min: 1, max: 3 }),
      queueRetentionDays: fc.integer({ min: 1, max: 4 }),
      deadLetterRetentionDays: fc.integer({ min: 7, max: 14 }),
      maxReceiveCount: fc.integer({ min: 1, max: 3 }),
      filter: fc.constantFrom<SystemConfig['filter']>('none', 'type', 'type-and-source'),
      windowSlackDays: fc.integer({ min: 0, max: 12 }),
    })
    // as the constructs require: the window covers the queue's and the dead-letter queue's retention
    .map(({ windowSlackDays, ...config }) => ({ ...config, deduplicationWindowDays: Math.min(30, config.queueRetentionDays + config.deadLetterRetentionDays + windowSlackDays) }));
}

const eventSpec: fc.Arbitrary<EventSpec> = fc.record({
  type: fc.constantFrom<EventSpec['type']>('OrderPlaced', 'OrderPlaced', 'OrderShipped'),
  source: fc.constantFrom<EventSpec['source']>('urn:orders', 'urn:orders', 'urn:returns'),
  copies: fc.integer({ min: 1, max: 2 }),
  relayGivesUp: fc.constantFrom(false, false, false, true),
  aheadDays: fc.constantFrom(0, 0, 0, 0, 45),
  // issue 38, item 10: an outbox item of another producer, without a write time or with one that lies
  writtenBy: fc.constantFrom<NonNullable<EventSpec['writtenBy']>>('runtime', 'runtime', 'runtime', 'runtime', 'no-write-time', 'future-write-time'),
});

const deliverySpec = (mode: Mode): fc.Arbitrary<DeliverySpec> =>
  fc.record({
    batch: fc.integer({ min: 1, max: 4 }),
    // one invocation in four dies (before or after one of its DynamoDB requests)
    crash: fc.oneof(
      { arbitrary: fc.constant(undefined), weight: 3 },
      // after a request more often than before: a crash after the commit is where a copy of an applied event stays
      { arbitrary: fc.record({ request: fc.integer({ min: 1, max: 3 }), when: fc.constantFrom<'before' | 'after'>('before', 'after', 'after') }), weight: 1 },
    ),
    deadLetterFails: fc.boolean(),
    effectFailure: mode === 'lease' || mode === 'multi-step' ? fc.constantFrom<DeliverySpec['effectFailure']>('none', 'retryable', 'unknown-before', 'unknown-before', 'unknown-after') : fc.constant<'none'>('none'),
  });

/**
 * `replay`'s options of a subscriber of another account (`--flow-profile`: the profile of the flow's account, one the
 * AWS config lacks, one of another environment's account, or none) and of one in aggregate mode (`--aggregate-table`: its table, a missing one, or an
 * existing table that is not its aggregate table).
 */
function replayOptionCommands(mode: Mode): Array<fc.Arbitrary<Command>> {
  const which = fc.oneof(fc.constant<'range'>('range'), fc.nat(20));
  const fromFlowAccount = fc
    .tuple(which, fc.constantFrom<'granted' | 'unknown-profile' | 'none' | 'other-environment'>('granted', 'granted', 'unknown-profile', 'none', 'other-environment'))
    .map(([selected, profile]) => command(`replay --flow-profile(${selected}, ${profile})`, (world) => world.replayFromFlowAccount(selected, profile)));
  const withAggregateTable = fc
    .tuple(which, fc.constantFrom<'its' | 'missing' | 'wrong'>('its', 'its', 'its', 'missing', 'wrong'))
    .map(([selected, table]) => command(`replay --aggregate-table(${selected}, ${table})`, (world) => world.replayWithAggregateTable(selected, table)));
  return mode === 'aggregate' ? [fromFlowAccount, withAggregateTable, withAggregateTable] : [fromFlowAccount];
}

/**
 * The commands of a run of `mode`. `claimCheck: false` draws the commands as before the claim-check's (and the replay
 * options', added after them) were added (a counterexample found then replays by its seed and path only from the same
 * command set).
 */
export function systemCommands(mode: Mode, maxCommands: number, options: { readonly claimCheck?: boolean } = {}): fc.Arbitrary<Iterable<Command>> {
  const publish = eventSpec.map((spec) => command(`publish(${JSON.stringify(spec)})`, (world) => world.publish(spec)));
  // claim-check (issue 42): an event over the inline limit, intact or with its object altered or deleted after commit,
  // or its producer retried after a lost PutObject response; and an object altered or deleted at any later time
  const publishLarge = fc
    .tuple(eventSpec, fc.constantFrom<OffloadCase>('intact', 'intact', 'altered-after-commit', 'missing-after-commit', 'retried-after-lost-response'))
    .map(([spec, offloadCase]) => command(`publish large(${offloadCase}, ${JSON.stringify(spec)})`, (world) => world.publishLarge(spec, offloadCase)));
  const damageObject = fc
    .tuple(fc.nat(20), fc.constantFrom<ObjectDamage>('altered', 'missing'))
    .map(([index, damage]) => command(`object of offloaded event ${index} ${damage}`, (world) => world.damageObject(index, damage)));
  const deliver = deliverySpec(mode).map((spec) => command(`deliver(${JSON.stringify(spec)})`, (world) => world.deliver(spec)));
  // an array, not fc.commands: its lengths are drawn evenly (fc.commands favours short runs), and it still shrinks
  return fc.array(
    fc.oneof(
      // producers and deliveries are drawn more often than the rest: an operator acts on what they leave behind
      publish,
      publish,
      publish,
      ...(options.claimCheck === false ? [] : [publishLarge, publishLarge, damageObject, fc.nat(20).map((index) => command(`dlq show --fetch(${index})`, (world) => world.dlqShowFetch(index)))]),
      // the operator options of a subscriber of another account and of one in aggregate mode, with their refusals
      ...(options.claimCheck === false ? [] : replayOptionCommands(mode)),
      deliver,
      deliver,
      deliver,
      fc.integer({ min: 31, max: 3600 }).map((seconds) => command(`advance(${seconds} s)`, (world) => world.advance(seconds * 1000))),
      fc.integer({ min: 1, max: 12 }).map((hours) => command(`advance(${hours} hours)`, (world) => world.advance(hours * HOUR_MS))),
      fc.integer({ min: 1, max: 16 }).map((days) => command(`advance(${days} days)`, (world) => world.advance(days * DAY_MS))),
      // just past the deduplication window, where an inbox record of an early application is gone (issue 38, item 10)
      fc.integer({ min: 1, max: 12 }).map((days) => command(`advance(the window + ${days} days)`, (world) => world.advance((world.config.deduplicationWindowDays + days) * DAY_MS))),
      fc.constant(command('fixBug()', (world) => world.fixBug())),
      fc.constant(command('dlq list', (world) => world.dlqList())),
      fc.boolean().map((meanwhile) => command(`dlq redrive${meanwhile ? ' (dead letters arrive meanwhile)' : ''}`, (world) => world.dlqRedrive(meanwhile))),
      fc.oneof(fc.constant<'range'>('range'), fc.nat(20)).map((which) => command(`replay(${which})`, (world) => world.replay(which))),
      fc.constant(command('blocked resolve (from the truth)', (world) => world.resolveBlocked())),
      fc.nat(20).map((index) => command(`restore from a backup and inbox forget(${index})`, (world) => world.restoreAndForget(index))),
    ),
    { minLength: Math.min(12, maxCommands), maxLength: maxCommands, size: 'max' },
  );
}
