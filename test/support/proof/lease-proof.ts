/**
 * A proof run of the lease or multi-step mode: the hostile world its consumer runs in, and the operator who sees the
 * blocked messages through afterwards. Not a test file.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { expect, onTestFinished } from 'vitest';
import type { LeaseConsumerConfig } from '../../../lambda/config';
import type { SqsBatchHandler } from '../../../lambda/consumer/create-consumer';
import { BlockedMessages, type BlockedMessage, type ResolveBlockedMessageInput } from '../../../operator/blocked/blocked-messages';
import { deliverAtLeastOnce, seededRandom } from '../at-least-once';
import { localClient } from '../dynamodb-client';
import { CrashInjector, LEASE_CRASH_POINTS, type LeaseCrashPoint } from './crash-injector';
import { EffectLedger, type EffectFailureRates } from './effect-ledger';
import { FakeClock } from './fake-clock';
import { deliverHostile, expectCompletedOrDeadLettered, expectHostile, type ConsumerDependencies, type HostileDelivery } from './hostile-delivery';
import { recordStatus } from './table-reads';
import { startLeaseTestbed, type Testbed } from './testbed';
import { DEFAULT_CLOCK_SKEW_ALLOWANCE_SECONDS } from '../../../lambda/processing/record-store';

/** A message of the run. */
export interface ProofMessage {
  readonly id: string;
  readonly body: string;
}

/** What a {@link LeaseProof} runs with. */
export interface LeaseProofSetup {
  /** Seeds the run: the delivery and the clock (`seed`), crashes (`seed + 1`), DynamoDB faults (`seed + 2`), effect failures (`seed + 3`). */
  readonly seed: number;
  /** The subscriber; also the prefix of the inbox table's name. */
  readonly subscriberName: string;
  /** How often the external effect fails, and how. */
  readonly effectFailures: EffectFailureRates;
  /** The DynamoDB faults fall among the first `faultsWithin` claims (PutItem) and fenced writes (UpdateItem). */
  readonly faultsWithin: number;
}

/**
 * One proof run of the lease or multi-step mode, on its own inbox table (leases of 60 seconds, a deduplication window
 * of a day) and fault proxy. {@link deliver} is the hostile world: 40% of the invocations crash (at each of the
 * lease crash points, see {@link CrashInjector}), the effect fails now and then ({@link ledger}), 8 lost responses and 4
 * throttles each on claims and fenced writes, 20% duplicates, 15% concurrent duplicates, batches of 4, redrive after
 * 10 receives, and the {@link clock} moves 25 to 44 seconds between rounds, so leases expire.
 * {@link finishAsOperator} is the operator afterwards.
 */
export class LeaseProof {
  /** The consumer's clock (pass `clock.now` as its `now`). */
  public readonly clock = new FakeClock();
  public readonly injector: CrashInjector<LeaseCrashPoint>;
  /** The external effect and the truth of how often each was applied. */
  public readonly ledger: EffectLedger;
  /** The consumer's config (its inbox table). */
  public readonly config: LeaseConsumerConfig;
  /** Reads the processing records, and is the operator's client. */
  private readonly direct: DynamoDBClient;

  private constructor(
    private readonly setup: LeaseProofSetup,
    private readonly testbed: Testbed & { readonly config: LeaseConsumerConfig },
  ) {
    this.config = testbed.config;
    this.direct = testbed.client;
    this.injector = new CrashInjector(LEASE_CRASH_POINTS, seededRandom(setup.seed + 1), 0.4);
    this.ledger = new EffectLedger(this.injector, seededRandom(setup.seed + 3), setup.effectFailures);
  }

  /** Creates the run's inbox table and fault proxy (stopped when the test finishes). Call it inside the test. */
  public static async start(setup: LeaseProofSetup): Promise<LeaseProof> {
    const testbed = await startLeaseTestbed({ subscriberName: setup.subscriberName, deduplicationWindowSeconds: 86_400, leaseDurationSeconds: 60 }, `${setup.subscriberName}-proof`);
    onTestFinished(() => testbed.proxy.stop());
    return new LeaseProof(setup, testbed);
  }

