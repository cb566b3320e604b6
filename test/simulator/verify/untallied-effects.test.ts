/**
 * A lease, multi-step or aggregate subscriber's inbox does not prove its effects (a COMPLETED record says its handler
 * returned); with a probe, only the events its tallies name are counted. The run's events it took that no tally names
 * rested on COMPLETED records alone while the verdict said "each effect applied exactly once": now they are NOT PROVEN,
 * named per subscriber. Transactional and ordered subscribers keep their inbox as proof.
 */
import { expect, test } from 'vitest';
import { untalliedEffects } from '../../../simulator/verify/unseen-effects';
import { verifyVerdict } from '../../../simulator/verify/verdict';
import { verifyResult } from './verify-result-kit';

const placed = 'order-placed-v0-01020304-order-1';
const refunded = 'order-refunded-v0-01020304-order-1';
const taken = new Set([placed, refunded]);
/** The probe counts charges; the refund (an outside effect too) has no tally at all. */
const chargesOnly = { tallies: [{ subject: `charge of ${placed}`, eventIds: [placed], applied: 1 }] };

test.each(['lease', 'multi-step'] as const)('a %s subscriber whose probe tallies only some of the events it took is NOT PROVEN, naming them', (mode) => {
  const found = untalliedEffects('Payments', { processingMode: mode }, true, taken, chargesOnly);
  expect(found?.eventIds).toEqual([refunded]);
  expect(found?.line).toMatch(new RegExp(`Payments is in ${mode} mode: 1 of the run's 2 event\\(s\\) it took have no tally in its effect probe \\(${refunded}\\)`));
  const run = verifyResult({ subscribers: [{ name: 'Payments', events: 2, deadLettered: 0 }] });
  expect(verifyVerdict(run).status).toBe('OK');
  expect(verifyVerdict({ ...run, unproven: [found!.line] }).status).toBe('NOT PROVEN');
});

test('an aggregate subscriber (no inbox) with untallied events is NOT PROVEN too', () => {
  expect(untalliedEffects('Stats', { processingMode: 'aggregate' }, false, taken, chargesOnly)?.line).toMatch(/Stats keeps no inbox \(aggregate mode\): 1 of the run's 2/);
});

test('every taken event tallied, a transactional subscriber, no probe, or a probe that threw: nothing added', () => {
  const both = { tallies: [{ subject: 'charges', eventIds: [placed, refunded], applied: 2 }] };
  expect(untalliedEffects('Payments', { processingMode: 'lease' }, true, taken, both)).toBeUndefined();
  expect(untalliedEffects('Billing', { processingMode: 'transactional' }, true, taken, chargesOnly)).toBeUndefined();
  expect(untalliedEffects('Payments', { processingMode: 'lease' }, true, taken, undefined)).toBeUndefined();
  expect(untalliedEffects('Payments', { processingMode: 'lease' }, true, taken, { error: 'boom' })).toBeUndefined();
});
