/**
 * `replay --flow-profile` must prove the profile reaches the flow of the subscriber it replays to (review rx14,
 * RX14-3): a profile of another environment (staging's operator role, replaying to production's subscriber) would read
 * that environment's outbox and send its events to this subscriber, whose inbox has never seen their ids. The
 * subscriber's Operator output names its topic; the profile's credentials must be of the topic's account, and the
 * outbox is read in the topic's Region, whatever --region says (that is the subscriber's). Against DynamoDB Local and
 * the simulator's SQS endpoint, with the real CLI in-process and AWS config files of the test's own.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeEach, describe, expect, inject, test } from 'vitest';
import type { ProducerConfig } from '../../lambda/config';
import { outboxKeyValue } from '../../lambda/producer/outbox-item';
import { OUTBOX_ITEM } from '../../lambda/contract/wire-format';
import { SUBSCRIBER_DEPLOYMENT_FORMAT } from '../../lambda/contract/subscriber-deployment';
import { flowAccountClient } from '../../operator/cli/flow-account-client';
import { localClient, uniqueTableName } from '../support/dynamodb-client';
import { createOutbox } from '../support/proof/tables';
import { envelopeObject } from '../lambda/helpers';
import { createInboxTable } from '../lambda/processing/fixtures';
import { cli, cliAt, startOperatorServices, type OperatorServices } from './operator-services';

const PRODUCTION = '111111111111';
const STAGING = '333333333333';
const TOPIC_ARN = `arn:aws:sns:us-east-1:${PRODUCTION}:Payments-EventTopic-674D61B3`;

let inboxTable: string;
let outbox: ProducerConfig;
let services: OperatorServices | undefined;
let directory: string;

beforeEach(async () => {
  inboxTable = uniqueTableName('cli-identity-inbox');
  await createInboxTable(localClient(), inboxTable);
  outbox = await createOutbox(localClient(), { eventSource: 'urn:test:orders' });
  directory = mkdtempSync(path.join(tmpdir(), 'ief-flow-identity-'));
  // the production and staging outbox profiles (static keys with the account they are of: DynamoDB Local takes any
  // letters-only key), and one that does not say its account
  writeFileSync(path.join(directory, 'config'), ['production-outbox', 'staging-outbox', 'unknown-account'].map((name) => `[profile ${name}]\nregion = eu-west-1\n`).join('\n'));
  writeFileSync(
    path.join(directory, 'credentials'),
    `[production-outbox]\naws_access_key_id = production\naws_secret_access_key = local\naws_account_id = ${PRODUCTION}\n\n` +
      `[staging-outbox]\naws_access_key_id = staging\naws_secret_access_key = local\naws_account_id = ${STAGING}\n\n` +
      '[unknown-account]\naws_access_key_id = unknown\naws_secret_access_key = local\n',
  );
});

afterEach(async () => {
  await services?.stop();
  services = undefined;
  rmSync(directory, { recursive: true, force: true });
});

/** `act` with the AWS config files of this test, and the subscriber's own credentials in the environment. */
async function withAwsFiles<T>(act: () => Promise<T>): Promise<T> {
  const variables: Record<string, string | undefined> = {
    AWS_CONFIG_FILE: path.join(directory, 'config'),
    AWS_SHARED_CREDENTIALS_FILE: path.join(directory, 'credentials'),
    AWS_ACCESS_KEY_ID: 'subscriber',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_PROFILE: undefined,
  };
  const saved = Object.fromEntries(Object.keys(variables).map((name) => [name, process.env[name]]));
  const set = (values: Record<string, string | undefined>): void => {
    for (const [name, value] of Object.entries(values)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
  set(variables);
  try {
    return await act();
  } finally {
    set(saved);
  }
}

async function writeEvent(id: string, writtenAtMs: number): Promise<void> {
  const body = JSON.stringify(envelopeObject({ id, type: 'OrderPlaced', time: new Date(writtenAtMs).toISOString() }));
  const key = outboxKeyValue(id);
  await DynamoDBDocumentClient.from(localClient()).send(
    new PutCommand({
      TableName: outbox.outboxTableName,
      Item: { pk: key, sk: key, [OUTBOX_ITEM.RECORD_TYPE_ATTRIBUTE]: OUTBOX_ITEM.RECORD_TYPE_VALUE, [OUTBOX_ITEM.ENVELOPE_ATTRIBUTE]: body, [OUTBOX_ITEM.EVENT_ID_ATTRIBUTE]: id, [OUTBOX_ITEM.EVENT_TYPE_ATTRIBUTE]: 'OrderPlaced', [OUTBOX_ITEM.WRITTEN_AT_ATTRIBUTE]: writtenAtMs },
    }),
  );
}

/** Ledger's Operator output, as the constructs write it for a subscriber of another account (no outbox table). */
function ledgerOutput(s: OperatorServices, topicArn: string | undefined): string {
  return JSON.stringify({
    format: SUBSCRIBER_DEPLOYMENT_FORMAT,
    subscriberName: 'Ledger',
    processingMode: 'transactional',
    deduplicationWindowSeconds: 30 * 86_400,
    inboxTable,
    queueUrl: s.queue.address.url,
    deadLetterQueueUrl: s.deadLetterQueue.address.url,
    ...(topicArn === undefined ? {} : { topicArn }),
  });
}

/** The flow's Operator output (the fields replay reads): its outbox table and its topic. */
function flowOutput(topicArn: string, outboxTable = outbox.outboxTableName): string {
  return JSON.stringify({ outboxTable, outboxTimeToLiveAttribute: 'expiresAt', topicArn, relayPipeName: 'Payments-Relay' });
}

/**
 * Ledger's replay of evt-1 with `--flow-profile profile`, its output naming `topicArn` (null: none); the outbox from the
 * flow's Operator output (--flow-output) when the subscriber's names a topic, else by --table.
 */
async function replay(s: OperatorServices, profile: string, topicArn: string | null = TOPIC_ARN) {
  const outboxOptions = topicArn === null ? ['--table', outbox.outboxTableName] : ['--flow-output', flowOutput(topicArn)];
  return withAwsFiles(() =>
    cli(s, 'replay', '--subscriber-output', ledgerOutput(s, topicArn ?? undefined), ...outboxOptions, '--flow-profile', profile, '--event-id', 'evt-1', '--endpoint', inject('dynamoDbEndpoint'), '--yes', '--json'),
  );
}

describe("replay --flow-profile is tied to the subscriber's flow (RX14-3)", () => {
  test("a profile of another account than the subscriber's topic is refused, naming both accounts; nothing is sent", async () => {
    const s = (services = await startOperatorServices('FlowIdentityOther'));
    await writeEvent('evt-1', s.clock.now());

    const result = await replay(s, 'staging-outbox');

    expect(result.code).toBe(3);
    expect(result.stderr).toContain(`--flow-profile staging-outbox reaches account ${STAGING}`);
    expect(result.stderr).toContain(`topic ${TOPIC_ARN} of account ${PRODUCTION}`);
    expect(s.queue.messages()).toEqual([]);
  });

  test('a profile whose account is not known is refused: it can not be proven', async () => {
    const s = (services = await startOperatorServices('FlowIdentityUnknown'));
    await writeEvent('evt-1', s.clock.now());

    const result = await replay(s, 'unknown-account');

    expect(result.code).toBe(3);
    expect(result.stderr).toContain('--flow-profile unknown-account: the account of its credentials is not known');
    expect(s.queue.messages()).toEqual([]);
  });

  test('an output that does not name its topic is refused with --flow-profile (exit 2)', async () => {
    const s = (services = await startOperatorServices('FlowIdentityNoTopic'));
    await writeEvent('evt-1', s.clock.now());

    const result = await replay(s, 'production-outbox', null);

    expect(result.code).toBe(2);
    expect(result.stderr).toContain("the Operator output of 'Ledger' does not name its topic (topicArn)");
    expect(s.queue.messages()).toEqual([]);
  });

  test("a profile of the topic's account reads the outbox and the event is sent", async () => {
    const s = (services = await startOperatorServices('FlowIdentitySame'));
    await writeEvent('evt-1', s.clock.now());

    const result = await replay(s, 'production-outbox');

    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    expect(s.queue.messages().map((message) => (JSON.parse(message.body) as { id: string }).id)).toEqual(['evt-1']);
  });

  test("the outbox is read in the topic's Region, not in the profile's nor in --region's (the subscriber's)", async () => {
    const client = flowAccountClient({ region: 'eu-central-1' }, 'production-outbox', 'us-east-1');
    try {
      expect(await withAwsFiles(() => client.config.region())).toBe('us-east-1');
    } finally {
      client.destroy();
    }
  });
});

describe("replay's outbox is tied to the subscriber's topic by the flow's Operator output (RX15-2, RX15-6)", () => {
  const ledgerArgs = (s: OperatorServices, ...rest: string[]): string[] => ['replay', '--subscriber-output', ledgerOutput(s, TOPIC_ARN), '--event-id', 'evt-1', '--endpoint', inject('dynamoDbEndpoint'), '--yes', '--json', ...rest];

  test('--table alone, for a subscriber whose output names a topic but no outbox, is refused (exit 2) naming --flow-output; nothing is read or sent', async () => {
    const s = (services = await startOperatorServices('FlowOutputNeeded'));
    await writeEvent('evt-1', s.clock.now());

    const result = await withAwsFiles(() => cli(s, ...ledgerArgs(s, '--table', outbox.outboxTableName, '--flow-profile', 'production-outbox')));

    expect(result.code).toBe(2);
    expect(result.stderr).toContain("'replay' to 'Ledger' needs --flow-output");
    expect(s.queue.messages()).toEqual([]);
  });

  test("the Operator output of another flow of the same account (another topic) is refused (exit 3), naming both topics; nothing is sent", async () => {
    const s = (services = await startOperatorServices('FlowOutputOther'));
    await writeEvent('evt-1', s.clock.now());
    const otherTopic = `arn:aws:sns:us-east-1:${PRODUCTION}:Refunds-EventTopic-0A1B2C3D`;

    const result = await withAwsFiles(() => cli(s, ...ledgerArgs(s, '--flow-output', flowOutput(otherTopic), '--flow-profile', 'production-outbox')));

    expect(result.code).toBe(3);
    expect(result.stderr).toContain(`--flow-output is the Operator output of the flow whose topic is ${otherTopic}, but 'Ledger' subscribes to the topic ${TOPIC_ARN}`);
    expect(s.queue.messages()).toEqual([]);
  });

  test('a --table that disagrees with --flow-output is a usage error (exit 2)', async () => {
    const s = (services = await startOperatorServices('FlowOutputTable'));
    await writeEvent('evt-1', s.clock.now());

    const result = await withAwsFiles(() => cli(s, ...ledgerArgs(s, '--flow-output', flowOutput(TOPIC_ARN), '--table', 'another-outbox', '--flow-profile', 'production-outbox')));

    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`--table another-outbox disagrees with --flow-output (its outboxTable is ${outbox.outboxTableName})`);
    expect(s.queue.messages()).toEqual([]);
  });

  test("without --flow-profile, the outbox is read in the topic's Region, not --region's (the subscriber's), and the event is sent", async () => {
    const s = (services = await startOperatorServices('FlowOutputRegion'));
    await writeEvent('evt-1', s.clock.now());
    const regions: Array<string | undefined> = [];

    const result = await cliAt(s, { clientRegions: regions }, ...ledgerArgs(s, '--flow-output', flowOutput(TOPIC_ARN), '--region', 'eu-central-1'));

    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    // the topic's Region (us-east-1) for the outbox; the subscriber's (--region) for its inbox
    expect(regions).toEqual(['us-east-1', 'eu-central-1']);
    expect(s.queue.messages().map((message) => (JSON.parse(message.body) as { id: string }).id)).toEqual(['evt-1']);
  });
});
