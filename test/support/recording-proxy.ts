/**
 * An HTTP proxy in front of the emulator that records every AWS request sent
 * through it: one per caller (a function's sandbox, or the event source
 * mapping polling for it), so each call is attributed to the role it runs
 * with. DynamoDB requests go to the DynamoDB emulator, the rest (SQS and
 * EventBridge, JSON protocol) to AWS_ENDPOINT_URL.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedCall {
  /** The function whose role makes the call. */
  readonly fn: string;
  /** Who sent it: the function's code, or the event source mapping that polls for it. */
  readonly caller: string;
  /** The JSON protocol's target, e.g. `DynamoDB_20120810.PutItem`, `AmazonSQS.SendMessageBatch`, `AWSEvents.PutEvents`. */
  readonly target: string;
  readonly body: Record<string, unknown>;
  readonly status: number;
}

export interface RecordingProxy {
  readonly endpoint: string;
  close(): Promise<void>;
}

export async function startRecordingProxy(
  fn: string,
  caller: string,
  upstream: { readonly dynamo: string; readonly other: string },
  calls: RecordedCall[],
): Promise<RecordingProxy> {
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const payload = Buffer.concat(chunks);
      const target = String(request.headers['x-amz-target'] ?? '');
      const base = new URL(target.startsWith('DynamoDB_') ? upstream.dynamo : upstream.other);
      const forwarded = http.request(
        {
          host: base.hostname,
          port: base.port,
          method: request.method,
          path: request.url,
          headers: { ...request.headers, host: base.host },
        },
        (reply) => {
          calls.push({ fn, caller, target, body: parseBody(payload), status: reply.statusCode ?? 0 });
          response.writeHead(reply.statusCode ?? 502, reply.headers);
          reply.pipe(response);
        },
      );
      forwarded.on('error', (error) => {
        // The code made the call all the same: it counts for the IAM proof.
        calls.push({ fn, caller, target, body: parseBody(payload), status: 502 });
        response.writeHead(502);
        response.end(String(error));
      });
      forwarded.end(payload);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function parseBody(payload: Buffer): Record<string, unknown> {
  if (payload.length === 0) return {};
  try {
    return JSON.parse(payload.toString('utf8')) as Record<string, unknown>;
  } catch {
    return { unparsed: payload.toString('utf8').slice(0, 200) };
  }
}
