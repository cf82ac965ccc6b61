/**
 * The emulator keeps a large table from stalling every request: the items
 * that survive a full garbage collection are frozen (gc.freeze), so the next
 * full collection walks only what came since (scripts/emulator/serve.py,
 * `_freeze_survivors_of_full_collections`). Stock, each full collection
 * walked every object of every table while all requests waited: 2.08 s at
 * 600,000 items of 15 attributes in a model of moto's items, 0.02 s with the
 * freeze; the bench's 1,000,000-schedule registration timed out on it (3 s,
 * three tries), 2026-12-05.
 */
import { describe, expect, it } from 'vitest';
import { runInPatchedMoto } from '../support/patched-moto.ts';

const SCRIPT = `
import gc, json, sys
from moto.dynamodb.models import dynamodb_backends

backend = dynamodb_backends["123456789012"]["us-east-1"]
backend.create_table("big", schema=[{"AttributeName": "pk", "KeyType": "HASH"}], throughput=None, attr=[{"AttributeName": "pk", "AttributeType": "S"}], global_indexes=None, indexes=None, streams=None, billing_mode="PAY_PER_REQUEST", sse_specification=None, tags=[], deletion_protection_enabled=None, warm_throughput=None)
ITEMS = 5000
for i in range(ITEMS):
    backend.put_item("big", {"pk": {"S": f"job-{i}"}, "schedule": {"S": "0 0 * * *"}, "shard": {"N": str(i % 8)}})
gc.collect()
frozen = gc.get_freeze_count()
print(json.dumps({"items": ITEMS, "frozenPerItem": frozen / ITEMS, "itemsStored": len(backend.get_table("big").items)}))
`;

describe('the emulator’s garbage collection', () => {
  it('freezes what survives a full collection, so a large table is not walked again by the next one', { timeout: 60_000 }, () => {
    const out = runInPatchedMoto(SCRIPT);
    const result = JSON.parse(out) as { items: number; frozenPerItem: number; itemsStored: number };
    expect(result.itemsStored).toBe(result.items);
    // Each stored item is several objects (the item, its attributes, their values): all frozen after the collection.
    expect(result.frozenPerItem).toBeGreaterThan(3);
  });
});
