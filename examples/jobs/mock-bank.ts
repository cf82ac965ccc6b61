/**
 * A local stand-in for the bank the settlement wires money to: an HTTP
 * server that honours `Idempotency-Key` the way a payments API does (the
 * first request with a key is accepted and booked; a later one with the same
 * key gets the same answer and books nothing) and counts accepted wires.
 *
 * Faults, to exercise the outbox's retries: `unavailableRate` answers 503
 * without booking; `dropAfterBookingRate` books the wire and then drops the
 * connection before answering, the case where the sender cannot know the
 * wire went out and must send it again under the same key.
 *
 * `wire` is the rule itself, without HTTP: the simulation's bank
 * (tools/sim/sim-settlement.ts) answers through it in virtual time.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface MockBankOptions {
  /** [0, 1): share of requests answered 503 (nothing booked). @default 0 */
  readonly unavailableRate?: number;
  /** [0, 1): share of new wires booked and then left unanswered (connection dropped). @default 0 */
  readonly dropAfterBookingRate?: number;
  /** [0, 1) @default Math.random */
  readonly random?: () => number;
}

export interface BookedWire {
  readonly idempotencyKey: string;
  readonly body: string;
  readonly fence: string | undefined;
  readonly wireId: string;
}

/** The bank's answer to one wire request; `dropped`: booked, and the connection closed before any answer. */
export type BankAnswer = { readonly status: number; readonly body: unknown } | { readonly dropped: true };

export interface WireRequest {
  readonly idempotencyKey: string | undefined;
  readonly body: string;
  readonly fence: string | undefined;
}

export class MockBank {
  /** Wires booked, by idempotency key: one each, however often it was sent. */
  readonly booked = new Map<string, BookedWire>();
  /** Requests whose key was already booked (answered with the booked wire). */
  replays = 0;
  /** Requests answered 503, or without an idempotency key (400). */
  refused = 0;
  requests = 0;
  private server?: Server;
  private readonly random: () => number;

  constructor(private readonly options: MockBankOptions = {}) {
    this.random = options.random ?? Math.random;
  }

  get url(): string {
    const address = this.server?.address() as AddressInfo | null | undefined;
    if (!address) throw new Error('mock bank is not listening');
    return `http://127.0.0.1:${address.port}`;
  }

  async start(port = 0): Promise<this> {
    this.server = createServer((request, response) => {
      void this.handle(request, response);
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    return this;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** One wire request: booked once per idempotency key, refused (400, 503) or dropped after booking as configured. */
  wire(request: WireRequest): BankAnswer {
    this.requests++;
    const key = request.idempotencyKey;
    if (key === undefined || key === '') return this.refuse(400, { error: 'Idempotency-Key required' });
    const earlier = this.booked.get(key);
    if (earlier !== undefined) {
      this.replays++;
      return { status: 200, body: { wireId: earlier.wireId, replayed: true } };
    }
    if (this.random() < (this.options.unavailableRate ?? 0)) return this.refuse(503, { error: 'try again' });
    const wire: BookedWire = { idempotencyKey: key, body: request.body, fence: request.fence, wireId: `w${this.booked.size + 1}` };
    this.booked.set(key, wire);
    if (this.random() < (this.options.dropAfterBookingRate ?? 0)) return { dropped: true };
    return { status: 201, body: { wireId: wire.wireId } };
  }

  private refuse(status: number, body: unknown): BankAnswer {
    this.refused++;
    return { status, body };
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const answer = this.wire({
      idempotencyKey: header(request, 'idempotency-key'),
      body: Buffer.concat(chunks).toString('utf8'),
      fence: header(request, 'x-cronfence-fence'),
    });
    if ('dropped' in answer) {
      request.socket.destroy();
      return;
    }
    response.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
  }
}

function header(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' ? value : undefined;
}
