/**
 * verify with offloaded events (claim-check, issue 42): the run's events it reads from the outbox have their data
 * fetched from the payload bucket and verified (size and SHA-256, the runtime's reader), so the effect probes see the
 * event as its handlers did; an altered object leaves the event without data and says why; a refused read is tried
 * again at the next read. Real parts: the producer runtime's Outbox writing to DynamoDB Local and the local S3.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { PayloadReader } from '../../../lambda/claim-check/payload-store';
import { CLAIM_CHECK_ENV, parseDataRef } from '../../../lambda/contract/claim-check';
import { Outbox } from '../../../lambda/producer/outbox';
import type { EffectProbe } from '../../../simulator/run/scenario';
import type { VerifyClients } from '../../../simulator/verify/clients';
import type { DeployedFlow } from '../../../simulator/verify/deployed-flow';
import { probeEffects, readRunEvents, runEventReader } from '../../../simulator/verify/observe';
import { largeDocument, PAYLOAD_PREFIX, startClaimCheckBed, type ClaimCheckBed } from '../../lambda/claim-check-kit';

const RUN_ID = 'v0-0a0b0c0d';

let bed: ClaimCheckBed;
beforeAll(async () => void (bed = await startClaimCheckBed()));
afterAll(async () => bed?.stop());

function clientsWith(payloads: PayloadReader): VerifyClients {
  return { documents: DynamoDBDocumentClient.from(bed.client), payloads } as unknown as VerifyClients;
}

function flowOf(): DeployedFlow {
  return {
    stackNames: ['App'],
    flows: [{ outboxTable: bed.outboxConfig.outboxTableName }],
    resources: [],
    subscribers: [
      {
        name: 'Billing',
        stackName: 'App',
        environment: { [CLAIM_CHECK_ENV.PAYLOAD_BUCKET_NAME]: bed.bucket, [CLAIM_CHECK_ENV.PAYLOAD_KEY_PREFIX]: PAYLOAD_PREFIX },
        deployment: { format: 1, subscriberName: 'Billing', processingMode: 'transactional', queueUrl: 'http://127.0.0.1:1/000000000000/billing', deadLetterQueueUrl: 'http://127.0.0.1:1/000000000000/billing-dlq' },
      },
    ],
  };
}

/** Commits one offloaded event of the run (its id carries the run id) and returns its id, data and dataref. */
async function commitOffloaded(name: string): Promise<{ id: string; data: ReturnType<typeof largeDocument>; dataref: string }> {
  const outbox = new Outbox({ client: bed.client, config: bed.outboxConfig, claimCheck: { config: bed.claimCheck, store: bed.store } });
  const data = largeDocument(4000);
  const [written] = await outbox.transactWrite({ events: [{ id: `${name}-${RUN_ID}-${data.orderId}`, type: 'OrderPlaced', data }] });
  expect(written!.dataref).toBeDefined();
  return { id: written!.id, data, dataref: written!.dataref! };
}

/** A probe counting one effect per event whose data names an order (what the example's probes read). */
const byOrder: EffectProbe = async ({ events }) =>
  events.map((event) => ({ subject: `event ${event.id}`, eventIds: [event.id], applied: typeof (event.data as { orderId?: unknown } | undefined)?.orderId === 'string' ? 1 : 0 }));

describe('verify reads offloaded events', () => {
  test("an offloaded event of the run has its data, fetched and verified, for the effect probes; its body stays as published", async () => {
    // GIVEN an event of the run the producer offloaded (its outbox envelope: a dataref, no data)
    const committed = await commitOffloaded('order-placed');

    // WHEN verify reads the run's events and runs a probe over them
    const events = await readRunEvents(clientsWith(bed.store), flowOf(), RUN_ID);
    const read = events.get(committed.id)!;
    const probed = await probeEffects(clientsWith(bed.store), byOrder, flowOf().subscribers[0]!, new Set([committed.id]), events);

    // THEN the event carries the object's data, the probe counts it applied, and the body (what filters match) has no data
    expect(read.event.data).toEqual(committed.data);
    expect(read.dataUnread).toBeUndefined();
    expect(probed).toEqual({ tallies: [{ subject: `event ${committed.id}`, eventIds: [committed.id], applied: 1 }] });
    expect(JSON.parse(read.body)).not.toHaveProperty('data');
  });

  test('an altered object leaves the event without data, saying why (its SHA-256), and is not read again', async () => {
    // GIVEN an offloaded event whose object was overwritten after the commit, one byte changed, same size
    const committed = await commitOffloaded('order-altered');
    const { bucketName, key } = parseDataRef(committed.dataref)!;
    const altered = Buffer.from(JSON.stringify(committed.data));
    altered[altered.length - 2] = altered[altered.length - 2]! ^ 0x01;
    await bed.s3.backendClient.send(new PutObjectCommand({ Bucket: bucketName, Key: key, Body: altered }));
    let gets = 0;
    const counting: PayloadReader = { get: async (bucket, objectKey) => ((gets += objectKey === key ? 1 : 0), bed.store.get(bucket, objectKey)) };

    // WHEN verify reads the run's events twice
    const read = runEventReader(clientsWith(counting), flowOf(), RUN_ID);
    const first = (await read()).get(committed.id)!;
    const second = (await read()).get(committed.id)!;

    // THEN the event has no data, and the reason names the digest; the object was fetched once
    expect(first.event.data).toBeUndefined();
    expect(first.dataUnread).toMatch(/offloaded data altered after the event was written: its SHA-256 differs/);
    expect(second.dataUnread).toBe(first.dataUnread);
    expect(gets).toBe(1);
  });

  test("a refused read names verify's permissions and is tried again at the next read", async () => {
    // GIVEN an offloaded event, and S3 refusing verify's first read (403 AccessDenied, then the listing too)
    const committed = await commitOffloaded('order-refused');
    const { key } = parseDataRef(committed.dataref)!;
    let refusals = 1;
    const refusingOnce: PayloadReader = {
      get: async (bucket, objectKey) => {
        // the outbox holds the other tests' events too: only this event's object is refused
        if (objectKey === key && refusals-- > 0) throw Object.assign(new Error('Access Denied'), { name: 'AccessDenied', $metadata: { httpStatusCode: 403 } });
        return bed.store.get(bucket, objectKey);
      },
    };

    // WHEN verify reads the run's events twice
    const read = runEventReader(clientsWith(refusingOnce), flowOf(), RUN_ID);
    const first = (await read()).get(committed.id)!;
    const second = (await read()).get(committed.id)!;

    // THEN the first read says what verify's role needs; the second has the data
    expect(first.event.data).toBeUndefined();
    expect(first.dataUnread).toMatch(/s3:GetObject on the payload prefix and kms:Decrypt on the flow's key/);
    expect(second.event.data).toEqual(committed.data);
    expect(second.dataUnread).toBeUndefined();
  });
});
