/**
 * A bank for the tests: an HTTP server that honours `Idempotency-Key` (the
 * first request with a key books a wire, a repeat gets the same answer and
 * books nothing) and remembers what it booked.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TestBank {
  readonly url: string;
  /** Booked wires by idempotency key: the body each was booked with, and the fence it carried. */
  readonly booked: Map<string, { body: { merchant: string; amountMinor: number; reference: string }; fence: string | undefined }>;
  /** Requests whose key was already booked. */
  repeats: number;
  close(): Promise<void>;
}

export async function startTestBank(): Promise<TestBank> {
  const booked: TestBank['booked'] = new Map();
  const bank: TestBank = {
    url: '',
    booked,
    repeats: 0,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server: Server = createServer((request, response) => {
    let text = '';
    request.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
    request.on('end', () => {
      const key = request.headers['idempotency-key'];
      if (typeof key !== 'string') return void response.writeHead(400).end();
      if (booked.has(key)) bank.repeats++;
      else booked.set(key, { body: JSON.parse(text), fence: request.headers['x-cronfence-fence'] as string | undefined });
      response.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ wireId: key }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  Object.assign(bank, { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
  return bank;
}
