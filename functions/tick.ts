/** Lambda: the per-minute EventBridge rule's target. Puts one scan request per shard. */
import { createTickHandler } from '../lib/runtime/handlers.ts';
import { createRuntime } from '../lib/runtime/wiring.ts';

export const handler = createTickHandler(createRuntime());
