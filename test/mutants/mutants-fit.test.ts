import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MUTANTS } from '../../scripts/mutants/mutants';

const root = path.resolve(__dirname, '..', '..');

/**
 * `npm run test:mutants` stops at the first mutant whose code no longer occurs exactly once: a mutant left stale by a
 * change of its file is a test nobody runs. This keeps every planted mutant applicable, in the ordinary suite.
 */
describe('the planted mutants fit the code', () => {
  it('have unique ids', () => {
    const ids = MUTANTS.map((mutant) => mutant.id);
    expect(ids.filter((id, index) => ids.indexOf(id) !== index)).toEqual([]);
  });

  it.each(MUTANTS.map((mutant) => [mutant.id, mutant] as const))('%s: each edit occurs exactly once, its tests exist', (_id, mutant) => {
    for (const edit of [mutant, ...(mutant.also ?? [])]) {
      const text = readFileSync(path.join(root, edit.file), 'utf8');
      expect({ file: edit.file, occurrences: text.split(edit.find).length - 1 }).toEqual({ file: edit.file, occurrences: 1 });
      expect(edit.replace).not.toBe(edit.find);
    }
    expect(mutant.tests.length).toBeGreaterThan(0);
    expect(mutant.tests.filter((file) => !existsSync(path.join(root, file)))).toEqual([]);
  });
});
