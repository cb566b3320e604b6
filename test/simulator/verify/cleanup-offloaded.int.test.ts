/**
 * Review v11, V11-7: `verify --cleanup` removed the run's outbox items but left the S3 objects of its offloaded events
 * (the claim-check) without a word. It keeps them (the payload bucket denies deleting event data: a late copy of a run
 * event, a dead letter of one redriven, or a subscriber verify could not see still reads it) and now says so: which
 * objects, by their exact references from the run's outbox envelopes, why, and when the bucket's lifecycle rule
 * removes them. Real parts: the producer runtime's Outbox writing to DynamoDB Local and the local S3.
 */
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parseDataRef, utcDay } from '../../../lambda/contract/claim-check';
import { Outbox } from '../../../lambda/producer/outbox';
import type { VerifyClients } from '../../../simulator/verify/clients';
import { cleanUpRun } from '../../../simulator/verify/cleanup';
import type { DeployedFlow } from '../../../simulator/verify/deployed-flow';
import { keptPayloadLines } from '../../../simulator/verify/kept-payloads';
import { readRunEvents } from '../../../simulator/verify/observe';
import { dataRefsOf } from '../../../simulator/verify/offloaded-data';
import { largeDocument, PAYLOAD_PREFIX, startClaimCheckBed, type ClaimCheckBed } from '../../lambda/claim-check-kit';

const RUN_ID = 'v0-0c1e2a9b';
const OTHER_RUN = 'v0-0d00d00d';

let bed: ClaimCheckBed;
beforeAll(async () => void (bed = await startClaimCheckBed()));
afterAll(async () => bed?.stop());

function clients(): VerifyClients {
  return { dynamoDb: bed.client, documents: DynamoDBDocumentClient.from(bed.client), payloads: bed.store } as unknown as VerifyClients;
}

function flowOf(): DeployedFlow {
  const outbox = bed.outboxConfig.outboxTableName;
  return {
    stackNames: ['App'],
    flows: [{ outboxTable: outbox }],
    resources: [{ stackName: 'App', logicalId: 'Outbox', type: 'AWS::DynamoDB::Table', physicalId: outbox }],
    subscribers: [],
    bucketExpirations: { [bed.bucket]: [{ ruleId: 'ExpireOffloadedEventData', prefix: PAYLOAD_PREFIX, days: 38 }] },
  };
}

/** Commits one offloaded event of `runId` and returns its id and dataref. */
async function commitOffloaded(runId: string): Promise<{ id: string; dataref: string }> {
  const outbox = new Outbox({ client: bed.client, config: bed.outboxConfig, claimCheck: { config: bed.claimCheck, store: bed.store } });
  const data = largeDocument(4000);
  const [written] = await outbox.transactWrite({ events: [{ id: `order-placed-${runId}-${data.orderId}`, type: 'OrderPlaced', data }] });
  return { id: written!.id, dataref: written!.dataref! };
}

describe("verify --cleanup and the run's offloaded events (V11-7)", () => {
  test('keeps the objects of the run, names each by its exact reference with why and when the lifecycle rule removes them, and touches no other run\'s', async () => {
    // GIVEN two offloaded events of the run and one of another run, in the outbox and the payload bucket
    const ours = [await commitOffloaded(RUN_ID), await commitOffloaded(RUN_ID)];
    const theirs = await commitOffloaded(OTHER_RUN);
    const events = await readRunEvents(clients(), flowOf(), RUN_ID);

    // WHEN the run cleans up
    const lines = await cleanUpRun(clients(), flowOf(), RUN_ID, new Set(events.keys()), new Set(), [], dataRefsOf(events.values()));

    // THEN its outbox items are gone, but every object stays, and one line names exactly the run's objects
    expect([...events.keys()].sort()).toEqual(ours.map((item) => item.id).sort());
    expect((await readRunEvents(clients(), flowOf(), RUN_ID)).size).toBe(0);
    expect([...(await readRunEvents(clients(), flowOf(), OTHER_RUN)).keys()]).toEqual([theirs.id]);
    for (const { dataref } of [...ours, theirs]) {
      const { bucketName, key } = parseDataRef(dataref)!;
      expect((await bed.s3.client.send(new HeadObjectCommand({ Bucket: bucketName, Key: key }))).ContentLength).toBeGreaterThan(0);
    }
    const kept = lines.filter((line) => line.startsWith('kept ') && line.includes('offloaded event data'));
    expect(kept).toEqual(keptPayloadLines(ours.map((item) => item.dataref), flowOf().bucketExpirations!));
    expect(kept).toHaveLength(1);
    for (const { dataref } of ours) expect(kept[0]).toContain(dataref);
    expect(kept[0]).not.toContain(theirs.dataref);
    expect(kept[0]).toContain(`kept 2 offloaded event data object(s) of the run in bucket ${bed.bucket}`);
    expect(kept[0]).toContain('the payload bucket denies deleting event data');
    // written today: S3 counts 38 days from the creation, rounded up to the next midnight UTC
    const expected = new Date(Date.parse(`${utcDay(new Date())}T00:00:00.000Z`) + 39 * 86_400_000).toISOString().slice(0, 10);
    expect(kept[0]).toContain(`its lifecycle rule ExpireOffloadedEventData expires each 38 day(s) after it was written (S3 removes the last of them from ${expected} 00:00 UTC)`);
  });

  test('without an expiring lifecycle rule over the objects, it says to remove them by hand; a run without offloaded events has no such line', () => {
    const dataref = `s3://payloads/${PAYLOAD_PREFIX}${'a'.repeat(64)}/2026-11-30-${'b'.repeat(64)}`;
    expect(keptPayloadLines([dataref], { payloads: [{ prefix: 'other/', days: 3 }] })).toEqual([expect.stringContaining('no expiring lifecycle rule of the stacks covers them: remove them by hand')]);
    expect(keptPayloadLines([dataref], { payloads: [{ prefix: PAYLOAD_PREFIX, days: 3 }] })[0]).toContain('expires each 3 day(s) after it was written (S3 removes the last of them from 2026-12-04 00:00 UTC)');
    expect(keptPayloadLines([], {})).toEqual([]);
  });
});