  /** The status of a message's processing record, read consistently. */
  public readonly statusOf = (message: ProofMessage): Promise<string | undefined> =>
    recordStatus(this.direct, this.config.inboxTableName, this.config.subscriberName, message.id);

  /**
   * Phase 1: delivers the messages to the consumer in the hostile world, and asserts that it was as hostile as
   * claimed (every crash point fired, more than 5 crashed invocations, more than 10 duplicates, more than 5 DynamoDB
   * faults, a delivery that found a live lease, a takeover).
   */
  public async deliver(messages: readonly ProofMessage[], consumer: (dependencies: ConsumerDependencies) => SqsBatchHandler): Promise<HostileDelivery> {
    const random = seededRandom(this.setup.seed);
    const run = await deliverHostile({
      bodies: messages.map((message) => message.body),
      seed: this.setup.seed,
      proxy: this.testbed.proxy,
      faults: ['PutItem', 'UpdateItem'].map((operation) => ({ operation, within: this.setup.faultsWithin, lostResponses: 8, throttles: 4 })),
      injector: this.injector,
      consumer,
      delivery: {
        duplicateRate: 0.2,
        concurrentDuplicateRate: 0.15,
        batchSize: 4,
        maxReceiveCount: 10,
        betweenRounds: () => this.clock.advanceSeconds(25 + Math.floor(random() * 20)),
      },
    });
    expectHostile(run, this.injector, { duplicatesAbove: 10, crashedInvocationsAbove: 5 });
    expect(run.lines.some((line) => (line.error as { name?: string } | undefined)?.name === 'MessageInProgressError')).toBe(true);
    expect(run.lines.some((line) => line.message === 'took over')).toBe(true);
    return run;
  }

  /**
   * Asserts after phase 1 that some messages are BLOCKED and that none was lost (each COMPLETED or in the dead-letter
   * queue, a BLOCKED one always); returns the status of each message.
   */
  public async expectNothingLost(run: HostileDelivery, messages: readonly ProofMessage[]): Promise<Array<string | undefined>> {
    const statuses = await Promise.all(messages.map(this.statusOf));
    expect(statuses.filter((status) => status === 'BLOCKED').length).toBeGreaterThan(0);
    expectCompletedOrDeadLettered(run, messages, statuses);
    return statuses;
  }

  /**
   * Phase 2: crashes and effect failures stop; up to 4 passes, the operator resolves every blocked message as
   * `resolution` says (from the ledger's truth; the response of the first resolution of each pass is lost, so the
   * operator must recognise its own applied write), the clock moves past the lease, and every message that is not
   * COMPLETED is redelivered to the run's consumer (with 10% duplicates); stops once all are COMPLETED.
   */
  public async finishAsOperator(
    run: HostileDelivery,
    messages: readonly ProofMessage[],
    resolution: (entry: BlockedMessage) => Pick<ResolveBlockedMessageInput, 'status' | 'context'>,
  ): Promise<void> {
    this.injector.disable();
    this.ledger.heal();
    const { config } = this;
    const { seed } = this.setup;
    const { proxy } = this.testbed;
    const operator = new BlockedMessages({ client: localClient({ endpoint: proxy.endpoint }), tableName: config.inboxTableName, now: this.clock.now });
    for (let pass = 0; pass < 4; pass += 1) {
      const blocked = await operator.list({ subscriber: config.subscriberName, limit: messages.length });
      if (blocked.length > 0) proxy.inject({ target: 'DynamoDB_20120810.UpdateItem', fault: { kind: 'drop-response' } });
      for (const entry of blocked) {
        await operator.resolve({
          subscriber: config.subscriberName,
          eventId: entry.eventId,
          step: entry.step as string,
          ...resolution(entry),
          reason: 'checked the ledger',
          expectedVersion: entry.version,
        });
      }
      this.clock.advanceSeconds(config.leaseDurationSeconds + DEFAULT_CLOCK_SKEW_ALLOWANCE_SECONDS + 1);
      const statuses = await Promise.all(messages.map(this.statusOf));
      const pending = messages.filter((_message, index) => statuses[index] !== 'COMPLETED');
      if (pending.length === 0) break;
      await deliverAtLeastOnce({ bodies: pending.map((message) => message.body), handler: run.consumer, seed: seed + pass, duplicateRate: 0.1 });
    }
  }
}
