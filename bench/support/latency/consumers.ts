/**
 * The consumers the batch-latency bench compares, each on fresh tables: Powertools (`BatchProcessor` +
 * `makeIdempotent`) and this library's four modes through the real factories exported by `lambda/index.ts`, unchanged.
 * Each does the business work of its mode (as the cost bench's runs do), counts its handler runs, and checks afterwards
 * that every distinct record of the run was applied exactly once.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createAggregateConsumer, createLeaseConsumer, createMultiStepConsumer, createTransactionalConsumer, type BatchReadSetting, type SqsBatchHandler } from '../../../lambda/index';
import { PROCESSING_RECORD, RECORD_STATUS } from '../../../lambda/contract/wire-format';
import type { DeliveryPlan } from '../deliveries';
import { EffectLedger } from '../effect-ledger';
import { countingLogger, createTable, LEASE_DURATION_SECONDS, MemoryDeadLetters, noMetrics, now, type Message, type OrderPlaced } from '../fixtures';
import { accountKey, recordOrder, versionCheck, type CustomerAccount } from '../modes/aggregate';
import { effectKeys, steps } from '../modes/multi-step';
import { credit, ledgerCheck } from '../modes/transactional';
import type { Prng } from '../prng';
import { inboxConfig, processedCheck } from '../scenario-steps';
import { scanCount } from '../tables';
import { createHandWrittenInbox } from './hand-written-inbox';
import { createPowertoolsConsumer } from './powertools';

/** One consumer, ready for a run. */
export interface LatencyConsumer {
  readonly handler: SqsBatchHandler;
  /** How often the business logic ran (the handler, the effect, step 1, `apply`): more than once per record means work repeated. */
  handlerRuns(): number;
  /** Exactly-once violations after the run of `plan`, each described; empty when every distinct record was applied once. */
  check(plan: DeliveryPlan): Promise<string[]>;
  /** What the check verified, in words (for the report). */
  readonly checks: string;
}

/** What a consumer is built on: the unmetered admin client, the (metered) client under test, a generator, a table-name suffix. */
export interface ConsumerSetup {
  readonly admin: DynamoDBClient;
  readonly client: DynamoDBClient;
  readonly prng: Prng;
  /** Unique per run, so each run starts on empty tables. */
  readonly suffix: string;
}

/** A consumer the bench compares. */
export interface ConsumerKind {
  readonly name: string;
  create(setup: ConsumerSetup): Promise<LatencyConsumer>;
}

/** Steps of the multi-step consumer (as in the cost bench's run M4). */
const MULTI_STEPS = 3;

const completed = async (admin: DynamoDBClient, who: string, table: string, statusAttribute: string, status: string, plan: DeliveryPlan): Promise<string[]> => {
  const n = await scanCount(admin, table, (item) => item[statusAttribute]?.S === status);
  return n === plan.distinct.length ? [] : [`${who}: ${n} ${status} records, expected ${plan.distinct.length}`];
};

/** Lease and multi-step consumers' options besides their business logic. */
function leaseOptions(setup: ConsumerSetup, subscriberName: string, inboxTableName: string) {
  const log = countingLogger();
  return {
    client: setup.client,
    config: { ...inboxConfig(subscriberName, inboxTableName), leaseDurationSeconds: LEASE_DURATION_SECONDS },
    now,
    logger: log.logger,
    metricsSink: noMetrics,
    deadLetter: new MemoryDeadLetters(),
    newOwnerToken: () => setup.prng.uuid(),
  };
}

export const POWERTOOLS: ConsumerKind = {
  name: 'Powertools',
  async create({ admin, client, suffix }) {
    const [idempotencyTable, ledgerTable] = [`lat-pt-idempotency-${suffix}`, `lat-pt-ledger-${suffix}`];
    await Promise.all([createTable(admin, idempotencyTable, { partitionKey: 'id' }), createTable(admin, ledgerTable)]);
    let runs = 0;
    return {
      handler: createPowertoolsConsumer({ client, idempotencyTable, ledgerTable, onRun: () => void (runs += 1) }),
      handlerRuns: () => runs,
      checks: 'ledger: every balance = the sum of its distinct records; one COMPLETED idempotency record per distinct record',
      check: async (plan) => [
        ...(await ledgerCheck(admin, 'Powertools', ledgerTable, plan.distinct)).violations,
        ...(await completed(admin, 'Powertools', idempotencyTable, 'status', 'COMPLETED', plan)),
      ],
    };
  },
};

