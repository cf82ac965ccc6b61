/**
 * Counts every AWS request a process makes, per operation, through an SDK
 * middleware at the deserialize step (below the retry middleware, so each
 * HTTP attempt counts: what AWS bills). The dev runtime and benchmarks turn
 * these into requests per execution.
 */
import type { DeserializeMiddleware, MiddlewareStack } from '@smithy/types';
import type { AwsClients } from './clients.ts';

export type RequestCounts = Record<string, number>;

export class RequestCounter {
  readonly counts: RequestCounts = {};

  attach(clients: AwsClients): this {
    for (const [service, client] of Object.entries(clients)) {
      const count: DeserializeMiddleware<object, object> = (next, context) => async (args) => {
        const key = `${service}.${String(context.commandName ?? 'unknown').replace(/Command$/, '')}`;
        this.counts[key] = (this.counts[key] ?? 0) + 1;
        return next(args);
      };
      (client.middlewareStack as MiddlewareStack<object, object>).add(count, { step: 'deserialize', name: `cronfenceRequestCounter-${service}` });
    }
    return this;
  }
}

export function addCounts(into: RequestCounts, from: RequestCounts): RequestCounts {
  for (const [key, value] of Object.entries(from)) into[key] = (into[key] ?? 0) + value;
  return into;
}
