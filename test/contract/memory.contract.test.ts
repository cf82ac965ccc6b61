/** The contract suites against the in-memory stores (lib/memory). */
import { memoryFactory } from './contract-fixture.ts';
import { overlapStoreContract } from './overlap-store.contract.ts';
import { chunkStoreContract } from './chunk-store.contract.ts';
import { scheduleStoreContract } from './schedule-store.contract.ts';
import { sliceStoreContract } from './slice-store.contract.ts';
import { memoryQueueFactory, workQueueContract } from './work-queue.contract.ts';

sliceStoreContract('in memory', memoryFactory);
scheduleStoreContract('in memory', memoryFactory);
overlapStoreContract('in memory', memoryFactory);
workQueueContract('in memory', memoryQueueFactory);
chunkStoreContract('in memory', memoryFactory);
