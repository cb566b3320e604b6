/**
 * `replay` past the outbox's TTL on a table whose TTL attribute is not `expiresAt` (review rx15, RX15-3): a flow on the
 * user's own outbox table (`OutboxTable.fromTableAttributes({ timeToLiveAttributeName })`) writes its expiry under the
 * user's attribute, and replay reads the table's TTL attribute (DescribeTimeToLive), so an item past it is not sent.
 * Against DynamoDB Local and the simulator's SQS endpoint, the real CLI in-process.
 */
import { UpdateTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import type { ProducerConfig } from '../../lambda/config';
import { outboxKeyValue } from '../../lambda/producer/outbox-item';
import { OUTBOX_ITEM } from '../../lambda/contract/wire-format';
import { localClient } from '../support/dynamodb-client';
import { createOutbox } from '../support/proof/tables';
import { envelopeObject } from '../lambda/helpers';
import { cli, startOperatorServices, type OperatorServices } from './operator-services';

const DAY_MS = 86_400_000;

let outbox: ProducerConfig;
let services: OperatorServices | undefined;

beforeEach(async () => {
  outbox = await createOutbox(localClient(), { eventSource: 'urn:test:orders' });
  await localClient().send(new UpdateTimeToLiveCommand({ TableName: outbox.outboxTableName, TimeToLiveSpecification: { AttributeName: 'ttl', Enabled: true } }));
});

afterEach(async () => {
  await services?.stop();
  services = undefined;
});

async function outboxItem(id: string, writtenAtMs: number, retentionDays: number): Promise<void> {
  const body = JSON.stringify(envelopeObject({ id, type: 'OrderPlaced', time: new Date(writtenAtMs).toISOString() }));
  const key = outboxKeyValue(id);
  await DynamoDBDocumentClient.from(localClient()).send(
    new PutCommand({
      TableName: outbox.outboxTableName,
      Item: {
        pk: key,
        sk: key,
        [OUTBOX_ITEM.RECORD_TYPE_ATTRIBUTE]: OUTBOX_ITEM.RECORD_TYPE_VALUE,
        [OUTBOX_ITEM.ENVELOPE_ATTRIBUTE]: body,
        [OUTBOX_ITEM.EVENT_ID_ATTRIBUTE]: id,
        [OUTBOX_ITEM.EVENT_TYPE_ATTRIBUTE]: 'OrderPlaced',
        [OUTBOX_ITEM.WRITTEN_AT_ATTRIBUTE]: writtenAtMs,
        ttl: Math.floor(writtenAtMs / 1000) + retentionDays * 86_400,
      },
    }),
  );
}

describe("replay reads the outbox table's own TTL attribute (RX15-3)", () => {
  test('an item past its TTL under the attribute `ttl` is named as past the retention and not sent, exit 3', async () => {
    const s = (services = await startOperatorServices('CustomTtlAttribute'));
    const start = s.clock.now();
    await outboxItem('evt-old', start, 7);
    await outboxItem('evt-kept', start + 3 * DAY_MS, 7);
    s.clock.advanceBy(9 * DAY_MS);

    const result = await cli(
      s,
      'replay', '--table', outbox.outboxTableName, '--queue', s.queue.address.url, '--subscriber', 'billing', '--processing-mode', 'transactional',
      '--filter-policy', 'none', '--deduplication-window', '30d', '--event-id', 'evt-old', '--event-id', 'evt-kept', '--yes', '--json',
    );

    expect(result.code).toBe(3);
    const output = JSON.parse(result.stdout) as { pastRetention: Array<{ eventId: string; expiredAt: string }> };
    expect(output.pastRetention).toEqual([{ eventId: 'evt-old', expiredAt: new Date(start + 7 * DAY_MS).toISOString() }]);
    expect(s.queue.messages().map((message) => (JSON.parse(message.body) as { id: string }).id)).toEqual(['evt-kept']);
  });
});
