/** Lambda: the per-minute EventBridge rule's target. Puts one scan request per shard. */
import { createTick } from '../lib/lambda/entries.ts';

export const handler = createTick();
