/**
 * A served run (`simulate --serve --start-time` in the past) tells its tables' creation on the run's clock: the tables
 * the run created, at its start; a table deleted and created again under a run table's name while it serves (a lost or
 * replaced inbox table restored under its own name), when it was made, on the run's clock (review ro15b, RO15B-4): the
 * name alone gave it the run's start, older than every fence the run wrote, so no command saw the restore. Against
 * the served DynamoDB endpoint of a real run of test/simulator/fixtures/ordered.
 */
import { afterAll, beforeAll, expect, inject, test } from 'vitest';
import { CreateTableCommand, DeleteTableCommand, DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { shellWords, whileServed } from '../../cli/printed-commands';
import { ORDERED_FIXTURE, PROJECT, synthesizeOrdered, type OrderedAssemblies } from './ordered-fixture';

let synthesized: OrderedAssemblies | undefined;
let permanent: string;

beforeAll(async () => {
  synthesized = await synthesizeOrdered([{ consumer: 'permanent' }]);
  [permanent] = synthesized.assemblies as [string];
});

afterAll(() => synthesized?.remove());
test('a run table deleted and created again while served reports its creation on the run clock, not the run start', async () => {
  const startTime = new Date(Math.floor(Date.now() / 1000) * 1000 - 86_400_000).toISOString();
  await whileServed(['simulate', '--assembly', permanent, '--scenario', `${ORDERED_FIXTURE}/scenario.ts`, '--count', '9', '--seed', 'fence-1', '--start-time', startTime, '--quiet', '--serve', '--endpoint', inject('dynamoDbEndpoint')], PROJECT, async ({ stdout, environment }) => {
    const redrive = stdout.split('\n').find((line) => /idempotent-event-flow dlq redrive --subscriber-output '\{.*"subscriberName":"Shipping".*\}' --dead-letter-queue /.test(line))!;
    const words = shellWords(redrive.trim());
    const output = JSON.parse(words[words.indexOf('--subscriber-output') + 1]!) as { inboxTable: string };
    const endpointAt = words.indexOf('--endpoint');
    const regionAt = words.indexOf('--region');
    const servedEndpoint = endpointAt >= 0 ? words[endpointAt + 1]! : (/DynamoDB Local (http:\S+)/.exec(stdout)?.[1] ?? '');
    const client = new DynamoDBClient({ endpoint: servedEndpoint, region: regionAt >= 0 ? words[regionAt + 1]! : (process.env.AWS_REGION ?? 'us-east-1'), credentials: { accessKeyId: environment.AWS_ACCESS_KEY_ID!, secretAccessKey: environment.AWS_SECRET_ACCESS_KEY! } });
    const before = (await client.send(new DescribeTableCommand({ TableName: output.inboxTable }))).Table!;
    expect(before.CreationDateTime!.getTime()).toBe(Date.parse(startTime));
    await client.send(new DeleteTableCommand({ TableName: output.inboxTable }));
    await client.send(new CreateTableCommand({ TableName: output.inboxTable, KeySchema: before.KeySchema, AttributeDefinitions: before.AttributeDefinitions!.filter((a) => before.KeySchema!.some((k) => k.AttributeName === a.AttributeName)), BillingMode: 'PAY_PER_REQUEST' }));
    const after = (await client.send(new DescribeTableCommand({ TableName: output.inboxTable }))).Table!;
    // made while serving: on the run's clock it is now (start + real elapsed), after every fence the run wrote
    expect(after.CreationDateTime!.getTime()).toBeGreaterThan(Date.parse(startTime) + 1000);
  });
});
