/** The contract suites against the in-memory stores (lib/memory). */
import { memoryFactory } from './contract-fixture.ts';
import { overlapStoreContract } from './overlap-store.contract.ts';
import { chunkStoreContract } from './chunk-store.contract.ts';
import { sliceLifecycleContract } from './slice-lifecycle.contract.ts';
import { wheelStoreContract } from './wheel-store.contract.ts';
import { sliceStoreContract } from './slice-store.contract.ts';
import { memoryQueueFactory, workQueueContract } from './work-queue.contract.ts';

sliceStoreContract('in memory', memoryFactory);
sliceLifecycleContract('in memory', memoryFactory);
wheelStoreContract('in memory', memoryFactory);
overlapStoreContract('in memory', memoryFactory);
workQueueContract('in memory', memoryQueueFactory);
chunkStoreContract('in memory', memoryFactory);
