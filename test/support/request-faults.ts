/**
 * A failure injected between an operation's writes, at the SDK client
 * boundary of the real stores (no seam in product code): the first request
 * that `matches` is refused before it is sent (nothing applied), as a
 * request that failed after the SDK's own tries; the ones after it pass.
 * It sits in the initialize step, above the SDK's retries, so the caller
 * sees the failure.
 */
import { createAwsClients, destroyAwsClients, type AwsClients } from '../../lib/aws/clients.ts';

export interface RequestFaults {
  readonly clients: AwsClients;
  /** Requests refused so far. */
  refused(): number;
  destroy(): void;
}

export type RequestMatch = (command: string, input: Record<string, unknown>) => boolean;

/** Write requests (not reads) that name `table`, in any of their items. */
export function writesTo(table: string): RequestMatch {
  return (command, input) =>
    /^(Put|Update|Delete|BatchWrite|TransactWrite)/.test(command) && JSON.stringify(input).includes(JSON.stringify(table));
}

/** What the refusal throws; by default a 500 after the SDK's tries. */
export type Refusal = (command: string) => Error;

const serverError: Refusal = (command) =>
  Object.assign(new Error(`${command} refused (test)`), {
    name: 'InternalServerError',
    $fault: 'server',
    $metadata: { httpStatusCode: 500 },
  });

export function refuseFirst(match: RequestMatch, refusal: Refusal = serverError): RequestFaults {
  const clients = createAwsClients();
  let refused = 0;
  clients.dynamo.middlewareStack.add(
    (next, context) => async (args) => {
      if (refused === 0 && match(context.commandName ?? '', args.input as Record<string, unknown>)) {
        refused++;
        throw refusal(context.commandName ?? '');
      }
      return next(args);
    },
    { step: 'initialize', name: 'refuseFirstMatchingRequest' },
  );
  return { clients, refused: () => refused, destroy: () => destroyAwsClients(clients) };
}
