/**
 * `idempotent-event-flow verify` against a served run (`simulate --serve`, the local stand-in of a deployed app): the
 * command reaches it only through the SDK's settings (AWS_ENDPOINT_URL, AWS_REGION, credentials from the environment),
 * as it would reach an account. Against the example, it ends OK; a second run's ids never collide with the first's;
 * signed as the orders account (as on AWS), it cannot see Loyalty (the loyalty account) and says NOT PROVEN naming its subscription;
 * against a copy whose Shipping handler throws on every event, it fails naming the events Shipping never applied, and
 * its --cleanup keeps their dead letters.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { describe, expect, onTestFinished, test } from 'vitest';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { ORDER_BILLED } from '../../example/functions/order-events';
import { EXIT_CODE, main } from '../../simulator/cli/main';
import { verifyClients } from '../../simulator/verify/clients';
import { findDeployedFlow } from '../../simulator/verify/deployed-flow';
import { producerProbesNotRunLine } from '../../simulator/verify/verify-report';
import { exampleAssemblyVariant, logicalIdAt, writeCodeAsset } from '../support/assembly-variant';
import { exampleAssembly } from '../support/example-assembly';
import { waitFor } from './printed-commands';

const PROJECT = path.resolve(__dirname, '../..');
const SCENARIO = 'example/simulation/scenario.ts';
/** A filter policy that takes no event of the example. */
const NO_SUCH_EVENT = { type: ['NoSuchEvent'] };

interface Served {
  readonly environment: Record<string, string>;
  stop(): Promise<void>;
}

/** Serves a run of `assembly` (its own verdict aside) and returns the environment its printed exports set. */
async function serve(assembly: string): Promise<Served> {
  let stdout = '';
  const stop = new AbortController();
  // served from a directory without the app's cdk.json: a served run that watches the app synthesizes it again when its
  // sources look newer than the assembly, and its queues wait meanwhile (minutes on a loaded machine)
  const cwd = mkdtempSync(path.join(tmpdir(), 'ief-verify-served-'));
  onTestFinished(() => rmSync(cwd, { recursive: true, force: true }));
  const running = main(['simulate', '--assembly', assembly, '--scenario', path.join(PROJECT, SCENARIO), '--count', '1', '--no-faults', '--quiet', '--seed', 'verify-serve', '--serve'], {
    stdout: (text) => void (stdout += text),
    stderr: () => undefined,
    cwd,
    stopSignal: stop.signal,
  });
  let finished = false;
  void running.finally(() => (finished = true));
  await waitFor(() => stdout.includes('export AWS_ENDPOINT_URL=') || finished, 'the run to serve');
  expect(finished).toBe(false);
  const environment: Record<string, string> = {};
  for (const line of stdout.split('\n').filter((candidate) => candidate.startsWith('export '))) {
    for (const pair of line.slice('export '.length).split(' ')) {
      const [name, value] = pair.split('=') as [string, string];
      environment[name] = value;
    }
  }
  return {
    environment,
    stop: async () => {
      stop.abort();
      await running;
    },
  };
}

/** Runs `verify` with the served environment (and nothing else of AWS's) in this process's environment. */
interface VerifyJson {
  runId: string;
  eventIds: string[];
  derivedEvents: { id: string; type: string; from?: { eventId: string; subscriber: string; index: number } }[];
  violations: { kind: string; subscriber?: string; detail: string }[];
  subscribers?: { name: string }[];
  filterDifferences?: { subscriber: string; deployed: unknown }[];
  notQuiet?: { reason: string; timeoutSeconds: number; waitingFor: string[] };
  producerProbesNotRun?: string[];
  verdict?: { status: string };
}

/** The run's own ids carry its run id; every derived event names the run event it derives from. */
function expectOwnIds(json: VerifyJson): void {
  expect(json.eventIds.filter((id) => !id.includes(json.runId))).toEqual([]);
  const ofRun = new Set([...json.eventIds, ...json.derivedEvents.map((event) => event.id)]);
  expect(json.derivedEvents.filter((event) => event.from === undefined || !ofRun.has(event.from.eventId))).toEqual([]);
}

