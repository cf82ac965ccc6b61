/**
 * vitest setupFile: a worker talks to its own slot's emulator, when
 * test/setup/global-emulator.ts started one per slot (see why there). The
 * slot is VITEST_POOL_ID (1 to maxWorkers). Setting process.env here, before
 * the test file is imported, reaches every SDK client the file builds and
 * every child process it spawns.
 */
import { inject } from 'vitest';

/** The endpoint variables one worker slot uses: its own AWS_ENDPOINT_URL_DYNAMODB. */
export type EmulatorSlot = Record<string, string>;

declare module 'vitest' {
  export interface ProvidedContext {
    emulatorSlots: EmulatorSlot[];
  }
}

const slots = inject('emulatorSlots');
if (slots?.length) {
  const poolId = Number(process.env.VITEST_POOL_ID ?? '1');
  Object.assign(process.env, slots[(poolId - 1) % slots.length]);
}
