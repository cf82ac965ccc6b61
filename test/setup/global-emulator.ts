/**
 * vitest globalSetup: start the local AWS emulator once for the whole run,
 * unless AWS_ENDPOINT_URL already points at one: moto, or with
 * CRONFENCE_EMULATOR=localstack LocalStack for SQS and EventBridge beside
 * moto for DynamoDB (npm run test:localstack).
 *
 * Runs in vitest's main process before any worker exists; the workers inherit
 * the AWS_ENDPOINT_URL (+ AWS_ENDPOINT_URL_DYNAMODB on the LocalStack profile)
 * / AWS_REGION / AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY that
 * ensureAwsEndpoint() exports. The endpoint is also provided as
 * 'awsEndpoint' for inject(); tests read it with awsEndpoint() from
 * test/support/aws-endpoint.ts (which also declares ProvidedContext['awsEndpoint']).
 */
import type { TestProject } from 'vitest/node';
import { ensureAwsEndpoint } from '../../lib/local/emulator.ts';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const aws = await ensureAwsEndpoint({
    log: process.env.CRONFENCE_EMULATOR_DEBUG
      ? (line) => {
          console.error(line);
        }
      : undefined,
  });
  if (aws.endpoint) project.provide('awsEndpoint', aws.endpoint);
  return async () => {
    await aws.stop();
  };
}
