/** The contract suites against the DynamoDB and SQS adapters, over the emulator. */
import { dynamoFactory } from './contract-fixture.ts';
import { overlapStoreContract } from './overlap-store.contract.ts';
import { chunkStoreContract } from './chunk-store.contract.ts';
import { sliceLifecycleContract } from './slice-lifecycle.contract.ts';
import { wheelStoreContract } from './wheel-store.contract.ts';
import { sliceStoreContract } from './slice-store.contract.ts';
import { sqsQueueFactory, workQueueContract } from './work-queue.contract.ts';

sliceStoreContract('DynamoDB (emulator)', dynamoFactory);
sliceLifecycleContract('DynamoDB (emulator)', dynamoFactory);
wheelStoreContract('DynamoDB (emulator)', dynamoFactory);
overlapStoreContract('DynamoDB (emulator)', dynamoFactory);
workQueueContract('SQS (emulator)', sqsQueueFactory);
chunkStoreContract('DynamoDB (emulator)', dynamoFactory);
