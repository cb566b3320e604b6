import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Test files that only build and synthesize CDK apps in memory (no DynamoDB Local, no worker, no environment variable or
 * module state they change): they share their test process's loaded modules (`isolate: false`). Loading aws-cdk-lib
 * anew for each of them cost 2 to 4 s a file; at load average 9 to 13 these files took 167 s isolated, 34 s not.
 */
const SHARED_MODULES = ['test/constructs/**/*.test.ts', 'test/compliance/**/*.test.ts'];

const common = {
  pool: 'forks',
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
