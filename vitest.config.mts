import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    env: {
      // The SDK's notice that a future release drops Node 20: harmless here (the runtime runs on Lambda's Node.js, and
      // the tests' clients only talk to DynamoDB Local), and printed once per test process otherwise.
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
  },
});
