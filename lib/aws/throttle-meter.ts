/**
 * Tells a listener about every AWS request try refused as throttled, through
 * an SDK middleware inside the retry loop (finalizeRequest step, after the
 * retry middleware), so the tries the SDK retried by itself count too: the
 * pressure an operator wants to see, not only the requests that failed for
 * good. Like request-counter.ts, it only observes: errors pass unchanged.
 */
import { isThrottlingError } from '@smithy/core/retry';
import type { FinalizeRequestMiddleware, MiddlewareStack } from '@smithy/types';
import type { AwsClients } from './clients.ts';

export type ThrottleListener = (service: keyof AwsClients, operation: string) => void;

export function onThrottledRequest(clients: AwsClients, listener: ThrottleListener): void {
  for (const [service, client] of Object.entries(clients) as [keyof AwsClients, AwsClients[keyof AwsClients]][]) {
    const observe: FinalizeRequestMiddleware<object, object> = (next, context) => async (args) => {
      try {
        return await next(args);
      } catch (error) {
        if (error instanceof Error && isThrottlingError(error as Parameters<typeof isThrottlingError>[0])) {
          listener(service, String(context.commandName ?? 'unknown').replace(/Command$/, ''));
        }
        throw error;
      }
    };
    (client.middlewareStack as MiddlewareStack<object, object>).add(observe, {
      step: 'finalizeRequest',
      priority: 'low',
      name: `cronfenceThrottleMeter-${service}`,
    });
  }
}
