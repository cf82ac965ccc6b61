/**
 * The AWS endpoint that tests must talk to.
 *
 * test/setup/global-emulator.ts (vitest globalSetup) starts the local moto
 * emulator unless AWS_ENDPOINT_URL is already set, and publishes the endpoint
 * two ways: it exports AWS_ENDPOINT_URL (+ AWS_REGION and test credentials)
 * into process.env before vitest forks its workers, which inherit it (checked
 * with vitest 4.1 for the forks, threads, vmForks and vmThreads pools), and it
 * calls project.provide('awsEndpoint', ...), readable with inject().
 *
 * AWS SDK v3 clients built with no explicit endpoint already honour
 * AWS_ENDPOINT_URL; use awsEndpoint() where a URL is needed explicitly.
 */
import { inject } from 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    awsEndpoint: string;
  }
}

export function awsEndpoint(): string {
  const fromEnv = process.env.AWS_ENDPOINT_URL;
  if (fromEnv) return fromEnv;
  let provided: string | undefined;
  try {
    provided = inject('awsEndpoint');
  } catch {
    provided = undefined; // not inside a vitest worker
  }
  if (provided) return provided;
  throw new Error(
    'No AWS endpoint: set AWS_ENDPOINT_URL, or run the tests through vitest with ' +
      "globalSetup: ['test/setup/global-emulator.ts'] so the local emulator is started.",
  );
}
