/**
 * What an app's failed `cdk synth` said, read from the CLI's output: the message of the error the app threw (a
 * construct's refusal: `«IdempotentEventFlowValidation» Subscriber 'Receipts': deduplicationWindow must be ...`),
 * without node's source excerpt, the stack frames and the CLI's own trailer, so that `simulate` can say it as the run's
 * verdict. An output with no stack frame (an app that printed its problem and exited) is given by its last lines.
 */

/** A stack frame line (`    at f (file:1:2)`), or the line a stack printer puts for the frames it left out. */
const FRAME = /^\s+(at\s|\.\.\.)/;
/** The CDK CLI's own line after the app's process failed. */
const CLI_TRAILER = /Subprocess exited with error \d+\s*$/;
/** How many of the last lines an output with no stack frame is given by. */
const LAST_LINES = 10;

/** The app's own message in a failed synth's `output` (see the module comment); `(no output)` when there is none. */
export function synthRefusal(output: string): string {
  const lines = output.split(/\r?\n/).map((line) => line.trimEnd());
  let lastFrame = lines.length - 1;
  while (lastFrame >= 0 && !FRAME.test(lines[lastFrame]!)) lastFrame--;
  if (lastFrame >= 0) {
    let firstFrame = lastFrame;
    while (firstFrame > 0 && FRAME.test(lines[firstFrame - 1]!)) firstFrame--;
    // the message: the lines above the frames, up to the blank line after node's source excerpt and its caret
    let start = firstFrame;
    while (start > 0 && lines[start - 1]!.trim() !== '') start--;
    const message = lines.slice(start, firstFrame).join('\n').trim();
    if (message !== '') return message;
  }
  const said = lines.filter((line) => line.trim() !== '' && !CLI_TRAILER.test(line) && !FRAME.test(line));
  return said.length === 0 ? '(no output)' : said.slice(-LAST_LINES).join('\n');
}
