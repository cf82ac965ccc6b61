import { describe, expect, it } from 'vitest';
import { createAwsClients, destroyAwsClients, REQUEST_TIMEOUT_MS } from '../../lib/aws/clients.ts';

describe('createAwsClients', () => {
  it('gives the engine 3 tries of 3 s by default, and another caller (the chaos drill’s own requests) the patience it asks for', async () => {
    const engine = createAwsClients('us-east-1');
    const patient = createAwsClients('us-east-1', { requestTimeoutMs: 10_000, maxAttempts: 5 });
    try {
      expect(await engine.dynamo.config.maxAttempts()).toBe(3);
      expect(await patient.dynamo.config.maxAttempts()).toBe(5);
      expect(await patient.sqs.config.maxAttempts()).toBe(5);
      // NodeHttpHandler resolves its options lazily (`configProvider`): read the request timeout it will use.
      const requestTimeout = async (clients: typeof engine) =>
        (await (clients.dynamo.config.requestHandler as unknown as { configProvider: Promise<{ requestTimeout?: number }> }).configProvider)
          .requestTimeout;
      expect(await requestTimeout(engine)).toBe(REQUEST_TIMEOUT_MS);
      expect(await requestTimeout(patient)).toBe(10_000);
    } finally {
      destroyAwsClients(engine);
      destroyAwsClients(patient);
    }
  });
});
