/**
 * The demo's order check can fail: the example's scenario, in a small slice (12 orders, 3 of them fulfilled: 9 ordered
 * events), run on a copy of the example's assembly whose OrderTracking consumer is swapped for a broken one
 * (test/simulator/fixtures/example-unordered/order-tracking.ts): the example's projection run by the transactional
 * consumer, without the sequence fence, that cannot handle one order's first step. The step is dead-lettered, the
 * order's later steps are applied without it, and `aggregate-order` names the gap. (The example as it is passes the
 * check with faults: simulation.int.test.ts and `npm run demo`.)
 */
import { build } from 'esbuild';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { loadScenario, type SimulationScenario } from '../../../simulator/run/scenario';
import { runSimulation } from '../../../simulator/run/simulation';
import { type AssemblyVariant, exampleAssemblyVariant, logicalIdAt, writeCodeAsset } from '../../support/assembly-variant';

const PROJECT = path.resolve(__dirname, '../../..');
const BROKEN_ORDER_TRACKING = path.join(PROJECT, 'test/simulator/fixtures/example-unordered/order-tracking.ts');

let variant: AssemblyVariant | undefined;
let scenario: SimulationScenario;

beforeAll(async () => {
  // bundled as the example's functions are: everything in one index.js
  const bundle = await build({ entryPoints: [BROKEN_ORDER_TRACKING], bundle: true, platform: 'node', format: 'cjs', target: 'node20', write: false, logLevel: 'silent' });
  const indexJs = bundle.outputFiles[0]!.text;
  variant = await exampleAssemblyVariant((template, directory) => {
    const consumer = template.Resources[logicalIdAt(template, 'OrderTracking/Consumer/Resource/Resource')]!;
    consumer.Metadata = { ...consumer.Metadata, 'aws:asset:path': writeCodeAsset(directory, 'broken-order-tracking', indexJs) };
  });
  scenario = await loadScenario('example/simulation/scenario.ts', PROJECT);
});

afterAll(() => variant?.remove());

describe("the demo's order check on the example's ordered subscriber", () => {
  test('fails when OrderTracking runs without the sequence fence and applies an order past its dead-lettered first step, naming the order and the gap', async () => {
    const result = await runSimulation({
      cwd: PROJECT,
      assemblyDirectory: variant!.directory,
      scenario,
      dynamoDbEndpoint: inject('dynamoDbEndpoint'),
      count: 12,
      seed: 'order-check',
      concurrency: 2,
      rates: { duplicate: 0, lostResponse: 0, throttle: 0, crash: 0 },
    });

    const orderViolations = result.violations.filter((violation) => violation.kind === 'aggregate-order');
    expect(orderViolations).toEqual([
      {
        kind: 'aggregate-order',
        subscriber: 'OrderTracking',
        detail: 'aggregate order-00001: sequence 1 was never applied, but 3 was (a gap never filled; applied order: 2, 3)',
      },
    ]);
    expect(result.subscribers.find((subscriber) => subscriber.name === 'OrderTracking')?.orderChecked).toEqual({ aggregates: 3, events: 8 });
  });
});
