/** Asking the operator at a terminal before a command changes anything. */
import { createInterface } from 'node:readline/promises';

/**
 * Asks `question` on standard error and reads the answer from standard input; true for `y` or `yes`. Only when both
 * are terminals: undefined otherwise (a script gets no prompt, so the command stays a dry run).
 */
export function terminalConfirm(): ((question: string) => Promise<boolean>) | undefined {
  if (process.stdin.isTTY !== true || process.stderr.isTTY !== true) return undefined;
  return async (question) => {
    const prompt = createInterface({ input: process.stdin, output: process.stderr });
    try {
      return /^(y|yes)$/i.test((await prompt.question(`${question} [y/N] `)).trim());
    } finally {
      prompt.close();
    }
  };
}
