/**
 * Whether an ordered subscriber's inbox table was restored or copied and its fences not carried (`fence list`): one
 * of the fences read was written before the table was created (DescribeTable), and the table has no carry record of
 * `fence carry` (./fence-carry.ts). The same sign `fence replay` refuses on (./inbox-restore-check.ts).
 */
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import type { SequenceFenceState } from '../ordered/sequence-fences';
import type { CommandContext } from './command';
import { fencesCarried } from './fence-carry';

/** True when a fence of `fences` (read from `inboxTable`) is older than the table and no carry ran on it. */
export async function uncarriedRestore(context: CommandContext, inboxTable: string, subscriber: string, fences: readonly Pick<SequenceFenceState, 'appliedAt'>[]): Promise<boolean> {
  const created = (await context.client().send(new DescribeTableCommand({ TableName: inboxTable }))).Table?.CreationDateTime?.getTime();
  if (created === undefined) return false;
  if (!fences.some((fence) => fence.appliedAt !== undefined && Date.parse(fence.appliedAt) < created)) return false;
  return !(await fencesCarried(context, inboxTable, subscriber));
}
