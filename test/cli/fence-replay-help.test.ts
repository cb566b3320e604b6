/**
 * `fence replay --help` says how its sends are deduplicated as they are (review ro15b, RO15B-5): a deduplication id of
 * the run and the event (replay-deduplication.ts), not the event id, which would have SQS drop a second run's sends
 * within its 5 minutes while the command said they were sent.
 */
import { expect, test } from 'vitest';
import { EXIT_CODE, type CliIo } from '../../operator/cli/command';
import { main } from '../../operator/cli/main';
import { replayDeduplicationIds } from '../../operator/cli/replay-deduplication';

test("fence --help names replay's deduplication id as one of the run and the event, and the ids are so", async () => {
  let stdout = '';
  const io: CliIo = { stdout: (text) => void (stdout += text), stderr: () => undefined };
  expect(await main(['fence', '--help'], io, () => undefined)).toBe(EXIT_CODE.OK);
  const help = stdout.replace(/\s+/g, ' ');
  expect(help).not.toContain('the event id as the deduplication id');
  expect(help).toContain('a deduplication id of the run and the event (SQS drops a retried send of the run; a replay run again sends again');
  // what the help says: the same id within a run, another in the next
  const first = replayDeduplicationIds();
  expect(first.of('evt-1')).toBe(first.of('evt-1'));
  expect(replayDeduplicationIds().of('evt-1')).not.toBe(first.of('evt-1'));
});
