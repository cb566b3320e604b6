/**
 * `fence carry` given a table of another kind (the outbox table, whose key is pk and sk, as --from-table or --table)
 * refuses, naming the kind of table it takes, instead of failing with DynamoDB's error about the key conditions.
 * Against DynamoDB Local and the simulator's SQS.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ConsumerConfig, ProducerConfig } from '../../lambda/config';
import { TABLE_SCHEMA } from '../../lambda/contract/wire-format';
import { startSqsEndpoint, type SqsEndpoint } from '../../simulator/aws/sqs-endpoint';
import { EXIT_CODE } from '../../simulator/cli/main';
import { localClient } from '../support/dynamodb-client';
import { createInbox, createOutbox } from '../support/proof/tables';
import { frozenClock } from '../simulator/aws/queue-test-kit';
import { cli as runCli } from './operator-services';

const SUBSCRIBER = 'Books';
const client = localClient();
const clock = frozenClock();
let endpoint: SqsEndpoint;
let outbox: ProducerConfig;
let inbox: ConsumerConfig;

beforeAll(async () => {
  endpoint = await startSqsEndpoint({ resolveQueue: () => undefined });
  [outbox, inbox] = await Promise.all([
    createOutbox(client, { eventSource: 'ledger', timeToLiveAttributeName: TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE }),
    createInbox(client, { subscriberName: SUBSCRIBER, deduplicationWindowSeconds: 3600 }),
  ]);
});
afterAll(async () => {
  client.destroy();
  await endpoint.stop();
});

const cli = (...args: string[]) => runCli({ clock, endpoint }, ...args);

describe('fence carry with a table that is no inbox table', () => {
  test('--from-table the outbox table: refused, naming the inbox table it takes, nothing written', async () => {
    const carried = await cli('fence', 'carry', SUBSCRIBER, '--from-table', outbox.outboxTableName, '--table', inbox.inboxTableName, '--yes');
    expect(carried.stderr).not.toMatch(/ValidationException/);
    expect(carried.stderr).toContain(`refused: --from-table '${outbox.outboxTableName}' is not an inbox table`);
    expect(carried.stderr).toMatch(/, an outbox table's;/);
    expect(carried.code).toBe(EXIT_CODE.REFUSED);
  });

  test('--table the outbox table: refused the same way', async () => {
    const carried = await cli('fence', 'carry', SUBSCRIBER, '--from-table', inbox.inboxTableName, '--table', outbox.outboxTableName);
    expect(carried.stderr).toContain(`refused: --table '${outbox.outboxTableName}' is not an inbox table`);
    expect(carried.code).toBe(EXIT_CODE.REFUSED);
  });
});
