/**
 * Why a replay to an ordered subscriber sends only with the subscriber's Operator output (`fence replay --yes`, ordered
 * `replay --yes`): nothing else ties the FIFO queue typed as `--queue` to the subscriber whose fences were read. Another
 * deployment's queue (a pasted staging queue, another flow's ordered subscriber) would take this outbox's events, and
 * there a fresh aggregate's fence admits them: applied in the wrong place (review ro15, RO15-4). With the output, a
 * typed `--queue` must be the one it names (the refusal names both).
 */

/** The usage problem of sending a replay without `--subscriber-output`; `command` is how the operator typed it. */
export function replayNeedsOutputLine(command: string): string {
  return (
    `'${command} --yes' needs --subscriber-output (the subscriber's Operator stack output): only it ties the queue to the subscriber whose fences were read, ` +
    "and a typed --queue of another deployment would apply these events there; a dry run (without --yes) takes the typed flags"
  );
}
