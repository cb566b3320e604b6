/** Deploy-time rules AWS enforces on what the simulator reads from the templates: a run of an app that would not deploy fails. */
import { describe, expect, test } from 'vitest';
import { checkDeployRules } from '../../../simulator/check/deploy-rules';
import type { EventSourceMappingModel, FunctionModel, QueueModel } from '../../../simulator/model/flow-model';
import { queueModel } from '../aws/queue-test-kit';

const MAPPING: EventSourceMappingModel = { key: 'Stack/Mapping', stackName: 'Stack', logicalId: 'Mapping', constructPath: 'Stack/Seats/Function/SqsEventSource', queue: 'Stack/Orders', function: 'Stack/Consumer', batchSize: 10, enabled: true, reportBatchItemFailures: true };

function fn(timeoutSeconds: number): FunctionModel {
  return { key: 'Stack/Consumer', stackName: 'Stack', logicalId: 'Consumer', constructPath: 'Stack/Seats/Function/Resource', timeoutSeconds } as FunctionModel;
}

function model(timeoutSeconds: number, queue: QueueModel = queueModel('Orders', { visibilityTimeoutSeconds: 180, constructPath: 'Stack/Seats/Queue/Resource' })) {
  return { eventSourceMappings: [MAPPING], functions: [fn(timeoutSeconds)], queues: [queue] };
}

describe('deploy-refused', () => {
  test('fails when a function timeout is above the visibility timeout of the queue its SQS event source mapping reads', () => {
    // GIVEN a timeout raised to 300 s (e.g. by an Aspect) on a queue whose visibility timeout is 180 s
    expect(checkDeployRules(model(300))).toEqual([
      {
        kind: 'deploy-refused',
        detail:
          'AWS refuses the event source mapping Stack/Seats/Function/SqsEventSource at deploy: the timeout of function Stack/Seats/Function/Resource (300 s) ' +
          'is above the visibility timeout of its queue Stack/Seats/Queue/Resource (180 s); raise the visibility timeout (6 x the function timeout is recommended) or lower the timeout',
      },
    ]);
  });

  test('fails when an event source mapping of a FIFO queue has a batch size above 10', () => {
    const fifo = queueModel('Orders', { fifo: true, queueName: 'orders.fifo', visibilityTimeoutSeconds: 180, constructPath: 'Stack/Seats/Queue/Resource' });

    expect(checkDeployRules({ ...model(30, fifo), eventSourceMappings: [{ ...MAPPING, batchSize: 11 }] })).toEqual([
      { kind: 'deploy-refused', detail: 'AWS refuses the event source mapping Stack/Seats/Function/SqsEventSource at deploy: its batch size 11 is above 10, the most for a FIFO queue (Stack/Seats/Queue/Resource)' },
    ]);
    expect(checkDeployRules({ ...model(30, fifo), eventSourceMappings: [{ ...MAPPING, batchSize: 10 }] })).toEqual([]);
    expect(checkDeployRules({ ...model(30), eventSourceMappings: [{ ...MAPPING, batchSize: 11 }] })).toEqual([]);
  });

  test('passes a timeout equal to or below the visibility timeout', () => {
    expect(checkDeployRules(model(180))).toEqual([]);
    expect(checkDeployRules(model(30))).toEqual([]);
  });
});