async function verify(served: Served, args: readonly string[], signedAs: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string; json: VerifyJson }> {
  const saved = { ...process.env };
  for (const name of Object.keys(process.env)) if (name.startsWith('AWS_')) delete process.env[name];
  Object.assign(process.env, served.environment, signedAs);
  const directory = mkdtempSync(path.join(tmpdir(), 'ief-verify-'));
  const jsonFile = path.join(directory, 'result.json');
  let stdout = '';
  let stderr = '';
  try {
    // the example's two accounts (orders, loyalty), as the serve banner prints them: verify refuses without --account (V11-5)
    const accounts = args.includes('--account') ? [] : ['--account', '111111111111', '--account', '222222222222'];
    const code = await main(['verify', '--scenario', SCENARIO, '--poll', '1', '--timeout', process.env.IEF_TEST_VERIFY_TIMEOUT ?? '600', '--json', jsonFile, ...accounts, ...args], {
      stdout: (text) => void (stdout += text),
      stderr: (text) => void (stderr += text),
      cwd: PROJECT,
    });
    const json: VerifyJson = existsSync(jsonFile) ? JSON.parse(readFileSync(jsonFile, 'utf8')) : { runId: '', eventIds: [], derivedEvents: [], violations: [] };
    return { code, stdout, stderr, json };
  } finally {
    process.env = saved;
    rmSync(directory, { recursive: true, force: true });
  }
}

/** Per mark, the keys (`pk`) of the items of the served stacks' tables that carry it anywhere (read through the served endpoint). */
async function itemsCarrying(served: Served, marks: readonly string[]): Promise<string[][]> {
  const saved = { ...process.env };
  for (const name of Object.keys(process.env)) if (name.startsWith('AWS_')) delete process.env[name];
  Object.assign(process.env, served.environment);
  const clients = verifyClients();
  try {
    const flow = await findDeployedFlow(clients);
    const keys = marks.map((): string[] => []);
    for (const table of new Set(flow.resources.filter((resource) => resource.type === 'AWS::DynamoDB::Table').map((resource) => resource.physicalId))) {
      let startKey: Record<string, unknown> | undefined;
      do {
        const page = await clients.documents.send(new ScanCommand({ TableName: table, ExclusiveStartKey: startKey, ConsistentRead: true }));
        for (const item of page.Items ?? []) marks.forEach((mark, index) => void (JSON.stringify(item).includes(mark) && keys[index]!.push(String(item.pk))));
        startKey = page.LastEvaluatedKey;
      } while (startKey !== undefined);
    }
    return keys;
  } finally {
    clients.destroy();
    process.env = saved;
  }
}

