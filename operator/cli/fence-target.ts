/**
 * What a `fence` command acts on: the subscriber, its inbox table, and for `replay` and `skip` its outbox table and
 * queue, typed or taken from the subscriber's Operator stack output (`--subscriber-output`), which must be an ordered
 * subscriber's and agree with what was typed. The output is what proves an outbox table is the subscriber's
 * (`fence-outbox-proof.ts`).
 */
import type { SubscriberDeployment } from '../../lambda/contract/subscriber-deployment';
import type { ParsedArguments } from './command';
import { readSubscriberOutput } from './deployed-subscriber';
import { terminalText } from './terminal-text';

/** The subscriber a `fence` command acts on. */
export interface FenceTarget {
  readonly subscriber: string;
  readonly inboxTable: string;
  /** --outbox-table, else the output's. */
  readonly outboxTable?: string;
  /** --queue, else the output's. */
  readonly queue?: string;
  /** The subscriber's Operator stack output, when given. */
  readonly deployment?: SubscriberDeployment;
}

function typed(parsed: ParsedArguments, name: string): string | undefined {
  const value = parsed.values[name];
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

/**
 * The target of `fence <action> <subscriber>`: returns a usage problem as a string (no --table and no output, an output
 * that is not this ordered subscriber's, a --table or --queue that disagrees with it). A typed --outbox-table that
 * disagrees is left to the proof, which refuses it with why.
 */
export function resolveFenceTarget(parsed: ParsedArguments, subscriber: string, cwd: string): FenceTarget | string {
  const output = typed(parsed, 'subscriber-output');
  const deployment = output === undefined ? undefined : readSubscriberOutput(output, cwd);
  if (typeof deployment === 'string') return deployment;
  if (deployment !== undefined) {
    if (deployment.subscriberName !== subscriber) return `the subscriber '${terminalText(subscriber)}' disagrees with --subscriber-output (its subscriberName is '${terminalText(deployment.subscriberName)}')`;
    if (deployment.ordered !== true) return `--subscriber-output is not an ordered subscriber's output (subscriber '${terminalText(subscriber)}' has no sequence fences)`;
    for (const [option, deployed] of [['table', deployment.inboxTable], ['queue', deployment.queueUrl]] as const) {
      const value = typed(parsed, option);
      if (value !== undefined && value !== deployed) return `--${option} ${terminalText(value)} disagrees with --subscriber-output (it says ${terminalText(deployed ?? 'none')}); leave the flag out`;
    }
  }
  const inboxTable = typed(parsed, 'table') ?? deployment?.inboxTable;
  if (inboxTable === undefined) return 'needs --table (or --subscriber-output)';
  const outboxTable = typed(parsed, 'outbox-table') ?? deployment?.outboxTable;
  const queue = typed(parsed, 'queue') ?? deployment?.queueUrl;
  return {
    subscriber,
    inboxTable,
    ...(outboxTable === undefined ? {} : { outboxTable }),
    ...(queue === undefined ? {} : { queue }),
    ...(deployment === undefined ? {} : { deployment }),
  };
}
