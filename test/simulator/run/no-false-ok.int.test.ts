/**
 * No false OK: deliberately broken apps (test/simulator/fixtures/broken-apps, one stack each, synthesized once) make
 * `simulate` fail with the broken invariant named: a dual-write producer, a producer that refuses every command, a
 * consumer whose handler is not exported, one built with another mode's factory, and a wrapper that swallows the
 * runtime's failures. The shared DynamoDB Local.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { EXIT_CODE, main } from '../../../simulator/cli/main';
import { ACKNOWLEDGED_UNCOMMITTED_TEXT } from '../../../simulator/check/acknowledged-uncommitted';
import { LOG_LEVEL_HIDES_OUTCOMES_TEXT } from '../../../simulator/check/hidden-outcomes';
import { LAST_RECEIVE_PROBE_LOST_TEXT } from '../../../simulator/check/last-receive-probes';
import { fixFor } from '../../../simulator/check/violation-cause';
import { LAST_RECEIVE_PROBE_TEXT } from '../../../simulator/report/last-receive-probe-lines';
import { NO_FAULTS } from '../../../simulator/faults/fault-plan';
import { synthesize } from '../../../simulator/model/synthesize';
import { loadScenario, type EffectProbeContext, type SentMessage } from '../../../simulator/run/scenario';
import { runSimulation } from '../../../simulator/run/simulation';
import { formatSummary } from '../../../simulator/report/summary';

const PROJECT = path.resolve(__dirname, '../../..');
const FIXTURE = 'test/simulator/fixtures/broken-apps';
/** Events for the consumer-side apps: the swallowing wrapper's handler fails the odd ones. */
const EVENTS = Array.from({ length: 4 }, (_, index) => ({ type: 'com.example.Audited', data: { index } }));

let directory: string;
let assembly: string;
let eventsFile: string;

beforeAll(async () => {
  directory = mkdtempSync(path.join(tmpdir(), 'ief-broken-apps-'));
  assembly = await synthesize({ app: `npx tsx ${FIXTURE}/app.ts`, cwd: PROJECT, outputDirectory: path.join(directory, 'cdk.out') });
  eventsFile = path.join(directory, 'events.json');
  writeFileSync(eventsFile, JSON.stringify(EVENTS));
});

afterAll(() => {
  if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
});

async function cli(...argv: string[]): Promise<{ code: number; stdout: string }> {
  let stdout = '';
  const code = await main([...argv, '--assembly', assembly, '--quiet', '--endpoint', inject('dynamoDbEndpoint')], {
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stdout += text),
    cwd: PROJECT,
  });
  return { code, stdout };
}

