/**
 * `replay --flow-output`: the flow's `<flow>/Operator` stack output (the JSON value, or `@file`), which names its outbox
 * table beside its topic. A subscriber whose Operator output does not name the outbox (one of another account or
 * Region than its flow) takes the outbox from it, and the topic it names must be the one the subscriber's output
 * names: a table typed by hand, or the output of another flow (another environment's, or another team's in the same
 * account), would be read and its events sent to a subscriber whose inbox has never seen their ids.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';

/** The fields of a flow's Operator output that `replay` reads. */
export interface FlowOperatorOutput {
  /** The flow's outbox table. */
  readonly outboxTable: string;
  /** The flow's event topic, whose subscribers the outbox's events go to. */
  readonly topicArn: string;
  /** The attribute the outbox table's TTL reads. @default absent: an output of an older version */
  readonly outboxTimeToLiveAttribute?: string;
}

/** The option (parseArgs format). */
export const FLOW_OUTPUT_OPTION = { 'flow-output': { type: 'string' } } as const;

/** Its help text. */
export const FLOW_OUTPUT_HELP = `  --flow-output <json|@file>         the flow's <flow>/Operator stack output (its value, or @ and a file): its outbox
                                     table, tied to its topic, which must be the one --subscriber-output names
                                     (refused otherwise); needed when the subscriber's output names no outbox table
                                     (a subscriber of another account or Region than its flow)`;

/** Reads `--flow-output`: the JSON text, or `@file` (relative to `cwd`). Returns the problem as a string. */
export function readFlowOutput(value: string, cwd: string): FlowOperatorOutput | string {
  let text = value;
  if (value.startsWith('@')) {
    try {
      text = readFileSync(path.resolve(cwd, value.slice(1)), 'utf8');
    } catch (error) {
      return `--flow-output: could not read ${value.slice(1)} (${(error as Error).message})`;
    }
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return `--flow-output is not JSON (${(error as Error).message})`;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return "--flow-output is not a flow's Operator stack output: it is not a JSON object";
  const fields = parsed as Record<string, unknown>;
  for (const field of ['outboxTable', 'topicArn']) {
    if (typeof fields[field] !== 'string' || fields[field] === '') return `--flow-output is not a flow's Operator stack output: its field '${field}' must be a non-empty string, but was ${JSON.stringify(fields[field]) ?? 'absent'}`;
  }
  const ttl = fields.outboxTimeToLiveAttribute;
  if (ttl !== undefined && (typeof ttl !== 'string' || ttl === '')) return `--flow-output: its field 'outboxTimeToLiveAttribute' must be a non-empty string, but was ${JSON.stringify(ttl)}`;
  return { outboxTable: fields.outboxTable as string, topicArn: fields.topicArn as string, ...(ttl === undefined ? {} : { outboxTimeToLiveAttribute: ttl }) };
}