describe('verify', () => {
  test('against the served example ends OK, and a second run\'s ids never collide with the first\'s', async () => {
    // GIVEN the example, served as a deployed app would answer
    const served = await serve(await exampleAssembly());
    onTestFinished(() => served.stop());
    expect(served.environment.AWS_ENDPOINT_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    // WHEN verify runs the example's scenario against it
    const first = await verify(served, ['--count', '10', '--seed', 'same']);

    // THEN every check passes, with the events of the run found and probed
    expect(first.code, `${first.stdout}\n${first.stderr.slice(-4000)}`).toBe(EXIT_CODE.OK);
    expect(first.stdout).toContain('OK: each effect applied exactly once');
    // and it says that the scenario's producer probes (the dual-write check) were not run (review r12, R12-3)
    expect(first.json.producerProbesNotRun).toEqual(['Orders/PlaceOrder', 'Orders/Fulfilment']);
    expect(first.stdout).toContain(producerProbesNotRunLine(['Orders/PlaceOrder', 'Orders/Fulfilment']));
    expect(first.json.eventIds.length).toBeGreaterThanOrEqual(10);
    expect(first.stderr).toMatch(/producing: \d+\/\d+ command\(s\)/);
    // rv9 V-3: the time limit derived again once the run's events are known: an order's fulfilment steps are one FIFO
    // message group on OrderTracking's queue, dead-lettered one after another (--timeout given: the figure is said)
    expect(first.stderr).toMatch(/the default derived again from the run's events is \d+s \([^\n]*3 events of one aggregate \([^)]+\) on OrderTracking's FIFO queue, dead-lettered one after another/);
    // the run's own ids are its commands'; Billing's OrderBilled events (derived ids) are listed apart, with their source
    expectOwnIds(first.json);
    const billed = first.json.derivedEvents.filter((event) => event.type === ORDER_BILLED);
    expect(billed.map((event) => event.from?.eventId).sort()).toEqual(first.json.eventIds.filter((id) => id.startsWith('order-placed-')));
    expect(billed.every((event) => event.from?.subscriber === 'Billing' && event.from.index === 0)).toBe(true);

    // WHEN it runs again with the same seed, in the same "account"
    const second = await verify(served, ['--count', '3', '--seed', 'same', '--cleanup']);

    // THEN it is OK again: its ids are its own, none of the first run's, and its cleanup names what it removed
    expect(second.code, `${second.stdout}\n${second.stderr.slice(-4000)}`).toBe(EXIT_CODE.OK);
    expect(second.json.runId).not.toBe(first.json.runId);
    expect(second.json.eventIds.filter((id) => first.json.eventIds.includes(id))).toEqual([]);
    expect(second.json.derivedEvents.filter((event) => first.json.derivedEvents.some((earlier) => earlier.id === event.id))).toEqual([]);
    expectOwnIds(second.json);
    expect(second.stdout).toMatch(/cleanup removed:\n {2}\d+ item\(s\) of the run from table /);
    // and it kept the S3 objects of the run's offloaded events (the second order's 6 MiB attachment), naming each exactly,
    // why, and when the bucket's lifecycle rule removes them (review v11, V11-7)
    expect(second.stdout).toMatch(
      /kept \d+ offloaded event data object\(s\) of the run in bucket (\S+) \(s3:\/\/\1\/event-data\/[0-9a-f]{64}\/\d{4}-\d{2}-\d{2}-[0-9a-f]{64}[,)].*the payload bucket denies deleting event data.*its lifecycle rule ExpireOffloadedEventData expires each \d+ day\(s\) after it was written \(S3 removes the last of them from \d{4}-\d{2}-\d{2} 00:00 UTC\)/,
    );
    // and the cleanup removed the second run's items only, by exact key parts: what it left is what it said it left,
    // the items whose key holds no id of the run (the example's invoices and their mails, keyed `INVOICE#<random id>`
    // that Invoicing chose); the first run's items stay
    const [firstRunItems, secondRunItems] = await itemsCarrying(served, [first.json.runId, second.json.runId]);
    const saidLeft = [...second.stdout.matchAll(/left (\d+) item\(s\) in table /g)].reduce((sum, match) => sum + Number(match[1]), 0);
    // and it kept the subscribers' inbox records of the run (review v11, V11-11: a late duplicate delivery finds them)
    const saidKept = [...second.stdout.matchAll(/kept (\d+) runtime record\(s\) of the run in table /g)].reduce((sum, match) => sum + Number(match[1]), 0);
    // among them CustomerStats' aggregate items (review r12b, R12B-5: their processed message ids are its only duplicate detection)
    const keptAggregates = [...second.stdout.matchAll(/(\d+) aggregate item\(s\) never expire/g)].reduce((sum, match) => sum + Number(match[1]), 0);
    expect(keptAggregates).toBeGreaterThan(0);
    expect(saidKept).toBeGreaterThan(0);
    const subscriberNames = (second.json.subscribers ?? []).map((subscriber) => subscriber.name);
    const inboxRecords = secondRunItems.filter((key) => subscriberNames.some((name) => key.startsWith(`${name}#`) || key.startsWith(`${name}@sequence#`)));
    expect(inboxRecords.length).toBeGreaterThan(0);
    expect(inboxRecords.length).toBeLessThanOrEqual(saidKept);
    const others = secondRunItems.filter((key) => !inboxRecords.includes(key));
    expect(others.length).toBe(saidLeft + keptAggregates);
    expect(others.filter((key) => !key.startsWith('INVOICE#') && !key.startsWith('CUSTOMER#'))).toEqual([]);
    expect(firstRunItems.length).toBeGreaterThanOrEqual(first.json.eventIds.length);

    // (the printed credentials name no account, so the served CloudFormation lists every stack of the app, Loyalty's in
    // the loyalty account too, and every subscription of the flow's topic is a found subscriber's: OK above is right)
    // WHEN verify runs with the orders account's credentials, as it would on AWS (rv9 V-1): CloudFormation lists only
    // that account's stacks, so Loyalty (the loyalty account) is not found
    const orders = await verify(served, ['--count', '1', '--seed', 'same'], { AWS_ACCESS_KEY_ID: '111111111111' });

    // THEN the verdict is NOT PROVEN, naming Loyalty's subscription (its queue, account and Region) from the topic's
    // subscriptions, and the scenario's Loyalty probe as not checked
    expect(orders.code, `${orders.stdout}\n${orders.stderr.slice(-4000)}`).toBe(EXIT_CODE.NOT_PROVEN);
    expect(orders.stdout).toMatch(/NOT PROVEN/);
    expect(orders.stdout).toMatch(/subscription \S+ delivers to queue arn:aws:sqs:eu-west-1:222222222222:\S+ \(account 222222222222, Region eu-west-1\), the queue of no subscriber verify found/);
    expect(orders.stdout).toMatch(/effect probes for Loyalty name no subscriber found/);
    expect(orders.stdout).not.toMatch(/VIOLATED/);

    // WHEN a third run looks once and does not wait (--timeout 0)
    const third = await verify(served, ['--count', '1', '--seed', 'same', '--timeout', '0']);

    // THEN it fails saying what it still waited for, and its --json says so too (partial: no checks ran)
    expect(third.code, `${third.stdout}\n${third.stderr.slice(-4000)}`).toBe(EXIT_CODE.NOT_QUIET);
    expect(third.json.verdict?.status).toBe('NOT QUIET');
    expect(third.stderr).toContain(`verify run ${third.json.runId}: the flow was not quiet after 0s (--timeout); still waiting for`);
    expect(third.json.notQuiet?.timeoutSeconds).toBe(0);
    expect(third.json.notQuiet?.reason).toContain(third.json.notQuiet?.waitingFor.join('; ') || 'a second quiet look');
    expect(third.json.violations).toBeUndefined();
    expectOwnIds(third.json);
  });

  test('against a served copy whose Shipping handler throws on every event, fails naming the events Shipping never applied', async () => {
    // GIVEN a copy of the example whose Shipping function throws, its queue moving a message after one failed receive
    const variant = await exampleAssemblyVariant((template, directory) => {
      const fn = template.Resources[logicalIdAt(template, 'Orders/Shipping/Function/Resource/Resource')]!;
      fn.Metadata!['aws:asset:path'] = writeCodeAsset(directory, 'throwing-shipping', "exports.handler = async () => { throw new Error('shipping is down'); };\n");
      fn.Properties!.Timeout = 2;
      const queue = template.Resources[logicalIdAt(template, 'Orders/Shipping/Queue/Resource/Resource')]!;
      queue.Properties!.VisibilityTimeout = 2;
      (queue.Properties!.RedrivePolicy as { maxReceiveCount: number }).maxReceiveCount = 1;
      // and Notifications' subscription changed out of band (review v11, V11-6): it takes none of the run's events now,
      // while its Operator output still says OrderPlaced
      const notifications = template.Resources[logicalIdAt(template, 'Orders/Notifications/Subscription/Resource')]!;
      notifications.Properties!.FilterPolicy = NO_SUCH_EVENT;
    });
    onTestFinished(() => variant.remove());
    const served = await serve(variant.directory);
    onTestFinished(() => served.stop());

    // WHEN verify is told the run may go only into another account (--account: the guard against production)
    const guarded = await verify(served, ['--count', '4', '--seed', 'broken', '--account', '999999999999']);

    // THEN it refuses before sending any command, naming the stacks' accounts (the served stacks' ids carry each
    // stack's own account: the example's env), with its own exit code (issue 43, nu43 finding 8)
    expect(guarded.code, `${guarded.stdout}\n${guarded.stderr.slice(-4000)}`).toBe(EXIT_CODE.REFUSED);
    expect(guarded.stderr).toMatch(/are in account\(s\) \d{12}.*, not only in 999999999999 \(--account\): verify sends nothing there/);
    expect(guarded.stderr).not.toMatch(/producing: /);

    // WHEN verify runs the scenario against it, asked to clean up
    const run = await verify(served, ['--count', '4', '--seed', 'broken', '--cleanup']);

    // THEN it fails, naming Shipping's unapplied events of this run
    expect(run.code, `${run.stdout}\n${run.stderr.slice(-4000)}`).toBe(EXIT_CODE.FAILURE);
    expect(run.stdout).toContain('VIOLATED:');
    const unapplied = run.json.violations.filter((violation) => violation.kind === 'unapplied-event' && violation.subscriber === 'Shipping');
    expect(unapplied).toHaveLength(1);
    expect(unapplied[0]!.detail).toMatch(new RegExp(`events order-placed-${run.json.runId}-order-0000\\d`));
    expect(unapplied[0]!.detail).toContain('moved by SQS after maxReceiveCount receives');
    // the other subscribers applied theirs; Notifications is not asked for the events its subscription no longer takes
    // (before V11-6's fix, verify demanded them from its Operator output's filter: a false VIOLATED), and the
    // difference is named with both policies, in the report and in --json
    expect(run.json.violations.every((violation) => violation.subscriber === 'Shipping')).toBe(true);
    expect(run.stdout).toContain("filter policies that differ from the subscribers' Operator outputs");
    expect(run.stdout).toMatch(/Notifications: its subscription \S+ filters with \{"type":\["NoSuchEvent"\]\} \(scope MessageBody\), but its Operator output says \{"type":\["[^"]*OrderPlaced"\]\} \(scope MessageBody\)/);
    expect(run.json.filterDifferences).toEqual([expect.objectContaining({ subscriber: 'Notifications', deployed: { filterPolicy: NO_SUCH_EVENT, filterPolicyScope: 'MessageBody' } })]);
    // and the placed orders the app means Notifications to take, which its narrowed subscription no longer delivers,
    // were not checked: said under NOT PROVEN (review r12b, R12B-1: before, only the difference was named)
    expect(run.stdout).toMatch(/ {2}Notifications: \d+ of the run's events its Operator output's filter takes, its deployed subscription does not \(order-placed-/);
    // and the cleanup kept the dead letters the violation points at (review r12, R12-6: they were deleted)
    expect(run.stdout).toContain('cleanup: kept everything of the run (its dead letters,');
    expect(run.stdout).not.toContain('cleanup removed:');
  });
});
