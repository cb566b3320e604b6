/**
 * Review rv9, A-1 (red, product not fixed): `replay --aggregate-table` takes any event id found in any aggregate's
 * `processedMessages` of the tables given as applied BY THE SUBSCRIBER replayed to, and does not send it. The entries
 * do not say which subscriber wrote them, and a DynamoDB single-table design puts the aggregates of several
 * aggregate-mode subscribers in one table (the docs ask for "every table its locate writes", so the operator gives the
 * shared table). Here two aggregate subscribers take OrderPlaced: Loyalty applied it (the real aggregate consumer wrote
 * its item `customer#c-1`), Invoicing did not (its copy dead-lettered). The replay to Invoicing with the shared table
 * says the event was applied ("aggregate ... customer#c-1 remembers its id"), does not send it, and exits 0: Invoicing
 * never applies it (a lost event, with the command saying all is well). Expected: not taken as applied by Invoicing (sent,
 * or refused naming why, as for an event it cannot decide).
 */
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeEach, expect, test } from 'vitest';
import type { ProducerConfig } from '../../lambda/config';
import { createAggregateConsumer } from '../../lambda/aggregate/aggregate-consumer';
import { outboxKeyValue } from '../../lambda/producer/outbox-item';
import { OUTBOX_ITEM } from '../../lambda/contract/wire-format';
import { localClient } from '../support/dynamodb-client';
import { createKeyedTable, createOutbox } from '../support/proof/tables';
import { envelopeObject, outcomesOf, RecordingDeadLetterPublisher, recordingLogger, sqsRecord } from '../lambda/helpers';
import { cli, startOperatorServices, type OperatorServices } from './operator-services';

const DAY_MS = 86_400_000;

let shared: string;
let outbox: ProducerConfig;
let services: OperatorServices | undefined;

beforeEach(async () => {
  shared = await createKeyedTable(localClient(), 'cli-single-table');
  outbox = await createOutbox(localClient(), { eventSource: 'urn:test:orders' });
});

afterEach(async () => {
  await services?.stop();
  services = undefined;
});

test('A-1: an event another aggregate subscriber applied in a shared table is not taken as applied by the subscriber replayed to', async () => {
  const s = (services = await startOperatorServices('AggregateShared'));
  const envelope = envelopeObject({ id: 'evt-order-1', type: 'OrderPlaced', time: new Date(s.clock.now() - DAY_MS).toISOString(), data: { orderId: 'order-1', customer: 'c-1' } });
  const body = JSON.stringify(envelope);
  // the event in the outbox, as the runtime's producer writes it
  const key = outboxKeyValue('evt-order-1');
  await DynamoDBDocumentClient.from(localClient()).send(
    new PutCommand({
      TableName: outbox.outboxTableName,
      Item: {
        pk: key,
        sk: key,
        [OUTBOX_ITEM.RECORD_TYPE_ATTRIBUTE]: OUTBOX_ITEM.RECORD_TYPE_VALUE,
        [OUTBOX_ITEM.ENVELOPE_ATTRIBUTE]: body,
        [OUTBOX_ITEM.EVENT_ID_ATTRIBUTE]: 'evt-order-1',
        [OUTBOX_ITEM.EVENT_TYPE_ATTRIBUTE]: 'OrderPlaced',
        [OUTBOX_ITEM.WRITTEN_AT_ATTRIBUTE]: s.clock.now() - DAY_MS,
      },
    }),
  );
  // GIVEN Loyalty (aggregate mode, the shared table) applied it with the real runtime
  const logged = recordingLogger();
  const loyalty = createAggregateConsumer<{ customer: string }, { points: number }>({
    locate: (event) => ({ tableName: shared, key: { pk: `customer#${event.data.customer}` } }),
    apply: (current) => ({ state: { points: (current?.points ?? 0) + 10 } }),
    client: localClient(),
    config: { subscriberName: 'Loyalty' },
    deadLetter: new RecordingDeadLetterPublisher(),
    logger: logged.logger,
    metricsSink: () => undefined,
  });
  const answered = (await loyalty({ Records: [sqsRecord(body, { messageId: 'm-1' })] } as never, {} as never)) as { batchItemFailures: unknown[] };
  expect(answered.batchItemFailures).toEqual([]);
  expect(outcomesOf(logged.lines)).toEqual(['processed']);

  // WHEN the operator replays it to Invoicing (aggregate mode too, its invoices in the same single table), giving the table
  const replay = await cli(
    s,
    'replay', '--table', outbox.outboxTableName, '--queue', s.queue.address.url, '--subscriber', 'Invoicing', '--processing-mode', 'aggregate',
    '--filter-policy', 'none', '--event-id', 'evt-order-1', '--aggregate-table', shared, '--yes', '--json',
  );

  // THEN Invoicing's event is not declared applied on the word of Loyalty's aggregate
  const [decision] = (JSON.parse(replay.stdout) as { events: { eventId: string; send: boolean; applied?: boolean; why?: string }[] }).events;
  expect(decision, replay.stdout).not.toEqual(expect.objectContaining({ applied: true }));
});
