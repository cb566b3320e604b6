/**
 * The lease's "held by me" write condition names the owner, not only the version (issue 40, item 2): a record that
 * expired is claimed afresh at version 1 by another delivery, so a stalled holder that still believes it holds version 1
 * must be refused by its owner, or it would complete (or advance) the new holder's record under a lease it no longer has.
 * Against DynamoDB Local: two stores of one subscriber whose clocks are a record's lifetime apart.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { LeaseConsumerConfig } from '../../../lambda/config';
import { PROCESSING_MODE } from '../../../lambda/contract/environment';
import { LeaseLostError } from '../../../lambda/errors';
import { ProcessingRecordStore } from '../../../lambda/processing/record-store';
import { toDocumentClient } from '../../../lambda/transaction/document-client';
import { localClient } from '../../support/dynamodb-client';
import { createLeaseInbox } from '../../support/proof/tables';
import { newMessage } from './fixtures';

const client = localClient();
let config: LeaseConsumerConfig;

beforeAll(async () => {
  config = await createLeaseInbox(client, { subscriberName: 'held-by-me', deduplicationWindowSeconds: 3600, leaseDurationSeconds: 60, processingMode: 'lease' });
});
afterAll(() => client.destroy());

const storeAt = (now: () => Date) =>
  new ProcessingRecordStore({
    client: toDocumentClient(client),
    tableName: config.inboxTableName,
    subscriberName: config.subscriberName,
    deduplicationWindowSeconds: config.deduplicationWindowSeconds,
    leaseDurationSeconds: config.leaseDurationSeconds,
    mode: PROCESSING_MODE.LEASE,
    now,
  });

test("a stalled holder whose record expired and was claimed afresh at the same version by another owner is refused (LeaseLostError), and the new owner's record is untouched", async () => {
  const start = new Date('2026-01-01T00:00:00Z');
  // the second delivery's clock: past the first record's expiry (dedup window) and its lease, skew allowance included
  const later = new Date(start.getTime() + (config.deduplicationWindowSeconds + config.leaseDurationSeconds + 60) * 1000);
  const stalled = storeAt(() => start);
  const fresh = storeAt(() => later);
  const message = newMessage();
  const envelope = { ...message.envelope } as never;

  const first = await stalled.claim(envelope, 'fp', 'owner-stalled', ['effect']);
  const second = await fresh.claim(envelope, 'fp', 'owner-fresh', ['effect']);
  if (!first.claimed || !second.claimed) throw new Error(`both claims should hold: ${JSON.stringify({ first, second })}`);
  // the same version, different owners: only the owner tells them apart
  expect(first.held.version).toBe(second.held.version);

  await expect(stalled.advance(first.held, 'effect', { by: 'stalled' }, undefined)).rejects.toBeInstanceOf(LeaseLostError);
  await expect(stalled.release(first.held, 'effect')).rejects.toBeInstanceOf(LeaseLostError);

  const record = await fresh.read(fresh.key(message.id));
  expect(record).toMatchObject({ owner: 'owner-fresh', status: 'IN_PROGRESS', version: second.held.version, activeStep: 'effect' });
  // and the rightful holder still completes it
  await fresh.advance(second.held, 'effect', { by: 'fresh' }, undefined);
  expect(await fresh.read(fresh.key(message.id))).toMatchObject({ status: 'COMPLETED', context: { by: 'fresh' } });
});
