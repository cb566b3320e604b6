/** A lease written shorter than the function's timeout is a warning naming the setting, the timeout and the change (review r16b R16B-5). */
import { describe, expect, test } from 'vitest';
import { LEASE_BELOW_TIMEOUT_FIX, leaseBelowTimeout, warningText } from '../../../simulator/check/lease-below-timeout';

const LEASE_ENVIRONMENT = { IEF_PROCESSING_MODE: 'lease', IEF_LEASE_DURATION_SECONDS: '30' };

describe('leaseBelowTimeout', () => {
  test('a lease set in code (the runtime wrote 5 s, the environment says 30 s) below a 30 s timeout: the config field named, its value, the timeout, the fix', () => {
    const warning = leaseBelowTimeout({ subscriber: 'Receipts', environment: LEASE_ENVIRONMENT, functionTimeoutSeconds: 30, writtenLeaseSeconds: 5 });

    expect(warning).toEqual({ kind: 'lease-below-timeout', subscriber: 'Receipts', setting: { name: 'leaseDurationSeconds', value: 5 }, functionTimeoutSeconds: 30, fix: LEASE_BELOW_TIMEOUT_FIX });
    const text = warningText(warning!);
    expect(text).toMatch(/^warning: Receipts: its lease \(5 s, leaseDurationSeconds set in its handler's config\) is shorter than its function's timeout \(30 s\): /);
    expect(text).toContain("(onExpiredLease 'retry')");
    expect(text.endsWith(`: ${LEASE_BELOW_TIMEOUT_FIX}`)).toBe(true);
    expect(LEASE_BELOW_TIMEOUT_FIX).toMatch(/at least the function's timeout/);
  });

  test("a multi-step consumer's lease from its environment (the runtime wrote the environment's 10 s) below a 60 s timeout: the variable named", () => {
    const warning = leaseBelowTimeout({ subscriber: 'Invoicing', environment: { IEF_PROCESSING_MODE: 'multi-step', IEF_LEASE_DURATION_SECONDS: '10' }, functionTimeoutSeconds: 60, writtenLeaseSeconds: 10 });

    expect(warning?.setting).toEqual({ name: 'IEF_LEASE_DURATION_SECONDS', value: 10 });
    expect(warningText(warning!)).toContain("(10 s, IEF_LEASE_DURATION_SECONDS in its function's environment)");
  });

  test.each([
    ['a lease equal to the timeout (the construct\'s default)', LEASE_ENVIRONMENT, 30],
    ['a lease longer than the timeout', LEASE_ENVIRONMENT, 45],
    ['no lease written in the run (nothing delivered)', LEASE_ENVIRONMENT, undefined],
    ['a transactional consumer', { IEF_PROCESSING_MODE: 'transactional' }, 5],
  ])('no warning for %s', (_label, environment, written) => {
    expect(leaseBelowTimeout({ subscriber: 'Billing', environment, functionTimeoutSeconds: 30, ...(written === undefined ? {} : { writtenLeaseSeconds: written }) })).toBeUndefined();
  });
});
