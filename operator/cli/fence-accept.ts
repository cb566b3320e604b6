/**
 * `fence carry --accept-fences-as-applied`: the way through an inbox restore whose table restored from is gone (review
 * ro15b, RO15B-3). No command can then know how far the subscriber got; the operator moves each fence with `fence skip`
 * to what the subscriber's own state shows applied, and then says so with this option and a reason. It writes the carry
 * record `fence replay`, `dlq redrive` and `fence redrive` look for (naming no table carried from, and the operator's
 * reason), and an audit line, as `fence carry` does. Refused while the table's restore summary names a table restored
 * from that still exists: carry from that table instead.
 */
import { DescribeTableCommand, ResourceNotFoundException } from '@aws-sdk/client-dynamodb';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { FENCE_CARRY_RECORD, fenceCarryKey, SEQUENCE_FENCE } from '../../lambda/contract/ordered-wire-format';
import { TABLE_SCHEMA } from '../../lambda/contract/wire-format';
import { toDocumentClient } from '../../lambda/transaction/document-client';
import type { CommandContext } from './command';
import { terminalText } from './terminal-text';

/** The option, by name: what the operator accepts. */
export const ACCEPT_FENCES_OPTION = 'accept-fences-as-applied';

/** The attribute of the carry record that holds the operator's reason, written only by the acceptance (type S). */
export const ACCEPTED_REASON_ATTRIBUTE = 'acceptedReason';

/**
 * Why the acceptance is refused for `table`: its restore summary names a table restored from that still exists (the
 * fences can be carried from it, and its records with them). Undefined when none is named, or it is gone.
 */
export async function acceptanceRefusal(context: CommandContext, table: string): Promise<string | undefined> {
  const source = (await context.client().send(new DescribeTableCommand({ TableName: table }))).Table?.RestoreSummary?.SourceTableArn;
  if (source === undefined) return undefined;
  const name = source.slice(source.lastIndexOf('/') + 1);
  try {
    await context.client().send(new DescribeTableCommand({ TableName: name }));
  } catch (error) {
    if (error instanceof ResourceNotFoundException || (error as Error).name === 'ResourceNotFoundException') return undefined;
    throw error;
  }
  return (
    `inbox table '${terminalText(table)}' was restored from ${terminalText(source)}, which still exists: carry the fences from it ('fence carry --from-table ${terminalText(name)}'), ` +
    'which proves how far the subscriber got and copies its live inbox and skip records; nothing written'
  );
}

/** Writes the carry record of an acceptance in `table` (its `fromTable` empty: carried from no table). */
export async function writeAcceptance(context: CommandContext, subscriber: string, table: string, reason: string): Promise<void> {
  await toDocumentClient(context.client()).send(
    new PutCommand({
      TableName: table,
      Item: {
        [TABLE_SCHEMA.PARTITION_KEY]: fenceCarryKey(subscriber),
        [SEQUENCE_FENCE.RECORD_TYPE_ATTRIBUTE]: FENCE_CARRY_RECORD.RECORD_TYPE_VALUE,
        [SEQUENCE_FENCE.SUBSCRIBER_ATTRIBUTE]: subscriber,
        [FENCE_CARRY_RECORD.TABLE_ATTRIBUTE]: table,
        [ACCEPTED_REASON_ATTRIBUTE]: reason,
        [FENCE_CARRY_RECORD.CARRIED_AT_ATTRIBUTE]: context.now().toISOString(),
        [FENCE_CARRY_RECORD.CARRIED_BY_ATTRIBUTE]: context.user,
      },
    }),
  );
}
