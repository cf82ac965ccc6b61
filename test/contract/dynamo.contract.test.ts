/** The contract suites against the DynamoDB adapters, over the emulator. */
import { dynamoFactory } from './contract-fixture.ts';
import { scheduleStoreContract } from './schedule-store.contract.ts';
import { sliceStoreContract } from './slice-store.contract.ts';

sliceStoreContract('DynamoDB (emulator)', dynamoFactory);
scheduleStoreContract('DynamoDB (emulator)', dynamoFactory);
