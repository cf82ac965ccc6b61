/** Lambda: the scan queue's consumer (SQS event source, ReportBatchItemFailures). */
import { createScanner } from '../lib/lambda/entries.ts';

export const handler = createScanner();
