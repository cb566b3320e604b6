/**
 * `dlq show --fetch` (claim-check, issue 42): the dead letter of an offloaded event with its data, fetched and verified
 * by the runtime's own reader (size and SHA-256 against the envelope); refused, naming why, when the object is gone or
 * altered. The reader is an in-memory payload bucket (the reader's own checks against a real S3 are in
 * test/lambda/claim-check.int.test.ts).
 */
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, test } from 'vitest';
import type { PayloadReader } from '../../lambda/claim-check/payload-store';
import { EXIT_CODE } from '../../operator/cli/command';
import { envelopeObject } from '../lambda/helpers';
import { cliAt, startOperatorServices, type OperatorServices } from './operator-services';

const BUCKET = 'orders-payloads';
const attribute = (value: string) => ({ DataType: 'String', StringValue: value });

let services: OperatorServices | undefined;
afterEach(async () => {
  await services?.stop();
  services = undefined;
});

/** An in-memory payload bucket. */
function bucket(): { objects: Map<string, string>; reader: PayloadReader } {
  const objects = new Map<string, string>();
  return { objects, reader: { get: async (name, key) => (objects.has(`${name}/${key}`) ? Buffer.from(objects.get(`${name}/${key}`) as string, 'utf8') : undefined) } };
}

/** Puts the dead letter of an offloaded event whose data is `data` on the services' dead-letter queue; returns its object key. */
function deadLetterOfOffloaded(s: OperatorServices, id: string, data: unknown, objects: Map<string, string>): string {
  const text = JSON.stringify(data);
  const sha256 = createHash('sha256').update(text).digest('hex');
  const key = `event-data/${createHash('sha256').update(id).digest('hex')}/2026-11-30-${sha256}`;
  objects.set(`${BUCKET}/${key}`, text);
  const { data: _inline, ...withoutData } = envelopeObject({ id, type: 'OrderPlaced', time: new Date(s.clock.now()).toISOString() });
  s.deadLetterQueue.send({
    body: JSON.stringify({ ...withoutData, dataref: `s3://${BUCKET}/${key}`, iefdatasha256: sha256, iefdatasize: Buffer.byteLength(text) }),
    messageAttributes: { iefErrorName: attribute('PermanentError'), iefErrorMessage: attribute('order has no customer'), iefSubscriber: attribute('billing'), iefEventId: attribute(id) },
    origin: { via: 'send-message' },
  });
  return `${BUCKET}/${key}`;
}

describe('dlq show --fetch', () => {
  test("shows the offloaded event's data, fetched and verified against the envelope's size and SHA-256", async () => {
    const s = (services = await startOperatorServices('ShowFetch'));
    const { objects, reader } = bucket();
    const data = { orderId: 'o-1', attachment: 'x'.repeat(300) };
    deadLetterOfOffloaded(s, 'evt-large', data, objects);
    const dlq = ['--dead-letter-queue', s.deadLetterQueue.address.url];

    const show = await cliAt(s, { payloadReader: reader }, 'dlq', 'show', 'evt-large', ...dlq, '--fetch');
    expect(show.stderr).toBe('');
    expect(show.code).toBe(EXIT_CODE.OK);
    expect(show.stdout).toContain(`fetched and verified (its size and SHA-256 match the envelope's):\n${JSON.stringify(data, null, 2)}\n`);
    expect(show.stdout).not.toContain('not fetched');
    const json = JSON.parse((await cliAt(s, { payloadReader: reader }, 'dlq', 'show', 'evt-large', ...dlq, '--fetch', '--json')).stdout) as Array<Record<string, unknown>>;
    expect(json[0]).toMatchObject({ offloadedData: { fetched: true, data } });
  });

  test.each([
    ['gone', (objects: Map<string, string>, location: string) => void objects.delete(location), /offloaded data missing, no retry can bring it back/],
    ['altered (same size, another SHA-256)', (objects: Map<string, string>, location: string) => void objects.set(location, (objects.get(location) as string).replace('x', 'y')), /offloaded data altered after the event was written: its SHA-256 differs/],
    ['altered (another size)', (objects: Map<string, string>, location: string) => void objects.set(location, '{}'), /offloaded data altered after the event was written: its size 2 differs from iefdatasize/],
  ])('refuses to show the data of an object %s, naming why (exit 3); the rest of the dead letter is shown', async (_case, damage, why) => {
    const s = (services = await startOperatorServices('ShowFetchRefused'));
    const { objects, reader } = bucket();
    damage(objects, deadLetterOfOffloaded(s, 'evt-large', { orderId: 'o-1', attachment: 'x'.repeat(300) }, objects));
    const dlq = ['--dead-letter-queue', s.deadLetterQueue.address.url];

    const show = await cliAt(s, { payloadReader: reader }, 'dlq', 'show', 'evt-large', ...dlq, '--fetch');
    expect(show.code).toBe(EXIT_CODE.REFUSED);
    expect(show.stdout).toMatch(/reason +PermanentError/);
    expect(show.stdout).toMatch(new RegExp(`not shown: ${why.source}`));
    expect(show.stdout).not.toContain('"attachment"');
    expect(show.stderr).toMatch(new RegExp(`^refused: the data of event 'evt-large' is not shown: ${why.source}`));
    const json = await cliAt(s, { payloadReader: reader }, 'dlq', 'show', 'evt-large', ...dlq, '--fetch', '--json');
    expect(json.code).toBe(EXIT_CODE.REFUSED);
    expect((JSON.parse(json.stdout) as Array<{ offloadedData: { fetched: boolean; refusal: string } }>)[0]!.offloadedData).toMatchObject({ fetched: false, refusal: expect.stringMatching(why) });
  });

  test('applies to show only; a dead letter whose data is inline has nothing to fetch', async () => {
    const s = (services = await startOperatorServices('ShowFetchInline'));
    const dlq = ['--dead-letter-queue', s.deadLetterQueue.address.url];
    expect((await cliAt(s, {}, 'dlq', 'list', ...dlq, '--fetch')).code).toBe(EXIT_CODE.USAGE);
    s.deadLetterQueue.send({ body: JSON.stringify(envelopeObject({ id: 'evt-small' })), messageAttributes: { iefErrorName: attribute('PermanentError'), iefEventId: attribute('evt-small') }, origin: { via: 'send-message' } });
    const show = await cliAt(s, {}, 'dlq', 'show', 'evt-small', ...dlq, '--fetch');
    expect(show.code).toBe(EXIT_CODE.OK);
    expect(show.stderr).toContain("note: event 'evt-small' carries its data inline: nothing to fetch");
  });
});
