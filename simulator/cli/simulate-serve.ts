/**
 * `simulate --serve`: after the verdict, the run's DynamoDB Local and SQS endpoint go on serving what the run left in
 * its tables and queues, and its functions go on consuming (without the run's faults), so an operator can do the whole
 * drill on a run's dead letters: fix the handler (a handler changed on disk is bundled again and used by the next
 * invocation), redrive or replay, and see the event applied. Prints the endpoints, where the functions' logs are and,
 * per relay and subscriber, the commands with their real flags and the run's local names; then one line per message
 * each served invocation took; waits until it is asked to stop (Ctrl-C, SIGTERM, or the caller's stop signal); then
 * stops the services.
 */
import { formatDurationOption, shellWord } from '../../operator/cli/arguments';
import { INVOCATION, type CliIo } from '../../operator/cli/command';
import type { RunServices, ServedRelay, ServedSubscriber } from '../run/run-services';
import type { ServeActivity, ServedMessage } from '../run/serve-consumer';
import { terminalText } from '../../operator/cli/terminal-text';
import { mkdirSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import { replacePrivateFile } from '../run/private-file';
import { whenParentGone } from './parent-watch';

/** The credentials the printed commands run with: DynamoDB Local and the simulator's SQS endpoint accept any. */
export const SERVED_CREDENTIALS = { AWS_ACCESS_KEY_ID: 'simulator', AWS_SECRET_ACCESS_KEY: 'simulator' } as const;

function command(services: RunServices, words: readonly string[]): string {
  const global = ['--endpoint', services.dynamoDbEndpoint, '--sqs-endpoint', services.sqsEndpoint, '--region', services.region];
  return `  ${[...INVOCATION, ...words, ...global].map((word) => (word.startsWith('<') ? word : shellWord(word))).join(' ')}`;
}

function relayLines(services: RunServices, relay: ServedRelay): string[] {
  const lines = [`relay ${relay.name} (outbox table ${relay.outboxTable}):`];
  if (relay.deadLetterQueueUrl === undefined) lines.push('  (its pipe has no dead-letter queue)');
  else lines.push(command(services, ['dlq', 'list', '--relay-dead-letter-queue', relay.deadLetterQueueUrl]));
  return lines;
}

function subscriberLines(services: RunServices, subscriber: ServedSubscriber): string[] {
  const { name, queueUrl, deadLetterQueueUrls, subscriptionDeadLetterQueueUrl, inboxTable, deduplicationWindowSeconds } = subscriber;
  const window = deduplicationWindowSeconds === undefined ? '<duration>' : formatDurationOption(deduplicationWindowSeconds);
  const about = [inboxTable === undefined ? 'no inbox table' : `inbox table ${inboxTable}`, deduplicationWindowSeconds === undefined ? undefined : `deduplication window ${window}`];
  const lines = [`subscriber ${name} (${about.filter((part) => part !== undefined).join(', ')}):`];
  const queues = [
    ...deadLetterQueueUrls.map((url) => ['--dead-letter-queue', url] as const),
    // an ordered subscriber's subscription dead-letter queue is its FIFO dead-letter queue: named once
    ...(subscriptionDeadLetterQueueUrl === undefined || deadLetterQueueUrls.includes(subscriptionDeadLetterQueueUrl)
      ? []
      : [['--subscription-dead-letter-queue', subscriptionDeadLetterQueueUrl] as const]),
  ];
  const table = inboxTable === undefined ? [] : ['--table', inboxTable];
  // what its <subscriber>/Operator stack output would say here: the commands that act on it take it
  const output = subscriber.deployment === undefined ? undefined : ['--subscriber-output', JSON.stringify(subscriber.deployment)];
  if (queues.length > 0) {
    lines.push(command(services, ['dlq', 'list', ...queues.flat()]));
    lines.push(command(services, ['dlq', 'show', '<event-id>', ...queues.flat(), ...table, '--subscriber', name]));
    for (const queue of queues) {
      lines.push(
        command(services, output === undefined ? ['dlq', 'redrive', ...queue, '--queue', queueUrl, '--subscriber', name, ...table, '--processing-mode', '<mode>', '--deduplication-window', window] : ['dlq', 'redrive', ...output, ...queue]),
      );
    }
  }
  if (inboxTable !== undefined) {
    lines.push(command(services, ['blocked', 'list', '--table', inboxTable, '--subscriber', name]));
    lines.push(command(services, ['inbox', 'forget', name, '<event-id>', '--table', inboxTable, '--reason', '<why>']));
  }
  // an ordered subscriber: every aggregate it is held up in, from its dead-letter queue and the ordered outbox's heads
  if (subscriber.deployment?.ordered === true && inboxTable !== undefined) {
    const outbox = subscriber.deployment.outboxTable === undefined ? [] : ['--outbox-table', subscriber.deployment.outboxTable];
    lines.push(command(services, ['fence', 'list', name, '--table', inboxTable, '--dead-letter-queue', subscriber.deployment.deadLetterQueueUrl, ...outbox]));
  }
  for (const outbox of subscriber.outboxTables) {
    const replay = output === undefined ? ['--queue', queueUrl, '--subscriber', name, '--processing-mode', '<mode>', '--deduplication-window', window, '--filter-policy', '<json|none>'] : output;
    lines.push(command(services, ['replay', ...replay, '--table', outbox, '--event-id', '<event-id>']));
  }
  return lines;
}

/** What `simulate --serve` prints once the run's services serve; `awsEndpoint` is the one endpoint of every AWS call, when started. */
export function servingText(services: RunServices, simulatedAt: number, awsEndpoint?: string, endpointFile?: string): string {
  const database =
    services.dynamoDbPid === undefined ? `${services.dynamoDbEndpoint} (given with --endpoint: left running after)` : `${services.dynamoDbEndpoint} (started for this run, pid ${services.dynamoDbPid})`;
  const sections = [
    [
      `serving until Ctrl-C (SIGINT) or SIGTERM: the run's tables and queues as it left them. Its clock stood at ` +
        `${new Date(simulatedAt).toISOString()} and now runs with real time (a message move task moves, a message read reappears).`,
      `  DynamoDB Local  ${database}`,
      `  SQS             ${services.sqsEndpoint}`,
      ...(awsEndpoint === undefined ? [] : [`  AWS (all)       ${awsEndpoint} (CloudFormation stack reads, Lambda Invoke, DynamoDB, SQS, SNS, S3 when the app has a bucket: what verify and the SDK reach)`]),
      `  region          ${services.region}`,
      ...((services.stacks ?? []).length === 0
        ? []
        : [
            `  stacks          ${services.stacks!.map((stack) => `${stack.stackName} ${stack.account}/${stack.region}`).join(', ')} (account/Region, as their stack ids say: verify ${[...new Set(services.stacks!.map((stack) => stack.account))].map((account) => `--account ${account}`).join(' ')})`,
          ]),
      `  function logs   ${services.logFile ?? 'not written (give --log <file>)'}`,
      ...(endpointFile === undefined ? [] : [`  endpoint file   ${endpointFile} (the export lines below, while it serves: \`. ${endpointFile}\` in a CI step or another shell)`]),
      '',
      services.watchesApp
        ? "Its functions go on consuming, without the run's faults: a redriven or replayed event is applied as on AWS. A handler changed on disk is bundled again (the app is synthesized again) and runs from the next invocation."
        : "Its functions go on consuming, without the run's faults: a redriven or replayed event is applied as on AWS. A changed handler is not bundled again: the run knows no app command (give --app, or run it in the project with its cdk.json).",
      '',
      'Local services take any credentials; in another shell:',
      ...exportLines(services, awsEndpoint),
    ],
    ...services.relays.map((relay) => relayLines(services, relay)),
    ...services.subscribers.map((subscriber) => subscriberLines(services, subscriber)),
  ];
  return `\n${sections.map((lines) => lines.join('\n')).join('\n\n')}\n`;
}

/** The lines a shell sources to reach the served run: the local credentials and, when started, the one AWS endpoint. */
export function exportLines(services: RunServices, awsEndpoint?: string): string[] {
  return [
    `export ${Object.entries(SERVED_CREDENTIALS).map(([name, value]) => `${name}=${value}`).join(' ')}`,
    ...(awsEndpoint === undefined
      ? []
      : [
          '# the SDK\'s global endpoint setting: every client of the AWS SDK (and idempotent-event-flow verify) reaches the served run as it would an account',
          `export AWS_ENDPOINT_URL=${awsEndpoint} AWS_REGION=${services.region}`,
        ]),
  ];
}

const VIA: Readonly<Record<string, string>> = {
  sns: 'from its topic',
  'send-message': 'sent to its queue: a redrive or a replay',
  redrive: 'moved by SQS',
  'moved-back': 'moved back from a dead-letter queue',
};

function messageText(message: ServedMessage): string {
  const via = VIA[message.via] ?? message.via;
  return `event ${message.eventId === undefined ? '(not an envelope)' : terminalText(message.eventId)} (receive ${message.receiveCount}, ${terminalText(via)}): ${terminalText(message.outcome)}`;
}

/** What `simulate --serve` prints of what the served flow did. */
export function activityText(activity: ServeActivity): string {
  switch (activity.kind) {
    case 'invocation': {
      const failure = activity.failure === undefined ? '' : ` (the invocation failed: ${terminalText(activity.failure)})`;
      return activity.messages.map((message) => `[served] ${terminalText(activity.subscriber)}: ${messageText(message)}${failure}\n`).join('');
    }
    case 'synthesizing':
      return '[served] the app changed: synthesizing it again (the queues wait) ...\n';
    case 'code-replaced':
      return activity.functions.length === 0
        ? "[served] no function's code changed (a changed resource, policy or variable is not applied to a served run: a new run tests it)\n"
        : `[served] new code from the next invocation: ${activity.functions.join(', ')} (a changed resource, policy or variable is not applied to a served run)\n`;
    case 'synthesis-failed':
      return `[served] the app did not synthesize; the functions keep their code: ${terminalText(activity.error)}\n`;
  }
}

/** Resolves when `signal` aborts, or without one at the process's SIGINT or SIGTERM. */
function stopRequested(signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal !== undefined) {
      if (signal.aborted) resolve();
      else signal.addEventListener('abort', () => resolve(), { once: true });
      return;
    }
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

/**
 * Removes an endpoint file a serve left (killed before its stop: SIGKILL, out of memory), when a new serve starts,
 * before its run: a CI step waiting for the file would otherwise source the dead serve's endpoint at once (review r13,
 * R13-6). None there is no error.
 */
export function removeStaleEndpointFile(endpointFile: string): void {
  rmSync(endpointFile, { force: true });
}

/**
 * Serves the run's services until asked to stop (`io.stopSignal`, else SIGINT/SIGTERM) or, when npm (npx) started it,
 * until that npm process ends (./parent-watch.ts), then stops them. With `endpointFile`, the lines to export (./simulate-serve.ts exportLines) are in
 * that file while it serves (0600: they hold the local credentials), for a CI step that starts the serve in the
 * background; it is removed at the stop.
 */
export async function serveRun(services: RunServices, io: CliIo, endpointFile?: string): Promise<void> {
  let wroteEndpointFile = false;
  try {
    const simulatedAt = services.now();
    services.runClockWithRealTime();
    const awsEndpoint = await services.startAwsEndpoint();
    if (endpointFile !== undefined) {
      try {
        mkdirSync(path.dirname(endpointFile), { recursive: true });
        // whole or not at all: a CI step polling for the file never sources an empty one (review r13, R13-6)
        replacePrivateFile(endpointFile, `${exportLines(services, awsEndpoint).join('\n')}\n`);
        wroteEndpointFile = true;
      } catch (error) {
        // the banner still has the lines
        io.stderr(`warning: the endpoint file ${endpointFile} could not be written (${error instanceof Error ? error.message : String(error)})\n`);
      }
    }
    io.stdout(servingText(services, simulatedAt, awsEndpoint, wroteEndpointFile ? endpointFile : undefined));
    services.startConsuming((activity) => io.stdout(activityText(activity)));
    // or when the npm process (npx) that started it ends: npm does not pass every signal on (trial nu12, item 5); a serve
    // started without npm (nohup ... &) is not watched, it serves until stopped (review r13, R13-1)
    const watching = new AbortController();
    const parentGone = whenParentGone({ signal: watching.signal }).then(() => io.stdout('the npm process (npx) that started this one ended (npm does not pass every signal on): stopping as at SIGTERM\n'));
    await Promise.race([stopRequested(io.stopSignal), parentGone]);
    watching.abort();
    io.stdout("stopping the run's services\n");
  } finally {
    if (wroteEndpointFile) rmSync(endpointFile!, { force: true });
    await services.stop();
  }
  io.stdout(`stopped the run's services${services.dynamoDbPid === undefined ? ' (the DynamoDB Local given with --endpoint still runs)' : ''}\n`);
}
