import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Test files that share their test process's loaded modules (`isolate: false`): the CDK-only ones (they build and
 * synthesize apps in memory) and the runtime's (test/lambda: its modules keep no state of their own, and the
 * environment variables a test stubs it restores). Loading aws-cdk-lib or the AWS SDK anew for each file cost 1 to 4 s
 * a file. Measured: test/constructs + test/compliance 167 s isolated (load average 13-15), 34 s not (9-12);
 * test/lambda 57 s isolated, 47 s not (load 6-9). Every other file (simulator runs, workers, child processes) stays
 * isolated.
 */
const SHARED_MODULES = ['test/constructs/**/*.test.ts', 'test/compliance/**/*.test.ts', 'test/lambda/**/*.test.ts'];

const common = {
  pool: 'forks',
  // IEF_TEST_SEED, when set, is every property test's seed (.ci/run sets it from the commit it tests)
  setupFiles: ['test/support/property-seed.ts'] as string[],
  // limits that catch a hang, never a slow machine: a verdict must not depend on the machine's speed or load (a
  // loaded 2-core machine runs a simulation several times slower than a quiet one)
  testTimeout: 900_000,
  hookTimeout: 900_000,
  env: {
    // The SDK's notice that a future release drops Node 20: harmless here (the runtime runs on Lambda's Node.js, and
    // the tests' clients only talk to DynamoDB Local), and printed once per test process otherwise.
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  },
} as const;

export default defineConfig({
  test: {
    ...common,
    include: ['test/**/*.test.ts'],
    // run once for the whole run (the root project's), whichever project's files run; the projects inherit what it provides
    globalSetup: ['test/support/global-setup.ts'],
    maxWorkers: 2,
    projects: [
      { test: { ...common, name: 'synth', include: SHARED_MODULES, isolate: false } },
      { test: { ...common, name: 'runtime', include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, ...SHARED_MODULES] } },
    ],
  },
});
