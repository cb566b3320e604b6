/**
 * Event ids may not start with `AGGREGATE#` (OUTBOX_ITEM.RESERVED_EVENT_ID_PREFIX): an event's outbox item is keyed
 * `OUTBOX#<eventId>`, an aggregate's head `OUTBOX#AGGREGATE#<aggregateId>`, so such an id would land on another
 * aggregate's head key (review r4, F4). Against DynamoDB Local, with the real OrderedOutbox and Outbox.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { InvalidEventError } from '../../../lambda/errors';
import { OrderedOutbox } from '../../../lambda/ordered/ordered-outbox';
import { Outbox } from '../../../lambda/producer/outbox';
import { OUTBOX_ITEM, TABLE_SCHEMA } from '../../../lambda/contract/wire-format';
import { localClient } from '../../support/dynamodb-client';
import { createOutbox } from '../../support/proof/tables';

let client: DynamoDBClient;
beforeAll(() => {
  client = localClient();
});
afterAll(() => client.destroy());

const unique = (name: string): string => `ids-${name}-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;
const newOutbox = () => createOutbox(client, { eventSource: 'payments', timeToLiveAttributeName: TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE });

describe("event ids under the reserved prefix 'AGGREGATE#'", () => {
  test('copy of r4 F4: OrderedOutbox refuses the id (naming it and the prefix), and the other aggregate then starts at sequence 1', async () => {
    const config = await newOutbox();
    const outbox = new OrderedOutbox({ client, config });
    const a = unique('a');
    const b = unique('b');
    const write = outbox.transactWrite({ events: [{ type: 'PaymentStep', aggregateId: b, data: { step: 'authorised' }, id: `AGGREGATE#${a}` }] });
    await expect(write).rejects.toThrow(InvalidEventError);
    await expect(write).rejects.toThrow(`event id 'AGGREGATE#${a}' starts with 'AGGREGATE#'`);
    const [first] = await outbox.transactWrite({ events: [{ type: 'PaymentStep', aggregateId: a, data: { step: 'authorised' } }] });
    expect(first!.sequence).toBe('0000000000000001');
  });

  test("the standard Outbox refuses it too, before sending (an ordered aggregate's head would be overwritten or taken)", async () => {
    const config = await newOutbox();
    const a = unique('a');
    const write = new Outbox({ client, config }).transactWrite({ events: [{ type: 'OrderPlaced', data: {}, id: `AGGREGATE#${a}` }] });
    await expect(write).rejects.toThrow(InvalidEventError);
    await expect(write).rejects.toThrow(/reserved for the heads of ordered aggregates/);
    const [first] = await new OrderedOutbox({ client, config }).transactWrite({ events: [{ type: 'PaymentStep', aggregateId: a, data: {} }] });
    expect(first!.sequence).toBe('0000000000000001');
  });

  test('the prefix is exact: an id merely containing it, or in another case, is accepted', async () => {
    const config = await newOutbox();
    const written = await new Outbox({ client, config }).transactWrite({ events: [{ type: 'T', data: {}, id: `x-AGGREGATE#${unique('c')}` }, { type: 'T', data: {}, id: `aggregate#${unique('d')}` }] });
    expect(written).toHaveLength(2);
    expect(OUTBOX_ITEM.RESERVED_EVENT_ID_PREFIX).toBe('AGGREGATE#');
  });
});
