/**
 * Whether an ordered subscriber's inbox table may have been restored or replaced under it (review ro12, RO12-4): its
 * fences then stand where they stood at the restore point (or are gone), while the subscriber applied more in the table
 * it was restored from, so `fence replay` would apply those events a second time. Told from the table's own creation
 * time (DescribeTable): a fence written before its table was created came from another table (a restore, a copy);
 * events the fence has not applied that were written before its table was created may have been applied in another
 * one. Either is trusted once `fence carry` carried the fences from the table restored from (its carry record), or,
 * for a fence that applied nothing, when the operator says the subscriber was added after those events
 * (`--subscriber-added-later`).
 */
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import type { SequenceFenceState } from '../ordered/sequence-fences';
import type { CommandContext } from './command';
import { fencesCarried } from './fence-carry';
import type { HistoryItem } from './ordered-history';
import { terminalText } from './terminal-text';

/** What the refusal tells the operator to do. */
export const INBOX_RESTORE_ADVICE =
  "carry the fences from the table it was restored from ('fence carry --from-table <that table>'), or, when that table is gone, move each fence with 'fence skip' to what the subscriber's own state shows applied and then accept them ('fence carry --accept-fences-as-applied --reason <text>') (docs/ORDERED-DELIVERY.md, \"Restoring an inbox table\")";

/**
 * Why `fence replay` (or a redrive of dead letters) must not send `events` (each with the time the producer's runtime
 * wrote it, when known) to a subscriber whose inbox table may have been restored, or undefined.
 */
export async function inboxRestoreRefusal(
  context: CommandContext,
  inboxTable: string,
  subscriber: string,
  aggregateId: string,
  fence: SequenceFenceState,
  events: readonly Pick<HistoryItem, 'writtenAt'>[],
  addedLater: boolean,
): Promise<string | undefined> {
  const described = await context.client().send(new DescribeTableCommand({ TableName: inboxTable }));
  const created = described.Table?.CreationDateTime?.getTime();
  if (created === undefined) return undefined;
  const table = `inbox table '${terminalText(inboxTable)}'`;
  const createdText = new Date(created).toISOString();
  const appliedAt = fence.appliedAt === undefined ? undefined : Date.parse(fence.appliedAt);
  if (appliedAt !== undefined && appliedAt < created) {
    if (await fencesCarried(context, inboxTable, subscriber)) return undefined;
    return (
      `the fence of ${terminalText(aggregateId)} was written at ${fence.appliedAt}, before ${table} was created (${createdText}): the table was restored or copied, ` +
      'and the subscriber may have applied the events after this fence in the table it was restored from; sent, they would apply twice; nothing sent: ' +
      INBOX_RESTORE_ADVICE
    );
  }
  const older = events.filter((event) => event.writtenAt !== undefined && event.writtenAt < created);
  if (fence.appliedSequence > 0 || older.length === 0 || addedLater) return undefined;
  if (await fencesCarried(context, inboxTable, subscriber)) return undefined;
  return (
    `the subscriber applied nothing of ${terminalText(aggregateId)} in ${table}, and ${older.length} of its events were written before the table was created (${createdText}): ` +
    'a subscriber added later, or an inbox table replaced or restored, whose subscriber applied them in the one before (sent, they would apply twice); nothing sent: ' +
    `for a subscriber added after them, run again with --subscriber-added-later; else ${INBOX_RESTORE_ADVICE}`
  );
}
