/**
 * TEST ONLY: the chaos replica over the unfenced slice store
 * (unfenced-slice-store.ts), the broken engine test/chaos/drill.test.ts
 * runs the drill against (`runDrill({ replicaEntry })`).
 */
import { chaosReplica } from '../../tools/chaos/chaos-replica.ts';
import { startReplica } from '../../lib/local/replica.ts';
import { unfencedSliceStore } from './unfenced-slice-store.ts';

startReplica(
  'unfenced-replica.ts',
  chaosReplica({ slices: (store, { clients, config }) => unfencedSliceStore(store, { dynamo: clients.dynamo, config }) }),
);
