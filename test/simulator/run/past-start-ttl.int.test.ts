/**
 * A run started long in the past (`--start-time` a year ago: a replayed CI failure, or the suite's fixed start times
 * once the calendar has moved on) keeps its outbox items: the run writes their TTL on its own clock, so every one is
 * past it by the real clock, and DynamoDB Local, whose TTL deletes by the real clock, must not be the one to delete
 * them (its deletions come at a moment the machine sets, not the seed). The served DynamoDB endpoint still tells the
 * operator the outbox's TTL as the template defines it (DescribeTimeToLive), which `replay` and `fence replay` read.
 * Against a real served run of test/simulator/fixtures/ordered with its correct consumer.
 */
import { afterAll, beforeAll, expect, inject, test } from 'vitest';
import { DescribeTimeToLiveCommand, DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { whileServed } from '../../cli/printed-commands';
import { ORDERED_FIXTURE, PROJECT, synthesizeOrdered, type OrderedAssemblies } from './ordered-fixture';

const COUNT = 9;

let synthesized: OrderedAssemblies | undefined;
let ordered: string;

beforeAll(async () => {
  synthesized = await synthesizeOrdered([{ consumer: 'ordered' }]);
  [ordered] = synthesized.assemblies as [string];
});

afterAll(() => synthesized?.remove());

test('a run started a year ago keeps every outbox item, and its served endpoint names the outbox TTL attribute', async () => {
  const startTime = new Date(Math.floor(Date.now() / 1000) * 1000 - 365 * 86_400_000).toISOString();
  const local = inject('dynamoDbEndpoint');
  await whileServed(['simulate', '--assembly', ordered, '--scenario', `${ORDERED_FIXTURE}/scenario.ts`, '--count', String(COUNT), '--seed', 'ttl-1', '--start-time', startTime, '--quiet', '--serve', '--endpoint', local], PROJECT, async ({ stdout, stderr, environment }) => {
    expect(stderr).not.toContain('error:');
    expect(stdout).toMatch(/^OK: /m);
    const outboxTable = /\(outbox table (\S+)\):/.exec(stdout)?.[1];
    expect(outboxTable).toBeDefined();
    const servedEndpoint = /^ {2}DynamoDB Local +(http:\S+)/m.exec(stdout)![1]!;
    const region = process.env.AWS_REGION ?? 'us-east-1';
    const served = new DynamoDBClient({ endpoint: servedEndpoint, region, credentials: { accessKeyId: environment.AWS_ACCESS_KEY_ID!, secretAccessKey: environment.AWS_SECRET_ACCESS_KEY! } });
    const direct = new DynamoDBClient({ endpoint: local, region, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    // DynamoDB Local deletes by the real clock: its TTL is never turned on, so nothing the run wrote is deleted by it
    expect((await direct.send(new DescribeTimeToLiveCommand({ TableName: outboxTable }))).TimeToLiveDescription?.TimeToLiveStatus).toBe('DISABLED');
    // every event the run committed is still in the outbox, though past its TTL by the real clock (an ordered
    // aggregate's head item carries no TTL)
    const scanned = await direct.send(new ScanCommand({ TableName: outboxTable, ConsistentRead: true, FilterExpression: 'attribute_exists(expiresAt)', ProjectionExpression: 'expiresAt' }));
    const expiries = (scanned.Items ?? []).map((item) => Number(item.expiresAt?.N));
    expect(expiries).toHaveLength(COUNT);
    expect(expiries.every((expiresAt) => expiresAt < Date.now() / 1000)).toBe(true);
    // the operator's endpoint tells the TTL as the template defines it
    expect((await served.send(new DescribeTimeToLiveCommand({ TableName: outboxTable }))).TimeToLiveDescription).toEqual({ TimeToLiveStatus: 'ENABLED', AttributeName: 'expiresAt' });
  });
});

