/**
 * `replay` when the outbox's TTL attribute can not be read from the table (review rx15b, RX15B-1): a role without
 * `dynamodb:DescribeTimeToLive` used to have every item read under `expiresAt`, so on a table whose TTL reads `ttl`
 * an item past it was sent, silently. Now the attribute comes from `--outbox-ttl-attribute` or the Operator output
 * (`outboxTimeToLiveAttribute`), and when neither names it and the table can not say, nothing is sent (exit code 3).
 * Against DynamoDB Local and the simulator's SQS endpoint, the real CLI in-process.
 */
import { UpdateTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import type { ProducerConfig } from '../../lambda/config';
import { outboxKeyValue } from '../../lambda/producer/outbox-item';
import { OUTBOX_ITEM } from '../../lambda/contract/wire-format';
import { SUBSCRIBER_DEPLOYMENT_FORMAT } from '../../lambda/contract/subscriber-deployment';
import { OUTBOX_TTL_UNKNOWN_TEXT } from '../../operator/cli/outbox-ttl-attribute';
import { localClient } from '../support/dynamodb-client';
import { createOutbox } from '../support/proof/tables';
import { envelopeObject } from '../lambda/helpers';
import { cliAt, startOperatorServices, type OperatorServices } from './operator-services';

const DAY_MS = 86_400_000;
const DENIED = { deniedDynamoDbCommands: ['DescribeTimeToLiveCommand'] };

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

/** An outbox item as a producer with `timeToLiveAttributeName: 'ttl'` writes it. */
async function outboxItem(id: string, writtenAtMs: number, retentionDays: number): Promise<void> {
  const key = outboxKeyValue(id);
  await DynamoDBDocumentClient.from(localClient()).send(
    new PutCommand({
      TableName: outbox.outboxTableName,
      Item: {
        pk: key,
        sk: key,
        [OUTBOX_ITEM.RECORD_TYPE_ATTRIBUTE]: OUTBOX_ITEM.RECORD_TYPE_VALUE,
        [OUTBOX_ITEM.ENVELOPE_ATTRIBUTE]: JSON.stringify(envelopeObject({ id, type: 'OrderPlaced', time: new Date(writtenAtMs).toISOString() })),
        [OUTBOX_ITEM.EVENT_ID_ATTRIBUTE]: id,
        [OUTBOX_ITEM.EVENT_TYPE_ATTRIBUTE]: 'OrderPlaced',
        [OUTBOX_ITEM.WRITTEN_AT_ATTRIBUTE]: writtenAtMs,
        ttl: Math.floor(writtenAtMs / 1000) + retentionDays * 86_400,
      },
    }),
  );
}

/** evt-old past its 7-day TTL (9 days old), evt-kept within it. */
async function twoItems(s: OperatorServices): Promise<number> {
  const start = s.clock.now();
  await outboxItem('evt-old', start, 7);
  await outboxItem('evt-kept', start + 3 * DAY_MS, 7);
  s.clock.advanceBy(9 * DAY_MS);
  return start;
}

const sentIds = (s: OperatorServices): string[] => s.queue.messages().map((message) => (JSON.parse(message.body) as { id: string }).id);
const EVENTS = ['--event-id', 'evt-old', '--event-id', 'evt-kept', '--yes', '--json'];

describe('replay when DescribeTimeToLive is denied (RX15B-1)', () => {
  test('flags only: refused, naming the table, the flag and the permission; nothing sent, exit 3', async () => {
    const s = (services = await startOperatorServices('TtlDenied'));
    await twoItems(s);
    const result = await cliAt(
      s, DENIED,
      'replay', '--table', outbox.outboxTableName, '--queue', s.queue.address.url, '--subscriber', 'billing', '--processing-mode', 'transactional',
      '--filter-policy', 'none', '--deduplication-window', '30d', ...EVENTS,
    );
    expect(result.code).toBe(3);
    expect(result.stderr).toContain(`refused: ${OUTBOX_TTL_UNKNOWN_TEXT} ${outbox.outboxTableName} could not be read (DescribeTimeToLive: AccessDeniedException`);
    expect(result.stderr).toContain('--outbox-ttl-attribute');
    expect(result.stderr).toContain('dynamodb:DescribeTimeToLive');
    expect(sentIds(s)).toEqual([]);
  });

  test('--outbox-ttl-attribute ttl: the item past it is named and not sent, the other is', async () => {
    const s = (services = await startOperatorServices('TtlFlag'));
    const start = await twoItems(s);
    const result = await cliAt(
      s, DENIED,
      'replay', '--table', outbox.outboxTableName, '--queue', s.queue.address.url, '--subscriber', 'billing', '--processing-mode', 'transactional',
      '--filter-policy', 'none', '--deduplication-window', '30d', '--outbox-ttl-attribute', 'ttl', ...EVENTS,
    );
    expect(result.code).toBe(3);
    expect((JSON.parse(result.stdout) as { pastRetention: unknown[] }).pastRetention).toEqual([{ eventId: 'evt-old', expiredAt: new Date(start + 7 * DAY_MS).toISOString() }]);
    expect(sentIds(s)).toEqual(['evt-kept']);
  });

  test("the Operator output's outboxTimeToLiveAttribute is used without asking the table", async () => {
    const s = (services = await startOperatorServices('TtlOutput'));
    await twoItems(s);
    const output = {
      format: SUBSCRIBER_DEPLOYMENT_FORMAT,
      subscriberName: 'billing',
      processingMode: 'transactional',
      deduplicationWindowSeconds: 30 * 86_400,
      inboxTable: 'billing-inbox-not-read',
      queueUrl: s.queue.address.url,
      deadLetterQueueUrl: s.queue.address.url,
      outboxTable: outbox.outboxTableName,
      outboxTimeToLiveAttribute: 'ttl',
    };
    const result = await cliAt(s, DENIED, 'replay', '--subscriber-output', JSON.stringify(output), ...EVENTS);
    expect(result.code).toBe(3);
    expect((JSON.parse(result.stdout) as { pastRetention: Array<{ eventId: string }> }).pastRetention.map((event) => event.eventId)).toEqual(['evt-old']);
    expect(sentIds(s)).toEqual(['evt-kept']);
  });
});
