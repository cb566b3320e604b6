/** The result of a run against a DynamoDB Local it did not start names its tables without the run's own suffix. */
import { describe, expect, test } from 'vitest';
import { newTableSuffix, withoutTableSuffix } from '../../../simulator/run/table-suffix';

describe('withoutTableSuffix', () => {
  test('removes the suffix from every string of objects, arrays and maps, keys included, and leaves the value itself alone', () => {
    const suffix = newTableSuffix();
    const value = {
      detail: `its own client: Stack-Ledger1234ABCD${suffix} (1 UpdateItem)`,
      causes: [{ requests: [{ tables: [`Stack-Inbox5678EFAB${suffix}`], count: 2 }] }],
      deadLetters: new Map([[`Billing${suffix}`, [{ reason: `table Stack-Ledger1234ABCD${suffix}` }]]]),
      seen: new Set([`a${suffix}`]),
      rounds: 3,
    };

    expect(withoutTableSuffix(value, suffix)).toEqual({
      detail: 'its own client: Stack-Ledger1234ABCD (1 UpdateItem)',
      causes: [{ requests: [{ tables: ['Stack-Inbox5678EFAB'], count: 2 }] }],
      deadLetters: new Map([['Billing', [{ reason: 'table Stack-Ledger1234ABCD' }]]]),
      seen: new Set(['a']),
      rounds: 3,
    });
    expect(value.detail).toContain(suffix);
    expect(withoutTableSuffix(value, undefined)).toBe(value);
  });

  test('a suffix of the characters a table name allows', () => {
    for (let drawn = 0; drawn < 5; drawn += 1) expect(newTableSuffix()).toMatch(/^-[0-9a-z]+$/);
  });
});
