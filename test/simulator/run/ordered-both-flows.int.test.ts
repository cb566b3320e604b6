/**
 * One business fact for both paths (issue 38 item 7), simulated: the ordered fixture's `both` variant, whose producer
 * appends each step with `alsoToStandardFlow`, so the ordered subscriber (Shipping) gets the ordered event and a standard
 * subscriber (Statements) the standard one, both from one transaction. With faults, each applies each of its events
 * once, the order check holds, and the dual-write check takes the pair as one change: OK.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { EXIT_CODE } from '../../../simulator/cli/main';
import { simulateOrderedWith, synthesizeOrdered, type OrderedAssemblies } from './ordered-fixture';

let synthesized: OrderedAssemblies | undefined;

beforeAll(async () => {
  synthesized = await synthesizeOrdered([{ both: 'true' }]);
});
afterAll(() => synthesized?.remove());

describe('one fact for both paths, simulated', () => {
  test('with faults, the ordered subscriber applies the ordered events in sequence and the standard subscriber the standard events, each once: OK', async () => {
    const { code, stdout } = await simulateOrderedWith('scenario-both.ts', synthesized!.assemblies[0]!, '--count', '9', '--seed', 'both');
    expect(stdout).toMatch(/^Shipping\s+ordered\s+9\s/m);
    expect(stdout).toMatch(/^Statements\s+transactional\s+9\s/m);
    expect(stdout).toContain('  Shipping: 9 event(s) of 3 aggregate(s) checked\n');
    expect(stdout).not.toMatch(/\[dual-write\]|\[effect-count\]|\[aggregate-order\]/);
    expect(stdout).toContain('OK: every business change of the producer committed with its events;');
    expect(code).toBe(EXIT_CODE.OK);
  });
});
