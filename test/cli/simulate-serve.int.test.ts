/**
 * `idempotent-event-flow simulate --serve`: after the verdict the run's DynamoDB Local and SQS endpoint keep serving
 * what the run left in its tables and queues, and the commands it prints work against them as pasted; asked to stop,
 * it stops both (no process, no port left).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { connect } from 'node:net';
import * as path from 'node:path';
import { ReceiveMessageCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { describe, expect, onTestFinished, test } from 'vitest';
import { EXIT_CODE, main } from '../../simulator/cli/main';
import { envelopeObject } from '../lambda/helpers';
import { LOCAL_CREDENTIALS } from '../support/dynamodb-client';
import { exampleAssembly } from '../support/example-assembly';
import { runPrinted, waitFor } from './printed-commands';

const PROJECT = path.resolve(__dirname, '../..');
const NO_OTHER_FAULTS = ['--duplicate-rate', '0', '--lost-response-rate', '0', '--throttle-rate', '0', '--crash-rate', '0', '--sns-delivery-failure-rate', '0'] as const;
/**
 * Where the run's clock starts: two days before the real time DynamoDB Local stamps its stream records with (within the
 * subscribers' 30-day deduplication window, so a replay of the run's events is not refused for their age).
 */
const START_TIME = new Date(Math.floor(Date.now() / 1000) * 1000 - 2 * 86_400_000).toISOString();

