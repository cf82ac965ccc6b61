/**
 * The SDK clients, built once per process. Endpoints come from the standard
 * `AWS_ENDPOINT_URL` (the SDK reads it), region from `AWS_REGION`.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { SQSClient } from '@aws-sdk/client-sqs';

export interface AwsClients {
  readonly dynamo: DynamoDBClient;
  readonly sqs: SQSClient;
  readonly events: EventBridgeClient;
}

export function createAwsClients(region = process.env.AWS_REGION ?? 'us-east-1'): AwsClients {
  // A local worker replica runs many slices at once (Lambda would run them in separate instances): room for their heartbeats.
  const requestHandler = { httpAgent: { maxSockets: 256 }, httpsAgent: { maxSockets: 256 } };
  return {
    dynamo: new DynamoDBClient({ region, maxAttempts: 5, requestHandler }),
    sqs: new SQSClient({ region, maxAttempts: 5, requestHandler }),
    events: new EventBridgeClient({ region, maxAttempts: 5, requestHandler }),
  };
}

export function destroyAwsClients(clients: AwsClients): void {
  clients.dynamo.destroy();
  clients.sqs.destroy();
  clients.events.destroy();
}