describe('simulate: no false OK', () => {
  test('fails with configuration-error naming Runtime.HandlerNotFound when the consumer\'s handler is not exported (exit code 1)', async () => {
    const { code, stdout } = await cli('simulate', '--stack', 'MissingHandler', '--events', eventsFile, '--no-faults');

    expect(code).toBe(EXIT_CODE.FAILURE);
    expect(stdout).toMatch(/\[configuration-error\] Audit: 4 dead letter\(s\) failed with Runtime\.HandlerNotFound, a configuration or deployment error.*index\.main is undefined or not exported/);
    expect(stdout).toContain('[nothing-acknowledged] Audit: 4 event(s) matched its filter policy and reached its queue, and its consumer acknowledged none of them');
  });

  test('fails with dual-write when the producer writes the business item and its event separately (default rates, 100 commands, exit code 1)', async () => {
    const { code, stdout } = await cli('simulate', '--stack', 'DualWrite', '--scenario', `${FIXTURE}/dual-write-scenario.ts`, '--count', '100');

    expect(code).toBe(EXIT_CODE.FAILURE);
    expect(stdout).toMatch(/\[dual-write\] \d+ event\(s\) of business changes the producer DualWrite\/Flow\/PlaceOrder committed are not in the outbox \(the change committed without its event\): order order-\d+: event order-placed-order-\d+ missing/);
    expect(stdout).toContain('producer: 100/100 succeeded');
  });

  test("fails with dual-write at the producer when it publishes to the flow's topic itself after its commit, though its probe names only the outbox's events (no faults, 6 commands)", async () => {
    const { code, stdout } = await cli('simulate', '--stack', 'OwnPublish', '--scenario', `${FIXTURE}/own-publish-scenario.ts`, '--count', '6', '--no-faults');

    expect(code).toBe(EXIT_CODE.FAILURE);
    expect(stdout).toMatch(
      /\[dual-write\] OwnPublish\/Flow\/PlaceOrder published 6 message\(s\) to the flow's event topic arn:aws:sns:\S+ with its own SNS client \(events order-placed-order-1\.copy, order-placed-order-2\.copy, order-placed-order-3\.copy, order-placed-order-4\.copy, order-placed-order-5\.copy and 1 more\): no outbox committed them/,
    );
    expect(stdout).toContain(`fix: ${fixFor('published-to-event-topic')}`);
  });

  test('fails with configuration-error naming ConfigurationError when the consumer is built with the factory of another mode', async () => {
    const result = await runSimulation({ cwd: PROJECT, assemblyDirectory: assembly, stacks: ['WrongFactory'], events: EVENTS, rates: NO_FAULTS, dynamoDbEndpoint: inject('dynamoDbEndpoint') });

    expect(result.violations).toContainEqual({
      kind: 'configuration-error',
      subscriber: 'Audit',
      detail: expect.stringMatching(/^4 dead letter\(s\) failed with ConfigurationError, a configuration or deployment error.*initialization \(cold start\) threw ConfigurationError: subscriber 'Audit' was deployed with processingMode 'transactional'/),
    });
  });

  test('fails with acknowledged-failure when a wrapper answers no batch item failures though the runtime logged failures', async () => {
    const result = await runSimulation({ cwd: PROJECT, assemblyDirectory: assembly, stacks: ['SwallowedFailures'], events: EVENTS, rates: NO_FAULTS, dynamoDbEndpoint: inject('dynamoDbEndpoint') });

    expect(result.violations).toEqual([
      {
        kind: 'acknowledged-failure',
        subscriber: 'Audit',
        detail: expect.stringMatching(/^2 record\(s\) the runtime logged as failed were acknowledged by the batch response .*logged failed \(Error: the downstream service is unavailable\)/),
      },
      // the same two records, read from the commits alone: acknowledged, their inbox record never committed
      { kind: 'lost', subscriber: 'Audit', detail: expect.stringContaining(`2 event(s) ${ACKNOWLEDGED_UNCOMMITTED_TEXT}`) },
    ]);
  });

  test('fails with repeated-send when a handler sends an SQS message with its own client and a redelivery repeats it; probes see the messages', async () => {
    // GIVEN a probe that keeps the messages the app sent to queues it does not consume
    let sentMessages: readonly SentMessage[] = [];
    const scenario = { effects: { Audit: async (context: EffectProbeContext) => ((sentMessages = context.sentMessages), []) } };

    const result = await runSimulation({ cwd: PROJECT, assemblyDirectory: assembly, stacks: ['RepeatedSend'], events: EVENTS, scenario, rates: NO_FAULTS, dynamoDbEndpoint: inject('dynamoDbEndpoint') });

    // THEN every event's message was sent twice, by two invocations, to the queue outside the app
    expect(result.sqsSends).toEqual([{ functionName: expect.stringContaining('RepeatedSend/Flow/Audit'), queueName: 'partner-audit', sends: 8, events: 4, repeatedEvents: 4, extraMessages: 4, repeats: expect.any(Array) }]);
    expect(result.violations).toEqual([
      { kind: 'repeated-send', detail: expect.stringMatching(/sent 8 SQS message\(s\) to partner-audit for 4 event\(s\); the queue got 4 extra message\(s\), .*; 4 event\(s\) got messages from more than one invocation/) },
    ]);
    expect(sentMessages).toHaveLength(8);
    expect(sentMessages[0]).toMatchObject({ queueName: 'partner-audit', sentBy: expect.stringContaining('Audit'), eventId: expect.any(String) });
    expect(JSON.parse(sentMessages[0]!.body)).toEqual({ audited: sentMessages[0]!.eventId });
  });

  test('fails with unapplied-event naming the events, the subscriber and the error when a handler throws on every event of one type (SQS moved them)', async () => {
    // GIVEN six events, two of the type the handler throws a TypeError on
    const events = ['Audited', 'Refunded', 'Audited', 'Refunded', 'Audited', 'Audited'].map((type, index) => ({ type: `com.example.${type}`, id: `event-${index}`, data: { index } }));

    const result = await runSimulation({ cwd: PROJECT, assemblyDirectory: assembly, stacks: ['ThrowingHandler'], events, rates: NO_FAULTS, dynamoDbEndpoint: inject('dynamoDbEndpoint') });

    // THEN the run fails: the two refunds were explained dead letters, never applied
    expect(result.deadLetters.get('Audit')).toHaveLength(2);
    expect(result.violations).toEqual([
      {
        kind: 'unapplied-event',
        subscriber: 'Audit',
        detail: expect.stringMatching(
          /^2 event\(s\) its filter policy took were never acknowledged by it, their messages left in its dead-letter queue \(events event-1, event-3\).*sent away by: moved by SQS after maxReceiveCount receives; last failure: .*TypeError: Cannot read properties of undefined \(reading 'refund'\)/,
        ),
      },
    ]);
  });

  test.each(['1', '2', '3'])('fails with unapplied-event when the consumer queue\'s maxReceiveCount is 1, under the default faults (seed %s)', async (seed) => {
    const events = Array.from({ length: 30 }, (_, index) => ({ type: 'com.example.Audited', id: `event-${index}`, data: { index } }));

    const result = await runSimulation({ cwd: PROJECT, assemblyDirectory: assembly, stacks: ['OneReceive'], events, seed, dynamoDbEndpoint: inject('dynamoDbEndpoint') });

    expect(result.violations).toContainEqual({ kind: 'unapplied-event', subscriber: 'Audit', detail: expect.stringMatching(/never acknowledged by it.*sent away by: moved by SQS after maxReceiveCount receives; last failure: /) });
    // the dead letters the injected faults alone made name the setting as their cause (the consumer has no bug)
    const index = result.violations.findIndex((violation) => violation.kind === 'unapplied-event' && violation.detail.includes('is below 5'));
    expect(result.causes.find((caused) => caused.violation === index)?.causes).toContainEqual(
      expect.objectContaining({ kind: 'few-receives', subscriber: 'Audit', setting: { name: 'maxReceiveCount', value: 1, least: 5 }, fix: fixFor('few-receives') }),
    );
  });

  test("maxReceiveCount 1: the text report prints the few-receives cause under the violation, and --json carries it on the violation as fields", async () => {
    const events = Array.from({ length: 30 }, (_, index) => ({ type: 'com.example.Audited', id: `event-${index}`, data: { index } }));
    const eventsPath = path.join(directory, 'one-receive-events.json');
    const file = path.join(directory, 'one-receive.json');
    writeFileSync(eventsPath, JSON.stringify(events));

    const { code, stdout } = await cli('simulate', '--stack', 'OneReceive', '--events', eventsPath, '--seed', '1', '--json', file);

    // THEN exit 1 (AWS would lose the events too), the violation's line says why, and its cause line names the setting and the fix once
    expect(code).toBe(EXIT_CODE.FAILURE);
    expect(stdout).toMatch(/\[unapplied-event\] Audit: .*maxReceiveCount 1 is below 5, the least AWS recommends for a queue Lambda reads \(https:\/\/docs\.aws\.amazon\.com\/lambda\/latest\/operatorguide\/sqs-retries\.html\): every receive of (these events|\d+ of them \([^)]*\)) failed at a fault the run injected, as transient failures can in AWS\n/);
    expect(stdout).toMatch(new RegExp(`cause: few-receives \\(event\\(s\\) [^;]+; maxReceiveCount 1, at least 5 recommended\\); fix: ${fixFor('few-receives').replace(/[()]/g, '\\$&')}\n`));
    const written = JSON.parse(readFileSync(file, 'utf8')) as { violations: { kind: string; causes?: unknown[] }[] };
    expect(written.violations.flatMap((violation) => violation.causes ?? [])).toContainEqual({
      kind: 'few-receives',
      subscriber: 'Audit',
      eventIds: expect.arrayContaining([expect.stringMatching(/^event-\d+$/)]),
      invocations: [],
      requests: [],
      setting: { name: 'maxReceiveCount', value: 1, least: 5 },
      fix: fixFor('few-receives'),
    });
  });

  test.each(['1', '2', '3'])('fails with acknowledged-failure at seed %s when a wrapper swallows the failures only faults cause; --json has each subscriber\'s failure paths', async (seed) => {
    // GIVEN a handler that never throws, wrapped in one that answers no batch item failures, and the default fault rates
    const events = Array.from({ length: 8 }, (_, index) => ({ type: 'com.example.Audited', id: `event-${index}`, data: { index } }));
    const file = path.join(directory, `swallowing-${seed}.json`);
    writeFileSync(path.join(directory, `events-${seed}.json`), JSON.stringify(events));

    const { code } = await cli('simulate', '--stack', 'SwallowingWrapper', '--events', path.join(directory, `events-${seed}.json`), '--seed', seed, '--json', file);

    // THEN the faults steered to the subscriber failed a record, and the run caught the wrapper acknowledging it
    const written = JSON.parse(readFileSync(file, 'utf8')) as { violations: { kind: string }[]; subscribers: { name: string; failurePaths: Record<string, number> }[] };
    expect(code).toBe(EXIT_CODE.FAILURE);
    expect(written.violations.map((violation) => violation.kind)).toContain('acknowledged-failure');
    expect(written.subscribers[0]!.failurePaths).toMatchObject({ conflict: expect.any(Number), 'handler-error': expect.any(Number), 'crash-before-commit': expect.any(Number) });
    expect(written.subscribers[0]!.failurePaths['handler-error']).toBeGreaterThan(0);
  });

  test.each(['1', '2'])('fails with lost naming the swallowing wrapper at seed %s when applicationLogLevel ERROR hides the runtime\'s outcome lines', async (seed) => {
    // GIVEN the swallowing wrapper at applicationLogLevel ERROR: the runtime's WARN `failed` lines are never written
    const events = Array.from({ length: 8 }, (_, index) => ({ type: 'com.example.Audited', id: `event-${index}`, data: { index } }));
    const file = path.join(directory, `quiet-swallowing-${seed}.json`);
    writeFileSync(path.join(directory, `quiet-events-${seed}.json`), JSON.stringify(events));

    const { code, stdout } = await cli('simulate', '--stack', 'QuietSwallowingWrapper', '--events', path.join(directory, `quiet-events-${seed}.json`), '--seed', seed, '--json', file);

    // THEN the events it acknowledged without their inbox commit are lost, named with the cause, in text and --json
    const written = JSON.parse(readFileSync(file, 'utf8')) as {
      verdict: string;
      violations: { kind: string; detail: string; causes?: { kind: string; subscriber?: string; eventIds: string[] }[] }[];
      subscribers: { name: string; failurePaths: Record<string, number> }[];
    };
    expect(code).toBe(EXIT_CODE.FAILURE);
    expect(written.verdict).toBe('VIOLATED');
    // (the last-receive probe's event, when it is the only one, is named by the probe's own lost violation, same cause)
    const lost = written.violations.find((violation) => violation.kind === 'lost' && (violation.detail.includes(ACKNOWLEDGED_UNCOMMITTED_TEXT) || violation.detail.includes(LAST_RECEIVE_PROBE_LOST_TEXT)));
    expect(lost?.causes).toEqual([expect.objectContaining({ kind: 'acknowledged-uncommitted', subscriber: 'Audit', eventIds: expect.arrayContaining([expect.stringMatching(/^event-/)]) })]);
    expect(stdout).toContain(`[lost] Audit: `);
    expect(stdout).toContain(LOG_LEVEL_HIDES_OUTCOMES_TEXT);
    expect(written.subscribers[0]!.failurePaths['handler-error']).toBe(0);
  });

  test.each(['1', '2'])('fails with lost naming the event at seed %s when a wrapper gives up quietly at a message\'s last receive (the last-receive probe)', async (seed) => {
    // GIVEN a consumer that drops a record from batchItemFailures at its 5th (last) receive, and the default fault rates
    const events = Array.from({ length: 8 }, (_, index) => ({ type: 'com.example.Audited', id: `event-${index}`, data: { index } }));
    const file = path.join(directory, `last-give-up-${seed}.json`);
    writeFileSync(path.join(directory, `last-give-up-events-${seed}.json`), JSON.stringify(events));

    const { code, stdout } = await cli('simulate', '--stack', 'LastGiveUp', '--events', path.join(directory, `last-give-up-events-${seed}.json`), '--seed', seed, '--json', file);

    // THEN the probe's event, failed at every receive, was acknowledged at its last without its inbox commit: lost, named
    const written = JSON.parse(readFileSync(file, 'utf8')) as {
      verdict: string;
      violations: { kind: string; detail: string; causes?: { kind: string; eventIds: string[]; fix: string }[] }[];
      lastReceiveProbes: { subscriber: string; eventId: string; redriven: number }[];
    };
    expect(code).toBe(EXIT_CODE.FAILURE);
    expect(written.verdict).toBe('VIOLATED');
    const [probe] = written.lastReceiveProbes;
    expect(probe).toMatchObject({ subscriber: 'Audit', eventId: expect.stringMatching(/^event-/), state: 'acknowledged', lastReceive: 5, redriven: 0 });
    const lost = written.violations.find((violation) => violation.kind === 'lost' && violation.detail.includes(LAST_RECEIVE_PROBE_LOST_TEXT));
    expect(lost?.causes).toEqual([expect.objectContaining({ kind: 'acknowledged-uncommitted', eventIds: [probe!.eventId], fix: expect.stringContaining('the last included') })]);
    expect(stdout).toContain(`${LAST_RECEIVE_PROBE_TEXT}:\n  Audit: event ${probe!.eventId} was NOT dead-lettered`);
  });

  test.each(['1', '2'])('a correct consumer passes the last-receive probe at seed %s: its event dead-lettered, redriven, applied once (dead-letter met)', async (seed) => {
    const events = Array.from({ length: 8 }, (_, index) => ({ type: 'com.example.Audited', id: `event-${index}`, data: { index } }));
    const file = path.join(directory, `last-receive-control-${seed}.json`);
    writeFileSync(path.join(directory, `last-receive-control-events-${seed}.json`), JSON.stringify(events));

    const { code, stdout } = await cli('simulate', '--stack', 'Audit', '--events', path.join(directory, `last-receive-control-events-${seed}.json`), '--seed', seed, '--json', file);

    const written = JSON.parse(readFileSync(file, 'utf8')) as {
      verdict: string;
      violations: unknown[];
      lastReceiveProbes: { subscriber: string; eventId: string; redriven: number }[];
      subscribers: { name: string; failurePaths: Record<string, number>; deadLettered: number }[];
    };
    expect({ code, verdict: written.verdict, violations: written.violations }).toEqual({ code: EXIT_CODE.OK, verdict: 'OK', violations: [] });
    const [probe] = written.lastReceiveProbes;
    // (an SNS duplicate copy of the event is failed and redriven with it: one copy applies it, the other is a duplicate)
    expect(probe).toMatchObject({ subscriber: 'Audit', eventId: expect.stringMatching(/^event-/) });
    expect(probe!.redriven).toBeGreaterThan(0);
    expect(written.subscribers[0]).toMatchObject({ deadLettered: 0, failurePaths: expect.objectContaining({ 'dead-letter': expect.any(Number) }) });
    expect(written.subscribers[0]!.failurePaths['dead-letter']).toBeGreaterThan(0);
    expect(stdout).toContain(`Audit: event ${probe!.eventId} dead-lettered and redriven (dead-letter path met)`);
  });

  test('fails with lost naming the probe\'s event when a LEASE consumer at applicationLogLevel ERROR gives up quietly at its last receive (no log line tells it)', async () => {
    // GIVEN the give-up wrapper around a lease consumer, its outcome lines hidden, an operator for its blocked steps
    const events = Array.from({ length: 12 }, (_, index) => ({ type: 'com.example.Audited', id: `event-${index}`, data: { index } }));
    const file = path.join(directory, 'quiet-lease-give-up.json');
    writeFileSync(path.join(directory, 'quiet-lease-give-up-events.json'), JSON.stringify(events));

    const { code, stdout } = await cli('simulate', '--stack', 'QuietLeaseGiveUp', '--events', path.join(directory, 'quiet-lease-give-up-events.json'), '--seed', '3',
      '--scenario', `${FIXTURE}/lease-operator-scenario.ts`, '--start-time', '2026-11-29T00:00:00Z', '--json', file);

    // THEN the probe's event, its claim refused at every receive, acknowledged at its last: lost, named with its receive and the fix
    const written = JSON.parse(readFileSync(file, 'utf8')) as {
      verdict: string;
      violations: { kind: string; subscriber?: string; detail: string; causes?: { kind: string; eventIds: string[]; fix: string }[] }[];
      lastReceiveProbes: { subscriber: string; eventId: string; state: string; lastReceive: number }[];
    };
    expect(code).toBe(EXIT_CODE.FAILURE);
    expect(written.verdict).toBe('VIOLATED');
    const [probe] = written.lastReceiveProbes;
    expect(probe).toMatchObject({ subscriber: 'Audit', eventId: expect.stringMatching(/^event-/), state: 'acknowledged', lastReceive: 5 });
    const lost = written.violations.find((violation) => violation.kind === 'lost' && violation.detail.includes(LAST_RECEIVE_PROBE_LOST_TEXT));
    expect(lost).toMatchObject({ subscriber: 'Audit', detail: expect.stringContaining(`event ${probe!.eventId} `) });
    expect(lost!.detail).toContain('receive 5');
    expect(lost?.causes).toEqual([expect.objectContaining({ kind: 'acknowledged-uncommitted', eventIds: [probe!.eventId], fix: fixFor('acknowledged-uncommitted') })]);
    expect(stdout).toContain(`${LAST_RECEIVE_PROBE_TEXT}:\n  Audit: event ${probe!.eventId} was NOT dead-lettered`);
    expect(stdout).not.toMatch(/^OK: /m);
  });

  test.each([
    ['Backdated', []],
    ['Backdated4', ['--start-time', '2026-11-29T00:00:00Z']],
  ])('a correct app whose events carry an old time (%s) is OK: the probe chooses no event dlq redrive\'s window rule would refuse', async (stack, extra) => {
    const file = path.join(directory, `${stack}.json`);

    const { code, stdout } = await cli('simulate', '--stack', stack, '--scenario', `${FIXTURE}/backdated-scenario.ts`, '--count', '8', '--seed', '1', ...extra, '--json', file);

    const written = JSON.parse(readFileSync(file, 'utf8')) as { verdict: string; violations: unknown[]; lastReceiveProbes: { subscriber: string; state: string }[] };
    expect({ code, verdict: written.verdict, violations: written.violations }).toEqual({ code: EXIT_CODE.OK, verdict: 'OK', violations: [] });
    expect(written.lastReceiveProbes).toEqual([expect.objectContaining({ subscriber: 'Audit', state: 'not-chosen' })]);
    expect(stdout).not.toContain('left in the dead-letter queue');
  });

  test('a run cut off before the probe\'s redrive blames no consumer: its event is told not redriven, no lost', async () => {
    const events = Array.from({ length: 12 }, (_, index) => ({ type: 'com.example.Audited', id: `event-${index}`, data: { index } }));

    const result = await runSimulation({ cwd: PROJECT, assemblyDirectory: assembly, stacks: ['Audit'], events, seed: '1', startTime: Date.parse('2026-11-29T00:00:00Z'), maxRounds: 6, dynamoDbEndpoint: inject('dynamoDbEndpoint') });

    expect(result.violations.map((violation) => violation.kind)).toContain('not-settled');
    expect(result.violations.map((violation) => violation.kind)).not.toContain('lost');
    expect(result.lastReceiveProbes).toEqual([expect.objectContaining({ subscriber: 'Audit', eventId: expect.stringMatching(/^event-/), state: 'cut-off' })]);
    const text = formatSummary(result);
    expect(text).toContain('not redriven: the run was cut off before it settled');
    expect(text).not.toContain('was NOT dead-lettered');
  });

  test.each(['1', '2'])('a correct consumer at applicationLogLevel ERROR meets handler-error and is OK at seed %s (its failures read from its batch responses)', async (seed) => {
    const events = Array.from({ length: 8 }, (_, index) => ({ type: 'com.example.Audited', id: `event-${index}`, data: { index } }));
    const file = path.join(directory, `quiet-audit-${seed}.json`);
    writeFileSync(path.join(directory, `quiet-audit-events-${seed}.json`), JSON.stringify(events));

    const { code, stdout } = await cli('simulate', '--stack', 'QuietAudit', '--events', path.join(directory, `quiet-audit-events-${seed}.json`), '--seed', seed, '--json', file);

    const written = JSON.parse(readFileSync(file, 'utf8')) as { verdict: string; violations: unknown[]; subscribers: { name: string; failurePaths: Record<string, number> }[] };
    expect({ code, verdict: written.verdict, violations: written.violations }).toEqual({ code: EXIT_CODE.OK, verdict: 'OK', violations: [] });
    expect(written.subscribers[0]!.failurePaths['handler-error']).toBeGreaterThan(0);
    expect(stdout).toContain(LOG_LEVEL_HIDES_OUTCOMES_TEXT);
    expect(stdout).not.toContain('never met handler-error');
  });

  test("fails with producer-failed when an API's producer answers every command with a response its scenario says fails one (a 409)", async () => {
    const scenario = await loadScenario(`${FIXTURE}/conflict-producer-scenario.ts`, PROJECT);
    const result = await runSimulation({ cwd: PROJECT, assemblyDirectory: assembly, stacks: ['ConflictProducer'], scenario, count: 2, rates: NO_FAULTS, dynamoDbEndpoint: inject('dynamoDbEndpoint') });

    expect(result.producer).toMatchObject({ total: 2, succeeded: 0 });
    expect(result.violations).toEqual([
      { kind: 'producer-failed', detail: expect.stringMatching(/^2 of 2 producer command\(s\) failed all 3 attempt\(s\) \(#1, #2\): the invocation returned a failed response: \{"statusCode":409,/) },
    ]);
  });

  test('fails with producer-failed naming the commands when the producer refuses every command', async () => {
    const scenario = await loadScenario(`${FIXTURE}/failing-producer-scenario.ts`, PROJECT);
    const result = await runSimulation({ cwd: PROJECT, assemblyDirectory: assembly, stacks: ['FailingProducer'], scenario, count: 3, rates: NO_FAULTS, dynamoDbEndpoint: inject('dynamoDbEndpoint') });

    expect(result.violations).toEqual([
      { kind: 'producer-failed', detail: '3 of 3 producer command(s) failed all 3 attempt(s) (#1, #2, #3): ' + `the invocation threw Error: the order service is down; order order-${result.producer.failed[0]!.index + 1} was not placed` },
    ]);
  });
});
