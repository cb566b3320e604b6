/**
 * Deploy-time rules AWS enforces on what the simulator reads from the templates: an app that breaks one does not
 * deploy, so a run of it proves nothing. Each broken rule is a `deploy-refused` violation naming the resources, the
 * values and the fix.
 *
 * - An SQS event source mapping: the function's timeout must not be above the queue's visibility timeout; Lambda
 *   refuses to create the mapping (Lambda Developer Guide, services-sqs-configure.html).
 * - An SQS event source mapping of a FIFO queue: its batch size is at most 10 (Lambda API reference,
 *   CreateEventSourceMapping, `BatchSize`).
 */
import type { EventSourceMappingModel, FunctionModel, ModelledResource, QueueModel } from '../model/flow-model';
import type { Violation } from './invariants';

/** What the rules read. */
export interface DeployRulesModel {
  readonly eventSourceMappings: readonly EventSourceMappingModel[];
  readonly functions: readonly FunctionModel[];
  readonly queues: readonly QueueModel[];
}

/** The largest batch an event source mapping of a FIFO queue may take. */
const MAX_FIFO_BATCH_SIZE = 10;

function named(resource: ModelledResource): string {
  return resource.constructPath ?? resource.key;
}

/** A violation per rule the templates break. */
export function checkDeployRules(model: DeployRulesModel): Violation[] {
  const violations: Violation[] = [];
  for (const mapping of model.eventSourceMappings) {
    const fn = model.functions.find((candidate) => candidate.key === mapping.function);
    const queue = model.queues.find((candidate) => candidate.key === mapping.queue);
    if (queue?.fifo === true && mapping.batchSize > MAX_FIFO_BATCH_SIZE) {
      violations.push({
        kind: 'deploy-refused',
        detail: `AWS refuses the event source mapping ${named(mapping)} at deploy: its batch size ${mapping.batchSize} is above ${MAX_FIFO_BATCH_SIZE}, the most for a FIFO queue (${named(queue)})`,
      });
    }
    if (fn === undefined || queue === undefined || fn.timeoutSeconds <= queue.visibilityTimeoutSeconds) continue;
    violations.push({
      kind: 'deploy-refused',
      detail:
        `AWS refuses the event source mapping ${named(mapping)} at deploy: the timeout of function ${named(fn)} (${fn.timeoutSeconds} s) ` +
        `is above the visibility timeout of its queue ${named(queue)} (${queue.visibilityTimeoutSeconds} s); raise the visibility timeout (6 x the function timeout is recommended) or lower the timeout`,
    });
  }
  return violations;
}
