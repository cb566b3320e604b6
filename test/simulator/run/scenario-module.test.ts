/** What a scenario module must export: producers are checked by name when the module loads. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { loadScenario, scenarioProducers } from '../../../simulator/run/scenario';

const directory = mkdtempSync(path.join(tmpdir(), 'ief-scenario-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

async function load(name: string, source: string) {
  const file = path.join(directory, name);
  writeFileSync(file, source);
  return loadScenario(file, directory);
}

const PRODUCER = "{ function: 'Orders/Produce', commands: (count) => Array.from({ length: count }, (_, id) => ({ id })) }";

describe('loadScenario: producers', () => {
  test('takes a list of producers, and scenarioProducers lists them (or the one producer)', async () => {
    const several = await load('several.js', `exports.scenario = { producers: [${PRODUCER}, ${PRODUCER.replace('Orders', 'Payments')}] };`);
    expect(scenarioProducers(several).map((producer) => producer.function)).toEqual(['Orders/Produce', 'Payments/Produce']);
    const one = await load('one.js', `exports.scenario = { producer: ${PRODUCER} };`);
    expect(scenarioProducers(one).map((producer) => producer.function)).toEqual(['Orders/Produce']);
    expect(scenarioProducers(await load('none.js', 'exports.scenario = { effects: {} };'))).toEqual([]);
  });

  test('fails for producer and producers together, an empty list, and a malformed entry named by its index', async () => {
    await expect(load('both.js', `exports.scenario = { producer: ${PRODUCER}, producers: [${PRODUCER}] };`)).rejects.toThrow(/give 'producer' or 'producers', not both/);
    await expect(load('empty.js', 'exports.scenario = { producers: [] };')).rejects.toThrow(/'producers' must be a non-empty list of producers/);
    await expect(load('bad.js', `exports.scenario = { producers: [${PRODUCER}, { function: 'X' }] };`)).rejects.toThrow(
      /'producers\[1\]' needs a 'function' \(construct path or logical id\) and a 'commands\(count, random\)' function/,
    );
    await expect(load('probe.js', `exports.scenario = { producers: [{ ...${PRODUCER}, probe: 'no' }] };`)).rejects.toThrow(/producers\[0\]\.probe must be a function, got string/);
    // which responses of an API's producer fail a command: a function of the response, nothing else (issue 29 item 6)
    await expect(load('failed-response.js', `exports.scenario = { producers: [{ ...${PRODUCER}, failedResponse: 409 }] };`)).rejects.toThrow(
      /producers\[0\]\.failedResponse must be a function of a response that says whether it fails the command, got number/,
    );
    const strict = await load('strict.js', `exports.scenario = { producer: { ...${PRODUCER}, failedResponse: (response) => response.statusCode !== 201 } };`);
    expect(scenarioProducers(strict)[0]!.failedResponse!({ statusCode: 409 })).toBe(true);
  });
});

describe('loadScenario: malformed', () => {
  test('takes a function that marks the events sent malformed on purpose, and refuses anything else', async () => {
    const scenario = await load('malformed.js', "exports.scenario = { malformed: (event) => event.type === 'Bad' };");
    expect(scenario.malformed?.({ id: 'e-1', type: 'Bad', data: {} })).toBe(true);
    await expect(load('not-a-function.js', "exports.scenario = { malformed: ['e-1'] };")).rejects.toThrow(/'malformed' must be a function of an event that says whether it is malformed on purpose, got object/);
  });
});
