import { describe, expect, test } from 'vitest';
import { ProcessingMode } from '../../lib';
import { PROCESSING_MODE } from '../../lambda/contract/environment';

describe('ProcessingMode', () => {
  test("has exactly the runtime's PROCESSING_MODE names as values", () => {
    expect(Object.values(ProcessingMode).sort()).toEqual(Object.values(PROCESSING_MODE).sort());
  });

  test('names each member like the runtime constant', () => {
    for (const [member, value] of Object.entries(ProcessingMode)) {
      expect(PROCESSING_MODE[member as keyof typeof PROCESSING_MODE], member).toBe(value);
    }
  });
});
