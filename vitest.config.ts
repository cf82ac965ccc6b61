// Lambda runs Node 22; the SDK's Node 20 notice is noise in local test runs.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/setup/global-emulator.ts'],
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Integration tests share one emulator; two files at once on two cores keeps timing honest.
    maxWorkers: 2,
    allowOnly: false,
    passWithNoTests: false,
  },
});
