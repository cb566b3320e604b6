import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, inject, test } from 'vitest';
import { createTransactionalConsumer } from '../../lambda/consumer/transactional-consumer';
import { Outbox } from '../../lambda/producer/outbox';
import { VirtualClock } from '../../simulator/aws/clock';
import { SimulatedRelay } from '../../simulator/aws/stream-relay';
import type { PipeStreamEvent } from '../../simulator/aws/stream-record';
import { createTables } from '../../simulator/aws/tables';
import { FaultPlan, NO_FAULTS } from '../../simulator/faults/fault-plan';
import { LOCAL_CREDENTIALS, localClient, uniqueTableName } from '../support/dynamodb-client';
import { createKeyedTable } from '../support/proof/tables';
import { recordingLogger } from '../lambda/helpers';
import { createInboxTable } from '../lambda/processing/fixtures';
import { EXAMPLE_OUTBOX_TABLE, EXAMPLE_RELAY } from '../simulator/support/example-models';
import { frozenClock, START_MS } from '../simulator/aws/queue-test-kit';
import { REPLAY_RANGE_MARGIN_MILLISECONDS } from '../../operator/cli/dead-letters/relay-batch-groups';
import { cli, deliverOnce, startOperatorServices, type OperatorServices } from './operator-services';

const OUTBOX_TABLE = EXAMPLE_OUTBOX_TABLE;
const RELAY = EXAMPLE_RELAY;

let services: OperatorServices | undefined;

afterEach(async () => {
  await services?.stop();
  services = undefined;
});

describe('an event the relay gave up on: found with dlq list, replayed from the outbox, applied once', () => {
  test('the simulated pipe, denied sns:Publish, dead-letters the batch; dlq list names its time range; replay of that range applies each event once, twice replayed', async () => {
    // real time: the stream's arrival times are DynamoDB Local's clock
    const s = (services = await startOperatorServices('RelayReplay', new VirtualClock()));
    const client = localClient();
    const outboxTable = uniqueTableName('cli-relay-outbox');
    const local = (await createTables(client, [OUTBOX_TABLE], () => outboxTable)).get(OUTBOX_TABLE.key);
    const streams = new DynamoDBStreamsClient({ endpoint: inject('dynamoDbEndpoint'), region: 'us-east-1', credentials: LOCAL_CREDENTIALS });
    const published: string[] = [];
    const relay = new SimulatedRelay({
      model: RELAY,
      streamArn: local?.streamArn as string,
      streams,
      target: { publish: (message) => ({ messageId: String(published.push(message)) }) },
      faults: new FaultPlan('relay-replay', NO_FAULTS),
      region: 'us-east-1',
      filters: [(event) => (event as PipeStreamEvent).eventName === 'INSERT'],
      render: (event) => ((event as PipeStreamEvent).dynamodb.NewImage as Record<string, { S?: string }>).iefEnvelope?.S ?? '',
      deadLetterQueue: s.relayDeadLetterQueue,
      authorizePublish: () => 'no identity-based policy allows the sns:Publish action',
    });
    await new Outbox({
      client,
      config: { outboxTableName: outboxTable, partitionKeyName: 'pk', sortKeyName: 'sk', timeToLiveAttributeName: 'expiresAt', eventRetentionSeconds: 7 * 86_400, eventSource: 'urn:test:orders' },
    }).transactWrite({ events: [{ id: 'evt-r1', type: 'OrderPlaced', data: {} }, { id: 'evt-r2', type: 'OrderPlaced', data: {} }] });
    while ((await relay.poll()) > 0);
    streams.destroy();
    expect(published).toEqual([]);

    const list = await cli(s, 'dlq', 'list', '--relay-dead-letter-queue', s.relayDeadLetterQueue.address.url);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/relay dead-letter queue .*: 2 message\(s\)/);
    expect(list.stdout).toMatch(/AccessDenied +2/);
    // the two one-record batches, seconds apart, are one line with one replay range (issue 29: 16 batches were 16 lines)
    expect(list.stdout).toMatch(/^2 stream batches of 2 record\(s\) in all on shard /m);
    const suggestions = [...list.stdout.matchAll(/replay --since (\S+) --until (\S+) \.\.\./g)];
    expect(suggestions).toHaveLength(1);
    const since = suggestions.map((match) => match[1] as string).sort()[0] as string;
    const until = suggestions.map((match) => match[2] as string).sort().at(-1) as string;

    const inboxTable = uniqueTableName('cli-relay-inbox');
    await createInboxTable(client, inboxTable);
    const effectsTable = await createKeyedTable(client, 'cli-relay-effects');
    const handler = createTransactionalConsumer({
      client,
      config: { subscriberName: 'billing', inboxTableName: inboxTable, deduplicationWindowSeconds: 30 * 86_400 },
      logger: recordingLogger().logger,
      metricsSink: () => undefined,
      handle: (envelope, tx) => tx.update({ TableName: effectsTable, Key: { pk: envelope.id }, UpdateExpression: 'ADD applied :one', ExpressionAttributeValues: { ':one': 1 } }),
    });
    const replay = ['replay', '--table', outboxTable, '--queue', s.queue.address.url, '--subscriber', 'billing', '--processing-mode', 'transactional', '--filter-policy', 'none', '--deduplication-window', '30d', '--since', since, '--until', until, '--yes'];
    for (let round = 0; round < 2; round++) {
      expect(await cli(s, ...replay)).toMatchObject({ code: 0, stdout: expect.stringContaining('sent 2 to') });
      while ((await deliverOnce(s.queue, handler)) > 0);
    }

    const documents = DynamoDBDocumentClient.from(client);
    for (const id of ['evt-r1', 'evt-r2']) {
      expect((await documents.send(new GetCommand({ TableName: effectsTable, Key: { pk: id }, ConsistentRead: true }))).Item?.applied).toBe(1);
    }
    // the relay dead letters can not be redriven: they hold no events
    expect(await cli(s, 'dlq', 'redrive', '--relay-dead-letter-queue', s.relayDeadLetterQueue.address.url, '--queue', s.queue.address.url, '--subscriber', 'billing', '--deduplication-window', '30d')).toMatchObject({ code: 2 });
  });
});

