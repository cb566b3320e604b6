/**
 * The outbox tables the scenario's producers commit into, from their deployed functions' environment (Lambda
 * GetFunctionConfiguration: the runtime's outbox variable), and what verify cannot check of them (review r12, R12-5):
 * a producer's outbox that neither a flow's `Operator` output nor any found subscriber's names is an outbox whose
 * relay delivers to subscribers verify did not find, so no verdict about them can be OK.
 */
import { GetFunctionConfigurationCommand } from '@aws-sdk/client-lambda';
import { ENV } from '../../lambda/contract/environment';
import type { VerifyClients } from './clients';
import type { DeployedFlow } from './deployed-flow';
import { outboxesRead } from './observe';
import type { DeployedProducer } from './produce';

/** A producer's function and the outbox table its environment names. */
export interface ProducerOutbox {
  /** The scenario's name of the producer function (its construct path or logical id). */
  readonly producer: string;
  readonly functionName: string;
  readonly outboxTable: string;
}

/** The outbox table each producer's function names in its environment (none for a function that names none). */
export async function producerOutboxes(clients: VerifyClients, producers: readonly DeployedProducer[]): Promise<ProducerOutbox[]> {
  const found: ProducerOutbox[] = [];
  for (const { producer, functionName } of producers) {
    const configuration = await clients.lambda.send(new GetFunctionConfigurationCommand({ FunctionName: functionName }));
    const outboxTable = configuration.Environment?.Variables?.[ENV.OUTBOX_TABLE_NAME];
    if (outboxTable !== undefined && outboxTable !== '') found.push({ producer: producer.function, functionName, outboxTable });
  }
  return found;
}

/** One NOT PROVEN sentence per producer outbox that no flow or found subscriber names ({@link outboxesRead} without it). */
export function producerOutboxesUnchecked(flow: Pick<DeployedFlow, 'flows' | 'subscribers'>, outboxes: readonly ProducerOutbox[]): string[] {
  const known = new Set(outboxesRead(flow));
  return outboxes
    .filter((item) => !known.has(item.outboxTable))
    .map(
      (item) =>
        `the producer ${item.producer} (${item.functionName}) commits into outbox table ${item.outboxTable}, which neither a flow's nor any found subscriber's Operator output names: the subscribers its relay delivers to were not found (another account, or a stack not read: --stack), so whether they applied its events was not checked`,
    );
}
