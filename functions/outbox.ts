/** Lambda: the outbox dispatcher, on a per-minute schedule. Delivers the outbound requests chunks committed. */
import { createOutboxDispatcher } from '../lib/lambda/entries.ts';

export const handler = createOutboxDispatcher();
