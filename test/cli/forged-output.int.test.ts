/**
 * Text from data (event ids and types, reasons, attributes) reaches the operator's terminal escaped: a newline and an
 * escape sequence in an event's type or id cannot forge a row in a table the operator confirms (replay's dry run, the
 * plan of `--yes`), nor in dlq list/show or blocked list/show, and no control, bidi or other format character reaches
 * the terminal raw.
 */
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import type { ProducerConfig } from '../../lambda/config';
import { Outbox } from '../../lambda/producer/outbox';
import { createOutbox } from '../support/proof/tables';
import { localClient, uniqueTableName } from '../support/dynamodb-client';
import { envelopeObject } from '../lambda/helpers';
import { createInboxTable } from '../lambda/processing/fixtures';
import { blockingConsumer, cli, deliverOnce, startOperatorServices, type OperatorServices } from './operator-services';

const SUBSCRIBER = 'billing';

/** Text that, printed raw, ends the row and starts a row of its own, erases the line, and writes right to left. */
const FORGE = '\nFORGED-ROW  redrive\u001b[1A\u001b[2K  \u202eevila\u202c\u0085\u009b2J\u007f';

/** No character but the line breaks of the layout is a control or format character, and no line is the forged row. */
function expectNoForgedRow(output: string): void {
  expect(output.replace(/\n/g, '')).not.toMatch(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u);
  expect(output.split('\n').filter((line) => line.startsWith('FORGED-ROW'))).toEqual([]);
  // what was there is shown, escaped
  expect(output).toContain('\\nFORGED-ROW  redrive\\u001b[1A\\u001b[2K  \\u202eevila\\u202c\\u0085\\u009b2J\\u007f');
}

let inboxTable: string;
let outbox: ProducerConfig;
let services: OperatorServices | undefined;

beforeEach(async () => {
  inboxTable = uniqueTableName('cli-forged-inbox');
  await createInboxTable(localClient(), inboxTable);
  outbox = await createOutbox(localClient(), { eventSource: 'urn:test:orders' });
});

afterEach(async () => {
  await services?.stop();
  services = undefined;
});

describe('text outputs escape what comes from data', () => {
  test("replay's dry run: an event type cannot forge a row", async () => {
    const s = (services = await startOperatorServices('ForgedReplay'));
    const at = new Date(s.clock.now() - 60_000);
    await new Outbox({ client: localClient(), config: outbox, now: () => at }).transactWrite({ events: [{ id: 'evt-1', type: `OrderPlaced${FORGE}`, data: {} }] });

    const dryRun = await cli(s, 'replay', '--table', outbox.outboxTableName, '--queue', s.queue.address.url, '--subscriber', SUBSCRIBER, '--processing-mode', 'transactional', '--filter-policy', 'none', '--deduplication-window', '30d', '--event-id', 'evt-1');

    expect(dryRun.stdout).toContain('evt-1');
    expectNoForgedRow(dryRun.stdout + dryRun.stderr);
  });

  test('dlq list and show: an event id and type cannot forge a row', async () => {
    const s = (services = await startOperatorServices('ForgedDlq'));
    const id = `evt-1${FORGE}`;
    const body = JSON.stringify(envelopeObject({ id, type: `OrderPlaced${FORGE}`, time: new Date(s.clock.now()).toISOString() }));
    await s.deadLetterPublisher.publish({ body, errorName: `PermanentError${FORGE}`, errorMessage: `bad${FORGE}`, subscriber: SUBSCRIBER, sourceMessageId: 'm-1', eventId: id });

    const list = await cli(s, 'dlq', 'list', '--dead-letter-queue', s.deadLetterQueue.address.url);
    const show = await cli(s, 'dlq', 'show', id, '--dead-letter-queue', s.deadLetterQueue.address.url);
    const redrive = await cli(s, 'dlq', 'redrive', '--dead-letter-queue', s.deadLetterQueue.address.url, '--queue', s.queue.address.url, '--subscriber', SUBSCRIBER, '--processing-mode', 'transactional', '--deduplication-window', '30d');

    for (const result of [list, show, redrive]) {
      expect(result.stdout).toContain('evt-1');
      expectNoForgedRow(result.stdout + result.stderr);
    }
  });

  test('blocked list and show: an event id cannot forge a row', async () => {
    const s = (services = await startOperatorServices('ForgedBlocked'));
    const id = `evt-1${FORGE}`;
    const handler = blockingConsumer(s, { subscriberName: SUBSCRIBER, inboxTableName: inboxTable });
    s.queue.send({ body: JSON.stringify(envelopeObject({ id, type: 'OrderPlaced' })), origin: { via: 'sns' } });
    await deliverOnce(s.queue, handler);

    const list = await cli(s, 'blocked', 'list', '--table', inboxTable, '--subscriber', SUBSCRIBER);
    const show = await cli(s, 'blocked', 'show', '--table', inboxTable, '--subscriber', SUBSCRIBER, '--event-id', id);

    for (const result of [list, show]) {
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('evt-1');
      expectNoForgedRow(result.stdout + result.stderr);
    }
  });
});
