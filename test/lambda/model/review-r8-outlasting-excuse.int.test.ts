/**
 * Review r8 (issue 40's contention model): the OUTLASTING_REFUSALS excuse is decided per delivery ROUND (the fault
 * injected that round: 80 refusals in all, shared by every request of every invocation of the round), not per COPY
 * (how many refusals that copy's writes met). A round of 20 records at once shares its 80 refusals: each record may
 * meet one or two, which the retry must absorb; a copy that reached the DLQ that way is a real dead letter from
 * contention, and the world excuses it. Shown with the model's own planted defect, `contention-retry-disabled`
 * (scripts/mutants/mutants.ts), planted here through the module (`disabled: true`, the option that exists for the
 * mutants): every copy fails at its FIRST refusal, three receives running, so reaches the DLQ after meeting exactly one
 * refusal per receive; the world must call that a violation. It does not: every failed receive is marked "outlasting"
 * because the round's fault was 80. Failed on s8-rv8 (27b8873) when committed. DynamoDB Local behind the fault proxy.
 */
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { localClient } from '../../support/dynamodb-client';
import { ContentionWorld, OUTLASTING_REFUSALS } from '../../support/model/contention-world';
import type { ModelTables } from '../../support/model/world';
import { createInbox, createKeyedTable } from '../../support/proof/tables';

vi.mock('../../../lambda/transaction/contention-retry', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../../lambda/transaction/contention-retry')>();
  class NoRetry extends original.ContentionRetry {
    public constructor(options: ConstructorParameters<typeof original.ContentionRetry>[0] = {}) {
      super({ ...options, disabled: true });
    }
  }
  return { ...original, ContentionRetry: NoRetry };
});

const client = localClient();
let tables: ModelTables;

beforeAll(async () => {
  const business = await createKeyedTable(client, 'review-r8-business');
  tables = { businessTable: business, config: await createInbox(client, { subscriberName: 'review-r8-tx', deduplicationWindowSeconds: 86_400 }) };
});
afterAll(() => client.destroy());

describe('review r8: the contention model excuses per round, not per copy', () => {
  test('R8-5: copies that each met one refusal per receive (retry disabled) and reached the DLQ are a violation, though their rounds injected 80 refusals in all', async () => {
    // GIVEN 20 events on the hot item, and a runtime whose retry is off (the mutant contention-retry-disabled)
    const world = await ContentionWorld.start('transactional', tables, 7, 10);
    try {
      for (let event = 0; event < 20; event++) world.publish(1);

      // WHEN three rounds deliver them (2 invocations x 10 records at once), each round injecting OUTLASTING_REFUSALS
      // TransactionConflicts shared by its 20 transactions
      for (let round = 0; round < 3; round++) await world.deliverConcurrently(2, 10, { kind: 'conflict', times: OUTLASTING_REFUSALS });
      await world.check();

      // THEN the world blames the dead letters: each copy failed at its first refusal (one per receive: the retry would
      // have absorbed it; at most 20 of each round's 80 were consumed), not under contention outlasting its invocation
      expect(world.history.slice(-3)).toEqual(Array.from({ length: 3 }, () => `deliver 10+10 at once, conflict x${OUTLASTING_REFUSALS}: 0 acknowledged, 0 acknowledged`));
      expect(world.violations.filter((violation) => violation.includes('reached the DLQ'))).toHaveLength(20);
    } finally {
      await world.stop();
    }
  }, 300_000);
});
