/** What a failed synth's output says the app refused: its own message, without node's excerpt, the frames and the CLI's trailer. */
import { describe, expect, test } from 'vitest';
import { synthRefusal } from '../../../simulator/model/synth-output';

describe('synthRefusal', () => {
  test('a thrown error: the message between node\'s source excerpt and the stack frames, several lines kept', () => {
    const output = [
      'node:internal/modules/run_main:123',
      '    triggerUncaughtException(',
      '    ^',
      '',
      "«IdempotentEventFlowValidation» Subscriber 'Receipts': deduplicationWindow must be at least 25 days,",
      'but 1 day was provided',
      '    at validationError (/app/lib/private/validation-error.ts:16:10)',
      '    at <anonymous> (/app/bin/app.ts:13:6)',
      '    ...node internals, tsx...',
      '',
      'Node.js v20.20.2',
      'npx tsx bin/app.ts: Subprocess exited with error 1',
    ].join('\n');

    expect(synthRefusal(output)).toBe("«IdempotentEventFlowValidation» Subscriber 'Receipts': deduplicationWindow must be at least 25 days,\nbut 1 day was provided");
  });

  test('an app that printed its problem and exited: its last lines, without the CLI\'s trailer; nothing printed: said so', () => {
    expect(synthRefusal('cannot build the app: missing prop\nnode app.js: Subprocess exited with error 3\n')).toBe('cannot build the app: missing prop');
    expect(synthRefusal('')).toBe('(no output)');
  });
});