describe('the replay range dlq list suggests for a relay dead letter covers the events it gave up on (nu11 finding 5)', () => {
  test("on the run's frozen clock, far from DynamoDB Local's: the batches' record times are when the events were committed, so the printed range replays them", async () => {
    // the run's clock stands still years before the real time DynamoDB Local stamps its stream records with
    const clock = frozenClock();
    const s = (services = await startOperatorServices('RelayReplayFrozen', clock));
    const client = localClient();
    const outboxTable = uniqueTableName('cli-relay-frozen-outbox');
    const local = (await createTables(client, [OUTBOX_TABLE], () => outboxTable)).get(OUTBOX_TABLE.key);
    const streams = new DynamoDBStreamsClient({ endpoint: inject('dynamoDbEndpoint'), region: 'us-east-1', credentials: LOCAL_CREDENTIALS });
    const relay = new SimulatedRelay({
      model: RELAY,
      streamArn: local?.streamArn as string,
      streams,
      target: { publish: () => ({ messageId: 'never' }) },
      faults: new FaultPlan('relay-replay-frozen', NO_FAULTS),
      region: 'us-east-1',
      filters: [(event) => (event as PipeStreamEvent).eventName === 'INSERT'],
      render: (event) => ((event as PipeStreamEvent).dynamodb.NewImage as Record<string, { S?: string }>).iefEnvelope?.S ?? '',
      deadLetterQueue: s.relayDeadLetterQueue,
      authorizePublish: () => 'no identity-based policy allows the sns:Publish action',
      // as the simulator builds its relays (simulator/run/build-flow.ts)
      now: () => clock.now(),
    });
    await new Outbox({
      client,
      config: { outboxTableName: outboxTable, partitionKeyName: 'pk', sortKeyName: 'sk', timeToLiveAttributeName: 'expiresAt', eventRetentionSeconds: 7 * 86_400, eventSource: 'urn:test:orders' },
      now: () => new Date(clock.now()),
    }).transactWrite({ events: [{ id: 'evt-f1', type: 'OrderPlaced', data: {} }, { id: 'evt-f2', type: 'OrderPlaced', data: {} }] });
    while ((await relay.poll()) > 0);
    streams.destroy();
    // the pipe gives up later than the commit (its retries; MaximumRecordAgeInSeconds): the list is read an hour on
    clock.advanceBy(3_600_000);

    const list = await cli(s, 'dlq', 'list', '--relay-dead-letter-queue', s.relayDeadLetterQueue.address.url);
    expect(list.code).toBe(0);
    const suggestion = /replay --since (\S+) --until (\S+) \.\.\./.exec(list.stdout);
    expect(suggestion, list.stdout).not.toBeNull();
    const committed = START_MS;
    expect(list.stdout).toContain(`committed ${new Date(committed).toISOString()} to ${new Date(committed).toISOString()}: replay with`);
    const [since, until] = [Date.parse(suggestion?.[1] as string), Date.parse(suggestion?.[2] as string)];
    // the margin the code means, on both sides of the commit time
    expect({ since, until }).toEqual({ since: committed - REPLAY_RANGE_MARGIN_MILLISECONDS, until: committed + REPLAY_RANGE_MARGIN_MILLISECONDS });
    // the operator who follows the advice finds the events
    const replay = ['replay', '--table', outboxTable, '--queue', s.queue.address.url, '--subscriber', 'billing', '--processing-mode', 'transactional', '--filter-policy', 'none', '--deduplication-window', '30d', '--since', suggestion?.[1] as string, '--until', suggestion?.[2] as string];
    expect(await cli(s, ...replay)).toMatchObject({ code: 0, stdout: expect.stringContaining('would send 2') });
  });
});
