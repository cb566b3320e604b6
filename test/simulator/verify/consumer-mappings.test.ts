/**
 * Review v11, V11-8: a subscriber whose Operator output names no consumer function is matched to its consumer by its
 * queue's event source mappings (Lambda ListEventSourceMappings, every page). The first mapping was taken whatever its
 * State: with an old disabled mapping and the new one, the probes could read the wrong function's environment, and a
 * queue whose only mapping is disabled (nothing consumes it) was not said. Now an enabled mapping is preferred and a
 * disabled one, or several enabled ones, are named (NOT PROVEN).
 */
import { describe, expect, test } from 'vitest';
import { chooseConsumer } from '../../../simulator/verify/deployed-flow';

const mapping = (uuid: string, fn: string, state: string) => ({ UUID: uuid, FunctionArn: `arn:aws:lambda:us-east-1:111111111111:function:${fn}`, State: state });

describe("a subscriber's consumer from its queue's event source mappings (review v11, V11-8)", () => {
  test('the enabled mapping is taken, not an older disabled one listed first', () => {
    expect(chooseConsumer('Ledger', [mapping('old', 'OldLedger', 'Disabled'), mapping('new', 'Ledger', 'Enabled')])).toEqual({ functionName: 'arn:aws:lambda:us-east-1:111111111111:function:Ledger' });
  });

  test('a queue whose mappings are all disabled is named NOT PROVEN: nothing consumes it', () => {
    const chosen = chooseConsumer('Ledger', [mapping('old', 'Ledger', 'Disabled')]);
    expect(chosen.functionName).toBe('arn:aws:lambda:us-east-1:111111111111:function:Ledger');
    expect(chosen.notProven).toMatch(/^Ledger: its queue's event source mapping\(s\) are not enabled \(old to arn:aws:lambda:us-east-1:111111111111:function:Ledger: Disabled\): nothing consumes its queue/);
  });

  test('several enabled mappings to different functions are named: the probes read the first one\'s environment', () => {
    const chosen = chooseConsumer('Ledger', [mapping('a', 'LedgerA', 'Enabled'), mapping('b', 'LedgerB', 'Enabling')]);
    expect(chosen.functionName).toBe('arn:aws:lambda:us-east-1:111111111111:function:LedgerA');
    expect(chosen.notProven).toMatch(/^Ledger: its queue has 2 enabled event source mappings to different functions/);
  });

  test('no mapping: no consumer, nothing to name (as before)', () => {
    expect(chooseConsumer('Ledger', [])).toEqual({});
  });
});
