import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    maxWorkers: 2,
    // limits that catch a hang, never a slow machine: a verdict must not depend on the machine's speed or load (a
    // loaded 2-core machine runs a simulation several times slower than a quiet one)
    testTimeout: 900_000,
    hookTimeout: 900_000,
    env: {
      // The SDK's notice that a future release drops Node 20: harmless here (the runtime runs on Lambda's Node.js, and
      // the tests' clients only talk to DynamoDB Local), and printed once per test process otherwise.
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
  },
});
