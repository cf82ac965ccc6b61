/**
 * The SDK clients, built once per process. Endpoints come from the standard
 * `AWS_ENDPOINT_URL` and `AWS_ENDPOINT_URL_<SERVICE>` (the SDK reads them),
 * region from `AWS_REGION`.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { SQSClient } from '@aws-sdk/client-sqs';

export interface AwsClients {
  readonly dynamo: DynamoDBClient;
  readonly sqs: SQSClient;
  readonly events: EventBridgeClient;
}

type Env = Record<string, string | undefined>;

/**
 * Whether the environment gives SQS an endpoint of its own, read as the SDK
 * reads it (the shared config file's `endpoint_url` is not looked at).
 */
export function sqsEndpointConfigured(env: Env = process.env): boolean {
  if (env.AWS_IGNORE_CONFIGURED_ENDPOINT_URLS?.toLowerCase() === 'true') return false;
  return Boolean(env.AWS_ENDPOINT_URL_SQS || env.AWS_ENDPOINT_URL);
}

export function createAwsClients(region = process.env.AWS_REGION ?? 'us-east-1'): AwsClients {
  // A local worker replica runs many slices at once (Lambda would run them in separate instances): room for their heartbeats.
  const requestHandler = { httpAgent: { maxSockets: 256 }, httpsAgent: { maxSockets: 256 } };
  return {
    dynamo: new DynamoDBClient({ region, maxAttempts: 5, requestHandler }),
    // By default the SDK sends each request to its QueueUrl's host. A LocalStack queue URL names
    // sqs.<region>.localhost.localstack.cloud:4566, which does not resolve everywhere (getaddrinfo
    // ENOTFOUND); with an endpoint configured, send to that endpoint instead.
    sqs: new SQSClient({ region, maxAttempts: 5, requestHandler, useQueueUrlAsEndpoint: !sqsEndpointConfigured() }),
    events: new EventBridgeClient({ region, maxAttempts: 5, requestHandler }),
  };
}

export function destroyAwsClients(clients: AwsClients): void {
  clients.dynamo.destroy();
  clients.sqs.destroy();
  clients.events.destroy();
}
