/** The start and end every bench shares: DynamoDB Local up, the run, its output, everything stopped, the exit code. */
import { startDynamoDbLocal, type DynamoDbLocal } from '../../test/support/dynamodb-local';
import { progress, reportFailure } from './fixtures';

/** Something a run started that must be stopped with it (a proxy in front of DynamoDB Local). */
export interface Stoppable {
  stop(): Promise<void>;
}

/**
 * Starts DynamoDB Local, runs `run` (which registers what it starts with `stopWith`, so it is stopped even on an
 * interrupt), writes the Markdown it returns to standard output, stops everything, and sets the exit code: 0, or 1
 * for a violated exactly-once check and 2 for any other error (see `reportFailure`).
 */
export async function benchMain(run: (local: DynamoDbLocal, stopWith: <T extends Stoppable>(started: T) => T) => Promise<string>): Promise<void> {
  const started = Date.now();
  progress('starting DynamoDB Local');
  const local = await startDynamoDbLocal();
  const running: Stoppable[] = [];
  const stopAll = async (): Promise<void> => {
    for (const stoppable of running) await stoppable.stop();
    await local.stop();
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void stopAll().finally(() => process.exit(130)));
  }
  let exitCode = 0;
  try {
    const output = await run(local, (stoppable) => (running.push(stoppable), stoppable));
    process.stdout.write(`${output}\n`);
  } catch (error) {
    exitCode = reportFailure(error);
  } finally {
    await stopAll();
  }
  progress(`done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  process.exitCode = exitCode;
}
