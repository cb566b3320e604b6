/**
 * Issue 38 item 8 (ii): a producer of the ordered path drawing a fresh aggregate per event (the ordered fixture's
 * `producer=fresh-aggregate` variant: aggregate = the event id, subject = the order) commits every event as sequence 1
 * of its own aggregate; every other check passes, and `subject-spread` fails the run naming the orders. The fixture as
 * it is (three orders, their steps in one aggregate each) passes it: ordered-path.int.test.ts's OK run, and the example
 * (`npm run demo`, simulation.int.test.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { EXIT_CODE } from '../../../simulator/cli/main';
import { simulateOrdered as simulate, synthesizeOrdered, type OrderedAssemblies } from './ordered-fixture';

let synthesized: OrderedAssemblies | undefined;

beforeAll(async () => {
  synthesized = await synthesizeOrdered([{ producer: 'fresh-aggregate' }]);
});
afterAll(() => synthesized?.remove());

describe('a producer drawing a fresh aggregate per event', () => {
  test('is reported: each order is a subject spread over one-event aggregates; the run fails', async () => {
    const { code, stdout } = await simulate(synthesized!.assemblies[0]!, '--count', '9', '--seed', 'spread', '--no-faults');
    expect(stdout).toMatch(/\[subject-spread\] 3 subject\(s\) of ordered events are spread over 3 or more aggregates of one event each, so nothing orders their events: 'order-1' in 3 aggregates \(step-c1, step-c4, step-c7\)/);
    expect(stdout).not.toMatch(/\[aggregate-order\]|\[dual-write\]|\[effect-count\]/);
    expect(code).toBe(EXIT_CODE.FAILURE);
  });
});
