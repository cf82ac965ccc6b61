/**
 * vitest globalSetup: start the local AWS emulator once for the whole run,
 * unless AWS_ENDPOINT_URL already points at one: moto, or with
 * CRONFENCE_EMULATOR=localstack LocalStack for SQS and EventBridge beside
 * moto for DynamoDB (npm run test:localstack).
 *
 * Runs in vitest's main process before any worker exists; the workers inherit
 * the AWS_ENDPOINT_URL (SQS and EventBridge) + AWS_ENDPOINT_URL_DYNAMODB
 * / AWS_REGION / AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY that
 * ensureAwsEndpoint() exports. The endpoint is also provided as
 * 'awsEndpoint' for inject(); tests read it with awsEndpoint() from
 * test/support/aws-endpoint.ts (which also declares ProvidedContext['awsEndpoint']).
 *
 * When it starts DynamoDB's moto itself and a project runs files in
 * parallel, it starts one such moto per worker slot and provides each slot's
 * AWS_ENDPOINT_URL_DYNAMODB as 'emulatorSlots'; test/setup/worker-emulator.ts
 * points each worker at its own. moto serves DynamoDB one request at a time,
 * so with one of them a file that loads it (a drill, a sweep of thousands of
 * slices) queued every other file's requests behind its own: on a slow 2-core
 * machine single requests of the file beside it passed the SDK's 3 s timeout
 * three times over (CI, 2026-12-01). SQS and EventBridge stay shared.
 */
import type { TestProject } from 'vitest/node';
import { ensureAwsEndpoint, startEmulator, type RunningEmulator } from '../../lib/local/emulator.ts';
import type { EmulatorSlot } from './worker-emulator.ts';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const log = process.env.CRONFENCE_EMULATOR_DEBUG
    ? (line: string) => {
        console.error(line);
      }
    : undefined;
  const ownDynamo = !process.env.AWS_ENDPOINT_URL && !process.env.AWS_ENDPOINT_URL_DYNAMODB;
  const aws = await ensureAwsEndpoint({ log });
  if (aws.endpoint) project.provide('awsEndpoint', aws.endpoint);
  const extra: RunningEmulator[] = [];
  // Each project runs this setup; the first starts the emulators (later ones find the endpoint set) and serves every project's workers.
  const projects = project.vitest.projects;
  const slotCount = Math.max(1, ...projects.map((each) => each.config.maxWorkers ?? 1));
  if (ownDynamo && slotCount > 1) {
    const started = await Promise.allSettled(Array.from({ length: slotCount - 1 }, () => startEmulator({ log })));
    for (const result of started) if (result.status === 'fulfilled') extra.push(result.value);
    const failed = started.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (failed) {
      await Promise.all([...extra.map((emulator) => emulator.stop()), aws.stop()]);
      throw failed.reason;
    }
    const slots: EmulatorSlot[] = [process.env.AWS_ENDPOINT_URL_DYNAMODB!, ...extra.map((emulator) => emulator.endpoint)].map(
      (endpoint) => ({ AWS_ENDPOINT_URL_DYNAMODB: endpoint }),
    );
    for (const each of projects) each.provide('emulatorSlots', slots);
  }
  return async () => {
    await Promise.all([...extra.map((emulator) => emulator.stop()), aws.stop()]);
  };
}
