/**
 * The subscriber an operator command acts on, resolved from what was deployed: its `<subscriber>/Operator` stack output
 * (`--subscriber-output`, the JSON value or `@<file>`), which names its queues, tables, processing mode, deduplication
 * window and filter policy. A flag the operator also typed must agree with it, or the command refuses (a typo in
 * `--queue` would send one subscriber's dead letters to another). Without the output, the flags say it all and
 * `--processing-mode` is required: a command that does not know the mode can not know whether a copy is safe.
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { parseSubscriberDeployment, type SubscriberDeployment } from '../../lambda/contract/subscriber-deployment';
import { formatDurationOption, parseDurationSeconds } from './arguments';
import { redriveTargetAndArn } from './dead-letters/queue-messages';

/** The options of a command that resolves a subscriber (parseArgs format). */
export const DEPLOYED_SUBSCRIBER_OPTIONS = {
  'subscriber-output': { type: 'string' },
  'processing-mode': { type: 'string' },
} as const;

/** The help text of those options. */
export const DEPLOYED_SUBSCRIBER_HELP = `  --subscriber-output <json|@file>   the subscriber's <subscriber>/Operator stack output (its value, or @ and a file
                                     holding it): queues, tables, mode, window and filter policy come from it, and a
                                     flag that disagrees with it is refused
  --processing-mode <mode>           without --subscriber-output: the subscriber's processingMode (transactional, lease,
                                     multi-step or aggregate)`;

/** What a command knows of its subscriber. */
export interface ResolvedSubscriber {
  readonly subscriberName: string;
  readonly processingMode: SubscriberDeployment['processingMode'];
  readonly queueUrl: string;
  readonly inboxTable?: string;
  readonly deduplicationWindowSeconds?: number;
  /** The deployed output, when it was given. */
  readonly deployment?: SubscriberDeployment;
}

const MODES: readonly string[] = ['transactional', 'lease', 'multi-step', 'aggregate'];

/** Reads `--subscriber-output`: the JSON text, or `@file` (relative to `cwd`). Returns the problem as a string. */
export function readSubscriberOutput(value: string, cwd: string): SubscriberDeployment | string {
  let text = value;
  if (value.startsWith('@')) {
    try {
      text = readFileSync(path.resolve(cwd, value.slice(1)), 'utf8');
    } catch (error) {
      return `--subscriber-output: could not read ${value.slice(1)} (${(error as Error).message})`;
    }
  }
  try {
    return parseSubscriberDeployment(text);
  } catch (error) {
    return `--subscriber-output is not a subscriber's Operator stack output: ${(error as Error).message}`;
  }
}

/**
 * The subscriber of `values`: from `--subscriber-output` with the typed flags checked against it, or from the flags
 * (`--subscriber`, `--queue`, `--table`, `--deduplication-window`, `--processing-mode`). Returns a usage problem as a
 * string.
 */
export function resolveSubscriber(values: Readonly<Record<string, unknown>>, cwd: string): ResolvedSubscriber | string {
  const typedWindow = typeof values['deduplication-window'] === 'string' ? parseDurationSeconds(values['deduplication-window'], 'deduplication-window') : undefined;
  if (typeof typedWindow === 'string') return typedWindow;
  if (typeof values['subscriber-output'] === 'string') {
    const deployment = readSubscriberOutput(values['subscriber-output'], cwd);
    if (typeof deployment === 'string') return deployment;
    const checks: Array<[option: string, typed: unknown, deployed: unknown]> = [
      ['subscriber', values.subscriber, deployment.subscriberName],
      ['queue', values.queue, deployment.queueUrl],
      ['table', values.table, deployment.inboxTable],
      ['processing-mode', values['processing-mode'], deployment.processingMode],
      ['deduplication-window', typedWindow, deployment.deduplicationWindowSeconds],
    ];
    for (const [option, typed, deployed] of checks) {
      if (typed === undefined || typed === deployed) continue;
      const shown = (value: unknown) => (option === 'deduplication-window' && typeof value === 'number' ? formatDurationOption(value) : String(value ?? 'none'));
      return `--${option} ${shown(typed)} disagrees with the deployed subscriber '${deployment.subscriberName}' (--subscriber-output says ${shown(deployed)}); leave the flag out`;
    }
    return {
      subscriberName: deployment.subscriberName,
      processingMode: deployment.processingMode,
      queueUrl: deployment.queueUrl,
      ...(deployment.inboxTable === undefined ? {} : { inboxTable: deployment.inboxTable }),
      ...(deployment.deduplicationWindowSeconds === undefined ? {} : { deduplicationWindowSeconds: deployment.deduplicationWindowSeconds }),
      deployment,
    };
  }
  for (const name of ['queue', 'subscriber', 'processing-mode']) {
    if (typeof values[name] !== 'string' || (values[name] as string).trim() === '') return `needs --subscriber-output (the subscriber's Operator stack output), or --${name} and the other flags it replaces`;
  }
  const mode = values['processing-mode'] as string;
  if (!MODES.includes(mode)) return `--processing-mode must be one of ${MODES.join(', ')}, but '${mode}' was given`;
  if (mode !== 'aggregate' && typedWindow === undefined) return `needs --deduplication-window for a subscriber in ${mode} mode (or --subscriber-output)`;
  return {
    subscriberName: values.subscriber as string,
    processingMode: mode as ResolvedSubscriber['processingMode'],
    queueUrl: values.queue as string,
    ...(typeof values.table === 'string' ? { inboxTable: values.table } : {}),
    ...(typedWindow === undefined ? {} : { deduplicationWindowSeconds: typedWindow }),
  };
}

/**
 * Why an aggregate-mode subscriber can not be given a copy safely: it keeps no inbox, only the ids of the last events
 * it applied on each aggregate (`maxProcessedMessages`), so a copy of an event that an earlier copy applied, and whose
 * id has left that list, is applied again; nothing outside the handler can tell. `copy` names the copy.
 */
export function aggregateModeRefusal(subscriberName: string, copy: string): string {
  return (
    `subscriber '${subscriberName}' is in aggregate mode: it keeps no inbox, only the ids of the last events applied to each aggregate, ` +
    `so a ${copy} copy of an event an earlier copy applied, whose id has left that list, would be applied again; ` +
    '--allow-reapply sends it anyway (when you know no copy of it was applied)'
  );
}

/**
 * Why the dead-letter queue `deadLetterQueueUrl` is not the dead-letter queue of the subscriber queue `queueUrl` (its
 * RedrivePolicy's target), or undefined when it is. When the queue's attributes can not be read, `note` says so and the
 * check is left to `--subscriber-output`.
 */
export async function deadLetterSourceMismatch(client: SQSClient, deadLetterQueueUrl: string, queueUrl: string): Promise<{ refusal?: string; note?: string }> {
  let target: string | undefined;
  let deadLetterArn: string;
  try {
    ({ target, deadLetterArn } = await redriveTargetAndArn(client, queueUrl, deadLetterQueueUrl));
  } catch (error) {
    return { note: `could not check that ${deadLetterQueueUrl} is the dead-letter queue of ${queueUrl} (${error instanceof Error ? `${error.name}: ${error.message}` : String(error)})` };
  }
  if (target === deadLetterArn) return {};
  return {
    refusal:
      `${deadLetterQueueUrl} is not the dead-letter queue of --queue ${queueUrl} (its RedrivePolicy ${target === undefined ? 'names none' : `names ${target}`}): ` +
      "the dead letters would go to another subscriber's queue; pass the subscriber's own queue, or --subscriber-output",
  };
}
