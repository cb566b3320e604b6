/**
 * The batch read takes only a LIVE record as proof that a message was applied (issue 40, item 2): an inbox record past
 * its `expiresAt` (DynamoDB's TTL deletes it some time later, and until then it is still read) counts as absent, as the
 * inbox's own condition counts it. A message redelivered after the deduplication window is then the write's to decide
 * (here: applied again, as the window documents), never acknowledged as a duplicate on the strength of an expired
 * record. Against DynamoDB Local, with the consumer's clock moved past the record's expiry.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { ConsumerConfig } from '../../lambda/config';
import { createTransactionalConsumer } from '../../lambda/consumer/transactional-consumer';
import { localClient } from '../support/dynamodb-client';
import { createInbox } from '../support/proof/tables';
import { envelopeObject, outcomesOf, recordingLogger, sqsRecord } from './helpers';

const client = localClient();
let config: ConsumerConfig;

beforeAll(async () => {
  config = await createInbox(client, { subscriberName: 'expiry-read', deduplicationWindowSeconds: 3600 });
});
afterAll(() => client.destroy());

test('a redelivery whose inbox record is past its expiry is not recognised by the batch read: its handler runs and its write decides', async () => {
  let now = new Date('2026-01-01T00:00:00Z');
  const runs = new Map<string, number>();
  const { logger, lines } = recordingLogger();
  const handler = createTransactionalConsumer({
    client,
    config,
    logger,
    now: () => now,
    batchRead: true,
    metricsSink: () => undefined,
    handle: (envelope) => void runs.set(envelope.id, (runs.get(envelope.id) ?? 0) + 1),
  });
  const old = JSON.stringify(envelopeObject());
  expect((await handler({ Records: [sqsRecord(old)] })).batchItemFailures).toEqual([]);

  // within the window, the batch read recognises it (a batch of two: one record alone does not read)
  now = new Date(now.getTime() + 60_000);
  const within = lines.length;
  await handler({ Records: [sqsRecord(old), sqsRecord(JSON.stringify(envelopeObject()))] });
  expect(lines.slice(within).find((line) => line.message === 'duplicate')).toMatchObject({ detail: expect.stringContaining('batch read') });
  expect(runs.get(JSON.parse(old).id)).toBe(1);

  // past the record's expiry (TTL has not deleted it yet): no proof any more
  now = new Date(now.getTime() + (config.deduplicationWindowSeconds + 60) * 1000);
  const past = lines.length;
  const response = await handler({ Records: [sqsRecord(old), sqsRecord(JSON.stringify(envelopeObject()))] });

  expect(response.batchItemFailures).toEqual([]);
  expect(lines.slice(past).some((line) => line.message === 'batch' && line.batchRead === true)).toBe(true);
  expect(runs.get(JSON.parse(old).id)).toBe(2);
  expect(outcomesOf(lines.slice(past))).toEqual(expect.arrayContaining(['processed', 'processed']));
  expect(outcomesOf(lines.slice(past))).not.toContain('duplicate');
});
