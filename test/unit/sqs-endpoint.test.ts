/**
 * A queue URL whose host does not resolve (LocalStack's default
 * sqs.<region>.localhost.localstack.cloud:4566 on a machine without that DNS
 * name) still works when an SQS endpoint is configured: requests go to the
 * endpoint, and the queue URL itself is sent unchanged. The endpoint here is
 * a loopback HTTP server that answers SendMessage as SQS's JSON protocol does.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAwsClients, destroyAwsClients, sqsEndpointConfigured } from '../../lib/aws/clients.ts';

// .invalid never resolves (RFC 6761), wherever this runs.
const UNRESOLVABLE_QUEUE_URL = 'http://sqs.us-east-1.localstack.invalid:4566/000000000000/cronfence-work';

interface Received {
  readonly target: string | undefined;
  readonly host: string | undefined;
  readonly body: { QueueUrl?: string; MessageBody?: string };
}

let server: Server;
let endpoint: string;
const received: Received[] = [];

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    request.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
    request.on('end', () => resolve(text));
    request.on('error', reject);
  });
}

beforeAll(async () => {
  server = createServer((request, response) => {
    void readBody(request).then((text) => {
      received.push({
        target: request.headers['x-amz-target'] as string | undefined,
        host: request.headers.host,
        body: JSON.parse(text) as Received['body'],
      });
      // MD5 of "hello": the SDK checks it.
      response.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
      response.end(JSON.stringify({ MessageId: 'm-1', MD5OfMessageBody: '5d41402abc4b2a76b9719d911017c592' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

describe('sqsEndpointConfigured', () => {
  it('reads AWS_ENDPOINT_URL_SQS and AWS_ENDPOINT_URL as the SDK does', () => {
    expect(sqsEndpointConfigured({})).toBe(false);
    expect(sqsEndpointConfigured({ AWS_ENDPOINT_URL: '' })).toBe(false);
    expect(sqsEndpointConfigured({ AWS_ENDPOINT_URL: 'http://127.0.0.1:4566' })).toBe(true);
    expect(sqsEndpointConfigured({ AWS_ENDPOINT_URL_SQS: 'http://127.0.0.1:4566' })).toBe(true);
    expect(sqsEndpointConfigured({ AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:5000' })).toBe(false);
    expect(sqsEndpointConfigured({ AWS_ENDPOINT_URL: 'http://127.0.0.1:4566', AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: 'true' })).toBe(false);
  });
});

describe('SQS client with a configured endpoint', () => {
  it('sends to the endpoint, not to the queue URL host that does not resolve', async () => {
    const saved = process.env.AWS_ENDPOINT_URL_SQS;
    process.env.AWS_ENDPOINT_URL_SQS = endpoint;
    const clients = createAwsClients('us-east-1');
    try {
      const result = await clients.sqs.send(new SendMessageCommand({ QueueUrl: UNRESOLVABLE_QUEUE_URL, MessageBody: 'hello' }));
      expect(result.MessageId).toBe('m-1');
    } finally {
      destroyAwsClients(clients);
      if (saved === undefined) delete process.env.AWS_ENDPOINT_URL_SQS;
      else process.env.AWS_ENDPOINT_URL_SQS = saved;
    }
    expect(received).toHaveLength(1);
    expect(received[0]?.target).toBe('AmazonSQS.SendMessage');
    expect(received[0]?.host).toBe(new URL(endpoint).host);
    // The queue URL is the server's to interpret, as LocalStack does: sent as it was given.
    expect(received[0]?.body).toEqual({ QueueUrl: UNRESOLVABLE_QUEUE_URL, MessageBody: 'hello' });
  }, 20_000);
});
