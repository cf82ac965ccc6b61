/**
 * Every AWS client gives up on a server that accepts a connection and never
 * answers, in time for a retry inside a lease (it used to wait forever). The
 * server is a loopback socket that reads and never replies.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { ListQueuesCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAwsClients, destroyAwsClients, REQUEST_TIMEOUT_MS } from '../../lib/aws/clients.ts';

let server: Server;
const sockets: Socket[] = [];
let endpoint: string;
const saved = { ...process.env };

beforeAll(async () => {
  server = createServer((socket) => void sockets.push(socket.on('data', () => {})));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  endpoint = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});

afterAll(async () => {
  process.env = saved;
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => server.close(resolve));
});

describe('client timeouts', () => {
  it('a DynamoDB and an SQS request to a server that never answers fail within the SDK tries of the request timeout', async () => {
    process.env.AWS_ENDPOINT_URL = endpoint;
    // A per-service endpoint (the LocalStack profile's split) would win over the general one.
    delete process.env.AWS_ENDPOINT_URL_DYNAMODB;
    delete process.env.AWS_ENDPOINT_URL_SQS;
    const clients = createAwsClients();
    try {
      for (const send of [() => clients.dynamo.send(new ListTablesCommand({})), () => clients.sqs.send(new ListQueuesCommand({}))]) {
        const started = Date.now();
        const error = await send().catch((e: unknown) => e);
        const elapsed = Date.now() - started;
        expect(error).toBeInstanceOf(Error);
        expect((error as Error).name).toBe('TimeoutError');
        // 3 tries of 3 s plus the SDK's backoff; without a timeout it never returns.
        expect(elapsed).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS);
        expect(elapsed).toBeLessThan(4 * REQUEST_TIMEOUT_MS);
      }
    } finally {
      destroyAwsClients(clients);
      process.env = { ...saved };
    }
  }, 40_000);
});