/** The transactional consumer with the batch read `batchRead` (the default, decided per batch, when not given). */
const transactional = (name: string, batchRead?: BatchReadSetting): ConsumerKind => ({
  name,
  async create({ admin, client, suffix }) {
    const [inboxTable, ledgerTable] = [`lat-tx-inbox-${suffix}`, `lat-tx-ledger-${suffix}`];
    await Promise.all([createTable(admin, inboxTable), createTable(admin, ledgerTable)]);
    const log = countingLogger();
    const apply = credit(ledgerTable);
    let runs = 0;
    const handler = createTransactionalConsumer<OrderPlaced>({
      handle: (envelope, tx, context) => {
        runs += 1;
        return apply(envelope, tx, context);
      },
      client,
      config: inboxConfig('Billing', inboxTable),
      now,
      logger: log.logger,
      metricsSink: noMetrics,
      ...(batchRead === undefined ? {} : { batchRead }),
    });
    return {
      handler,
      handlerRuns: () => runs,
      checks: 'ledger: every balance = the sum of its distinct records; one inbox record per distinct record; processed = distinct',
      check: async (plan) => {
        const violations = [...(await ledgerCheck(admin, 'transactional', ledgerTable, plan.distinct)).violations];
        const inbox = await scanCount(admin, inboxTable);
        if (inbox !== plan.distinct.length) violations.push(`transactional: the inbox holds ${inbox} records, expected ${plan.distinct.length}`);
        return [...violations, ...processedCheck('transactional', log.outcomes.get('processed') ?? 0, plan)];
      },
    };
  },
});

export const TRANSACTIONAL = transactional('transactional');
/** The batch read of every batch (`batchRead: true`), the default before it was decided per batch. */
export const TRANSACTIONAL_ALWAYS_READ = transactional('transactional (read every batch)', true);
/** No batch read (`batchRead: false`). */
export const TRANSACTIONAL_NEVER_READ = transactional('transactional (no read)', false);

export const LEASE: ConsumerKind = {
  name: 'lease',
  async create(setup) {
    const inboxTable = `lat-lease-inbox-${setup.suffix}`;
    await createTable(setup.admin, inboxTable, { blockedMessagesIndex: true });
    const ledger = new EffectLedger();
    let runs = 0;
    const handler = createLeaseConsumer<OrderPlaced>({
      ...leaseOptions(setup, 'Mailer', inboxTable),
      handle: (envelope) => {
        runs += 1;
        ledger.apply(`${envelope.id}#effect`);
      },
    });
    return {
      handler,
      handlerRuns: () => runs,
      checks: 'effect ledger: each distinct record\'s effect ran once, nothing else ran; one COMPLETED record each',
      check: async (plan) => [
        ...ledger.check(plan.distinct.map((message: Message) => `${message.envelope.id}#effect`), 'lease'),
        ...(await completed(setup.admin, 'lease', inboxTable, PROCESSING_RECORD.STATUS_ATTRIBUTE, RECORD_STATUS.COMPLETED, plan)),
      ],
    };
  },
};

export const MULTI_STEP: ConsumerKind = {
  name: `multi-step (k = ${MULTI_STEPS})`,
  async create(setup) {
    const inboxTable = `lat-steps-inbox-${setup.suffix}`;
    await createTable(setup.admin, inboxTable, { blockedMessagesIndex: true });
    const ledger = new EffectLedger();
    let runs = 0;
    const [first, ...rest] = steps(MULTI_STEPS, ledger);
    const counted = first === undefined ? [] : [{ ...first, run: (...args: Parameters<typeof first.run>) => ((runs += 1), first.run(...args)) }, ...rest];
    const handler = createMultiStepConsumer<OrderPlaced>({ ...leaseOptions(setup, 'Invoicing', inboxTable), steps: counted });
    return {
      handler,
      handlerRuns: () => runs,
      checks: 'effect ledger: each step of each distinct record ran once, nothing else ran; one COMPLETED record each',
      check: async (plan) => [
        ...ledger.check(plan.distinct.flatMap((message) => effectKeys(message, MULTI_STEPS)), 'multi-step'),
        ...(await completed(setup.admin, 'multi-step', inboxTable, PROCESSING_RECORD.STATUS_ATTRIBUTE, RECORD_STATUS.COMPLETED, plan)),
      ],
    };
  },
};

