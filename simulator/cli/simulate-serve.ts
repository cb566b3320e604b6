/**
 * `simulate --serve`: after the verdict, the run's DynamoDB Local and SQS endpoint go on serving what the run left in
 * its tables and queues, so an operator can try the operator commands on a run's dead letters. Prints the endpoints
 * and, per relay and subscriber, the commands with their real flags and the run's local names; waits until it is
 * asked to stop (Ctrl-C, SIGTERM, or the caller's stop signal); then stops the services.
 */
import { formatDurationOption, shellWord } from './arguments';
import { PROGRAM, type CliIo } from './command';
import type { RunServices, ServedRelay, ServedSubscriber } from '../run/run-services';

/** The credentials the printed commands run with: DynamoDB Local and the simulator's SQS endpoint accept any. */
export const SERVED_CREDENTIALS = { AWS_ACCESS_KEY_ID: 'simulator', AWS_SECRET_ACCESS_KEY: 'simulator' } as const;

function command(services: RunServices, words: readonly string[]): string {
  const global = ['--endpoint', services.dynamoDbEndpoint, '--sqs-endpoint', services.sqsEndpoint, '--region', services.region];
  return `  ${[PROGRAM, ...words, ...global].map((word) => (word.startsWith('<') ? word : shellWord(word))).join(' ')}`;
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
    ...(subscriptionDeadLetterQueueUrl === undefined ? [] : [['--subscription-dead-letter-queue', subscriptionDeadLetterQueueUrl] as const]),
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
  for (const outbox of subscriber.outboxTables) {
    const replay = output === undefined ? ['--queue', queueUrl, '--subscriber', name, '--processing-mode', '<mode>', '--deduplication-window', window, '--filter-policy', '<json|none>'] : output;
    lines.push(command(services, ['replay', ...replay, '--table', outbox, '--event-id', '<event-id>']));
  }
  return lines;
}

/** What `simulate --serve` prints once the run's services serve. */
export function servingText(services: RunServices, simulatedAt: number): string {
  const database =
    services.dynamoDbPid === undefined ? `${services.dynamoDbEndpoint} (given with --endpoint: left running after)` : `${services.dynamoDbEndpoint} (started for this run, pid ${services.dynamoDbPid})`;
  const sections = [
    [
      `serving until Ctrl-C (SIGINT) or SIGTERM: the run's tables and queues as it left them. Its clock stood at ` +
        `${new Date(simulatedAt).toISOString()} and now runs with real time (a message move task moves, a message read reappears).`,
      `  DynamoDB Local  ${database}`,
      `  SQS             ${services.sqsEndpoint}`,
      `  region          ${services.region}`,
      '',
      'Local services take any credentials; in another shell:',
      `export ${Object.entries(SERVED_CREDENTIALS).map(([name, value]) => `${name}=${value}`).join(' ')}`,
    ],
    ...services.relays.map((relay) => relayLines(services, relay)),
    ...services.subscribers.map((subscriber) => subscriberLines(services, subscriber)),
  ];
  return `\n${sections.map((lines) => lines.join('\n')).join('\n\n')}\n`;
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

/** Serves the run's services until asked to stop (`io.stopSignal`, else SIGINT/SIGTERM), then stops them. */
export async function serveRun(services: RunServices, io: CliIo): Promise<void> {
  try {
    const simulatedAt = services.now();
    services.runClockWithRealTime();
    io.stdout(servingText(services, simulatedAt));
    await stopRequested(io.stopSignal);
    io.stdout("stopping the run's services\n");
  } finally {
    await services.stop();
  }
  io.stdout(`stopped the run's services${services.dynamoDbPid === undefined ? ' (the DynamoDB Local given with --endpoint still runs)' : ''}\n`);
}
