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
 * Below the default 4 s lease: a request that never answers fails in time for
 * a renewal or the same commit to be sent again inside the lease. (A long
 * poll passes its own, longer budget: see `longPollRequestTimeoutMs`.)
 */
export const REQUEST_TIMEOUT_MS = 3000;
export const CONNECTION_TIMEOUT_MS = 1000;
/** The SDK's own tries per request (throttling, 5xx, timeouts), with its backoff. */
const SDK_MAX_ATTEMPTS = 3;

/**
 * Whether the environment gives SQS an endpoint of its own, read as the SDK
 * reads it (the shared config file's `endpoint_url` is not looked at).
 */
export function sqsEndpointConfigured(env: Env = process.env): boolean {
  if (env.AWS_IGNORE_CONFIGURED_ENDPOINT_URLS?.toLowerCase() === 'true') return false;
  return Boolean(env.AWS_ENDPOINT_URL_SQS || env.AWS_ENDPOINT_URL);
}

/** How long a client waits for one try, and how many tries it makes. The engine's defaults fit its 4 s lease. */
export interface ClientPatience {
  readonly requestTimeoutMs: number;
  readonly maxAttempts: number;
}

const ENGINE_PATIENCE: ClientPatience = { requestTimeoutMs: REQUEST_TIMEOUT_MS, maxAttempts: SDK_MAX_ATTEMPTS };

export function createAwsClients(region = process.env.AWS_REGION ?? 'us-east-1', patience: ClientPatience = ENGINE_PATIENCE): AwsClients {
  const { requestTimeoutMs, maxAttempts } = patience;
  const requestHandler = {
    // A local worker replica runs many slices at once (Lambda would run them in separate instances): room for their heartbeats.
    httpAgent: { maxSockets: 256 },
    httpsAgent: { maxSockets: 256 },
    connectionTimeout: CONNECTION_TIMEOUT_MS,
    requestTimeout: requestTimeoutMs,
    throwOnRequestTimeout: true,
  };
  return {
    dynamo: new DynamoDBClient({ region, maxAttempts, requestHandler }),
    // By default the SDK sends each request to its QueueUrl's host. A LocalStack queue URL names
    // sqs.<region>.localhost.localstack.cloud:4566, which does not resolve everywhere (getaddrinfo
    // ENOTFOUND); with an endpoint configured, send to that endpoint instead.
    sqs: new SQSClient({ region, maxAttempts, requestHandler, useQueueUrlAsEndpoint: !sqsEndpointConfigured() }),
    events: new EventBridgeClient({ region, maxAttempts, requestHandler }),
  };
}

/** The request timeout for a receive that long-polls `waitTimeSeconds`: the wait plus the usual budget. */
export function longPollRequestTimeoutMs(waitTimeSeconds: number): number {
  return waitTimeSeconds * 1000 + REQUEST_TIMEOUT_MS;
}

export function destroyAwsClients(clients: AwsClients): void {
  clients.dynamo.destroy();
  clients.sqs.destroy();
  clients.events.destroy();
}
