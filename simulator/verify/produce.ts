/**
 * Runs the scenario's producers against the deployed producers: each producer's seeded commands (`--count`, `--seed`,
 * the simulator's own seeded generator), their ids made unique to the run (./run-ids.ts; a command it cannot make unique
 * refuses the run before any is sent), each invoked synchronously
 * (Lambda Invoke) up to {@link PRODUCER_ATTEMPTS} times, as a caller would retry, one command after another. A command
 * fails on a function error, or on a response the producer's `failedResponse` says failed (by default an HTTP
 * `statusCode` of 500 or more).
 */
import { InvokeCommand } from '@aws-sdk/client-lambda';
import { PRODUCER_ATTEMPTS } from '../run/producer-driver';
import type { ScenarioProducer } from '../run/scenario';
import { seededRandom, seedNumber } from '../schedule/seeded-random';
import type { ProducerFailure, ProducerFigures } from '../observation/run-facts';
import type { VerifyClients } from './clients';
import { withRunIds } from './run-ids';

/** A producer and the deployed function it drives. */
export interface DeployedProducer {
  readonly producer: ScenarioProducer;
  readonly functionName: string;
}

function failedByDefault(response: unknown): boolean {
  const status = (response as { statusCode?: unknown } | null)?.statusCode;
  return typeof status === 'number' && status >= 500;
}

/** Invokes every producer's commands; `onCommand` hears each command done. */
export async function produce(
  clients: VerifyClients,
  producers: readonly DeployedProducer[],
  run: { readonly count: number; readonly seed: string; readonly runId: string },
  onCommand: (done: number, total: number) => void,
  /** Gets every id value the run made (./run-ids.ts): what `--cleanup` matches keys against. */
  minted: Set<string> = new Set(),
): Promise<ProducerFigures> {
  const random = seededRandom(seedNumber(run.seed));
  // every command is made unique before the first is sent: one verify cannot make unique refuses the run (RunIdError)
  const commands = producers.map(({ producer, functionName }) => ({ producer, functionName, commands: producer.commands(run.count, random).map((command) => withRunIds(command, run.runId, minted)) }));
  const total = commands.reduce((sum, { commands: list }) => sum + list.length, 0);
  const figures = { total, succeeded: 0, retried: 0, failed: [] as ProducerFailure[] };
  let done = 0;
  for (const { producer, functionName, commands: list } of commands) {
    const failed = producer.failedResponse ?? failedByDefault;
    for (const [index, command] of list.entries()) {
      let reason = '';
      for (let attempt = 1; attempt <= PRODUCER_ATTEMPTS; attempt += 1) {
        try {
          const answer = await clients.lambda.send(new InvokeCommand({ FunctionName: functionName, Payload: JSON.stringify(command) }));
          const text = answer.Payload === undefined ? 'null' : Buffer.from(answer.Payload).toString('utf8');
          const response: unknown = text === '' ? null : JSON.parse(text);
          reason = answer.FunctionError !== undefined ? `the function failed (${answer.FunctionError}): ${text}` : failed(response) ? `the invocation returned a failed response: ${text.slice(0, 200)}` : '';
        } catch (error) {
          reason = `Lambda Invoke failed: ${error instanceof Error ? error.message : String(error)}`;
        }
        if (reason === '') break;
        if (attempt < PRODUCER_ATTEMPTS) figures.retried += 1;
      }
      if (reason === '') figures.succeeded += 1;
      else figures.failed.push({ index, reason, producer: producer.function });
      onCommand((done += 1), total);
    }
  }
  return figures;
}