/** Whether something accepts connections on `url`'s port. */
function listening(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('simulate --serve', () => {
  test('keeps the run\'s DynamoDB Local and SQS endpoint serving after the verdict; the printed dlq list and redrive work against them; an abort stops everything', async () => {
    // GIVEN a run of the example whose relay dead-letters every event, served after its verdict
    const logDirectory = mkdtempSync(path.join(tmpdir(), 'ief-serve-log-'));
    const logFile = path.join(logDirectory, 'functions.log');
    onTestFinished(() => rmSync(logDirectory, { recursive: true, force: true }));
    let stdout = '';
    let stderr = '';
    const stop = new AbortController();
    const running = main(
      ['simulate', '--assembly', await exampleAssembly(), '--scenario', 'example/simulation/scenario.ts', '--count', '3', '--quiet', '--seed', 'serve', ...NO_OTHER_FAULTS, '--relay-failure-rate', '1', '--start-time', START_TIME, '--serve', '--log', logFile],
      { stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text), cwd: PROJECT, stopSignal: stop.signal },
    );
    let finished = false;
    void running.finally(() => (finished = true));
    let served: { dynamoDbEndpoint: string; pid: number; sqsEndpoint: string } | undefined;
    let code: number;
    try {
      await waitFor(() => stdout.includes('serving until') || finished, 'the run to serve');
      expect(stderr).not.toContain('error:');

      // THEN it printed the verdict, then the endpoints and the commands
      // (no subscriber received an event: NOT PROVEN, simulator/check/not-exercised.ts)
      expect(stdout).toMatch(/NOT PROVEN: [\s\S]*serving until/);
      const dynamoDb = /DynamoDB Local +(http:\/\/127\.0\.0\.1:\d+) \(started for this run, pid (\d+)\)/.exec(stdout);
      const sqs = /SQS +(http:\/\/127\.0\.0\.1:\d+)/.exec(stdout);
      expect(dynamoDb).not.toBeNull();
      expect(sqs).not.toBeNull();
      const [dynamoDbEndpoint, pid, sqsEndpoint] = [dynamoDb![1]!, Number(dynamoDb![2]), sqs![1]!];
      served = { dynamoDbEndpoint, pid, sqsEndpoint };
      const exported = /^export (AWS_ACCESS_KEY_ID=\S+) (AWS_SECRET_ACCESS_KEY=\S+)$/m.exec(stdout);
      expect(exported).not.toBeNull();
      const environment = Object.fromEntries(exported!.slice(1).map((pair) => pair.split('=') as [string, string]));
      const relayList = stdout.split('\n').find((line) => line.trim().startsWith('npx idempotent-event-flow dlq list --relay-dead-letter-queue'));
      expect(relayList).toContain(`--sqs-endpoint ${sqsEndpoint}`);

      // WHEN the printed command runs while it serves
      const listed = await runPrinted(`${relayList!} --json`, environment);

      // THEN it lists the relay's 3 dead letters the run left
      expect(listed).toMatchObject({ code: 0, stderr: '' });
      expect(JSON.parse(listed.stdout)).toMatchObject([{ queueKind: 'relay', messages: 3 }]);
      // and the replay range it prints for them (nu11 finding 5) selects the events the run committed: each of Billing's
      // events in the outbox, as a range from the start of time does
      const range = /replay --since (\S+) --until (\S+) \.\.\./.exec((await runPrinted(relayList!, environment)).stdout);
      expect(range).not.toBeNull();
      const billingReplay = stdout.split('\n').find((line) => /idempotent-event-flow replay --subscriber-output '\{.*"subscriberName":"Billing".*\}' .* --event-id <event-id> /.test(line));
      expect(billingReplay).toBeDefined();
      const replayed = async (since: string, until: string): Promise<string[]> => {
        const dryRun = await runPrinted(`${billingReplay!.replace('--event-id <event-id>', `--since ${since} --until ${until}`)} --json`, environment);
        expect(dryRun).toMatchObject({ code: 0, stderr: '' });
        return (JSON.parse(dryRun.stdout) as { events: Array<{ eventId: string }> }).events.map((event) => event.eventId).sort();
      };
      const everything = await replayed('2000-01-01T00:00:00.000Z', '2100-01-01T00:00:00.000Z');
      expect(everything.length).toBeGreaterThan(0);
      expect(await replayed(range![1]!, range![2]!)).toEqual(everything);
      // and a subscriber's commands reach the run's tables in its DynamoDB Local
      const blockedList = stdout.split('\n').find((line) => line.trim().startsWith('npx idempotent-event-flow blocked list --table'));
      expect(blockedList).toContain(`--endpoint ${dynamoDbEndpoint}`);
      expect(await runPrinted(blockedList!, environment)).toMatchObject({ code: 0, stderr: '' });

      // WHEN a dead letter is on Billing's queue's dead-letter queue and the printed redrive runs with --yes (the run's
      // faults are off while it serves: the served flow does what the app does)
      // the redrive takes Billing's Operator output as the served run resolves it: its queues come from there
      const redrive = stdout.split('\n').find((line) => /idempotent-event-flow dlq redrive --subscriber-output '\{.*"subscriberName":"Billing".*\}' --dead-letter-queue /.test(line));
      const deployment = JSON.parse(/--subscriber-output '(\{.*\})'/.exec(redrive!)![1]!) as { queueUrl: string; deadLetterQueueUrl: string; processingMode: string };
      expect(deployment.processingMode).toBe('transactional');
      const [deadLetterQueueUrl, queueUrl] = [/--dead-letter-queue (\S+)/.exec(redrive!)![1]!, deployment.queueUrl];
      expect(deadLetterQueueUrl).toBe(deployment.deadLetterQueueUrl);
      const sqsClient = new SQSClient({ region: 'us-east-1', endpoint: sqsEndpoint, credentials: LOCAL_CREDENTIALS, useQueueUrlAsEndpoint: false });
      try {
        await sqsClient.send(new SendMessageCommand({ QueueUrl: deadLetterQueueUrl, MessageBody: JSON.stringify(envelopeObject({ id: 'evt-served', time: START_TIME })) }));
        const redriven = await runPrinted(`${redrive!} --yes --json`, environment);

        // THEN it is sent to the queue (the redrive moves what it checked, one at a time)
        expect(redriven).toMatchObject({ code: 0, stderr: '' });
        expect(JSON.parse(redriven.stdout)).toMatchObject({ dryRun: false, method: 'send-and-delete' });
        // and Billing's function, still consuming while the run serves, takes it from the queue: the event fails its
        // schema, so the runtime sends it back to the dead-letter queue with the reason, as on AWS (however long a
        // loaded machine takes)
        await waitFor(() => stdout.includes('[served] Billing: event evt-served (receive 1, sent to its queue: a redrive or a replay): dead-lettered'), "Billing's served invocation");
        expect(await sqsClient.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 0 }))).not.toHaveProperty('Messages.0');
        const back = await sqsClient.send(new ReceiveMessageCommand({ QueueUrl: deadLetterQueueUrl, MaxNumberOfMessages: 10, MessageAttributeNames: ['All'] }));
        expect(back.Messages?.map((message) => [message.MessageAttributes?.iefEventId?.StringValue, message.MessageAttributes?.iefErrorName?.StringValue])).toEqual([['evt-served', 'SchemaValidationError']]);
        // the functions' output of the served invocation is in the log file the serve names
        expect(stdout).toContain(`function logs   ${logFile}`);
        await waitFor(() => existsSync(logFile) && readFileSync(logFile, 'utf8').includes('evt-served'), 'the served invocation in the log file');
      } finally {
        sqsClient.destroy();
      }
      expect(finished).toBe(false);
    } finally {
      // WHEN it is asked to stop (also when an assertion above failed: a test leaves no process behind)
      stop.abort();
      code = await running;
    }

    // THEN it returns the verdict's exit code and nothing is left: no DynamoDB Local process, no port listening
    expect(code).toBe(EXIT_CODE.NOT_PROVEN);
    const { dynamoDbEndpoint, pid, sqsEndpoint } = served!;
    expect(stdout).toContain('stopped the run\'s services');
    expect(alive(pid)).toBe(false);
    expect(await listening(dynamoDbEndpoint)).toBe(false);
    expect(await listening(sqsEndpoint)).toBe(false);
  });
});
