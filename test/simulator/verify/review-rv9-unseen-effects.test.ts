/**
 * Review rv9, V-4: a lease or multi-step subscriber without an effect probe made verify say OK (exit 0) while the
 * report said exactly-once was unproven for it: its COMPLETED processing records say its handler returned, not that
 * the effect (outside DynamoDB) happened once. Now its line goes to `unproven`: NOT PROVEN, exit 5. Transactional and
 * ordered subscribers (the inbox record commits with the effects) stay OK without a probe.
 */
import { expect, test } from 'vitest';
import { unseenEffects } from '../../../simulator/verify/unseen-effects';
import { verifyVerdict } from '../../../simulator/verify/verdict';
import { verifyResult } from './verify-result-kit';

/** A clean run whose only subscriber, Shipping, had no effect probe. */
const OK_RUN = verifyResult({ subscribers: [{ name: 'Shipping', events: 2, deadLettered: 0 }], effectsNotCounted: ['Shipping'] });

test.each(['lease', 'multi-step'] as const)('V-4: a %s subscriber without a probe whose every record is COMPLETED is NOT PROVEN, naming why', (mode) => {
  const line = unseenEffects('Shipping', { processingMode: mode }, false, 4, true);
  expect(line).toMatch(new RegExp(`Shipping is in ${mode} mode .*no effect probe.*COMPLETED .*add an effect probe`));
  expect(verifyVerdict({ ...OK_RUN, unproven: [line!] }).status).toBe('NOT PROVEN');
});

test('V-4: transactional and ordered subscribers stay OK without a probe; any mode with a probe, or no events taken, adds nothing', () => {
  expect(unseenEffects('Billing', { processingMode: 'transactional' }, false, 4, true)).toBeUndefined();
  expect(unseenEffects('Shipping', { processingMode: 'lease' }, true, 4, true)).toBeUndefined();
  expect(unseenEffects('Shipping', { processingMode: 'multi-step' }, false, 0, true)).toBeUndefined();
  expect(unseenEffects('Stats', { processingMode: 'aggregate' }, false, 2, false)).toMatch(/keeps no inbox \(aggregate mode\)/);
  expect(verifyVerdict(OK_RUN).status).toBe('OK');
});
