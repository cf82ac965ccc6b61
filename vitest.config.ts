// Lambda runs Node 22; the SDK's Node 20 notice is noise in local test runs.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

import { defineConfig } from 'vitest/config';

/**
 * Files that load the one emulator for minutes (1,200 payouts, thousands of requests) and time a failover in it:
 * beside another file on two cores they measured the other file's load (CI saw a 5.1 s failover and 3 s request
 * timeouts). They run after the rest, one at a time. The chaos drills too: their failovers are timed, and in
 * `vitest run test/chaos` the client-fault file (17 s) otherwise ran beside the first drill's window.
 */
const RUN_ALONE = ['test/integration/settlement.test.ts', 'test/integration/settlement-cost.test.ts', 'test/chaos/drill.test.ts'];

export default defineConfig({
  test: {
    globalSetup: ['test/setup/global-emulator.ts'],
    setupFiles: ['test/setup/worker-emulator.ts'],
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    testTimeout: 60_000,
    hookTimeout: 120_000,
    allowOnly: false,
    passWithNoTests: false,
    projects: [
      // Two files at once on two cores keeps timing honest; each worker has its own emulator (test/setup/global-emulator.ts).
      { extends: true, test: { name: 'shared', include: ['test/**/*.test.ts'], exclude: RUN_ALONE, maxWorkers: 2 } },
      { extends: true, test: { name: 'alone', include: RUN_ALONE, fileParallelism: false, sequence: { groupOrder: 1 } } },
    ],
  },
});
