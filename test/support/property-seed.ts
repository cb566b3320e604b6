/**
 * The property tests' seed for a whole run, read from `IEF_TEST_SEED` (vitest's `setupFiles` runs this before each
 * test file). Set, it is fast-check's global seed: every `fc.assert`/`fc.check` that names no seed of its own searches
 * from it, so two runs of one commit with one `IEF_TEST_SEED` search the same ground, and a failure that CI met
 * happens again on a laptop. Unset, fast-check draws a seed per property, as it does by default.
 * `.ci/run` sets it from the commit it tests (scripts/ci/test-seed.sh). Not a test file.
 */
import fc from 'fast-check';

/** The seed `IEF_TEST_SEED` names, or undefined when it is unset or empty; anything else is a mistake, named. */
export function propertySeed(environment: NodeJS.ProcessEnv = process.env): number | undefined {
  const text = environment.IEF_TEST_SEED;
  if (text === undefined || text.trim() === '') return undefined;
  const seed = Number(text);
  if (!Number.isSafeInteger(seed) || seed < -(2 ** 31) || seed >= 2 ** 31) {
    throw new Error(`IEF_TEST_SEED must be a 32-bit integer (fast-check's seed), got '${text}'`);
  }
  return seed;
}

const seed = propertySeed();
if (seed !== undefined) fc.configureGlobal({ ...fc.readConfigureGlobal(), seed });