export const AGGREGATE: ConsumerKind = {
  name: 'aggregate',
  async create({ admin, client, suffix }) {
    const table = `lat-accounts-${suffix}`;
    await createTable(admin, table);
    const log = countingLogger();
    let runs = 0;
    const handler = createAggregateConsumer<OrderPlaced, CustomerAccount>({
      locate: (envelope) => ({ tableName: table, key: { pk: accountKey(envelope.data.customerId) } }),
      apply: (current, envelope, context) => {
        runs += 1;
        return recordOrder(current, envelope, context);
      },
      client,
      config: { subscriberName: 'Accounts' },
      now,
      logger: log.logger,
      metricsSink: noMetrics,
    });
    return {
      handler,
      handlerRuns: () => runs,
      checks: 'version check: every aggregate at version = its distinct records, total = their sum; processed = distinct',
      check: async (plan) => [
        ...(await versionCheck(admin, 'aggregate', table, plan.distinct)).violations,
        ...processedCheck('aggregate', log.outcomes.get('processed') ?? 0, plan),
      ],
    };
  },
};

/** A hand-written inbox: one TransactWriteItems per record (ledger credit + conditional inbox Put), nothing else. */
const handWritten = (name: string, lanes: boolean): ConsumerKind => ({
  name,
  async create({ admin, client, suffix }) {
    const [inboxTable, ledgerTable] = [`lat-hw-inbox-${suffix}`, `lat-hw-ledger-${suffix}`];
    await Promise.all([createTable(admin, inboxTable), createTable(admin, ledgerTable)]);
    let runs = 0;
    return {
      handler: createHandWrittenInbox({ client, inboxTable, ledgerTable, onRun: () => void (runs += 1), lanes }),
      handlerRuns: () => runs,
      checks: 'ledger: every balance = the sum of its distinct records; one inbox record per distinct record',
      check: async (plan) => {
        const violations = [...(await ledgerCheck(admin, name, ledgerTable, plan.distinct)).violations];
        const inbox = await scanCount(admin, inboxTable);
        if (inbox !== plan.distinct.length) violations.push(`${name}: the inbox holds ${inbox} records, expected ${plan.distinct.length}`);
        return violations;
      },
    };
  },
});

/** The hand-written inbox of one worker: the batch's records one after another. */
export const HAND_WRITTEN_INBOX = handWritten('hand-written inbox', false);
/**
 * The round-trip floor, measured: the hand-written inbox committing each customer's records one after another and the
 * customers at once, nothing else (no read, no checks), so a batch takes the fewest sequential round trips an
 * exactly-once commit of its records needs, at the proxy's latency and the machine's speed of the moment.
 */
export const ROUND_TRIP_FLOOR = handWritten('round-trip floor', true);

/** In the order of the report: Powertools first, the reference of every ratio. */
export const CONSUMER_KINDS: readonly ConsumerKind[] = [POWERTOOLS, TRANSACTIONAL, TRANSACTIONAL_ALWAYS_READ, TRANSACTIONAL_NEVER_READ, LEASE, MULTI_STEP, AGGREGATE, HAND_WRITTEN_INBOX, ROUND_TRIP_FLOOR];
/** What runs without `--consumers`: the four modes with their defaults, beside Powertools. */
export const DEFAULT_CONSUMER_KINDS: readonly ConsumerKind[] = [POWERTOOLS, TRANSACTIONAL, LEASE, MULTI_STEP, AGGREGATE, HAND_WRITTEN_INBOX];
