/**
 * The emulator answers a Query on a sort key range from that range, as
 * DynamoDB does, not from the whole partition (scripts/emulator/serve.py,
 * `_partition_queries`). Stock moto tests every item of the partition against
 * the condition: at 1,000,000 schedules a shard's wheel partition is about
 * 16,000 packs, a bucket query took about 110 ms, and the density level's
 * scans timed out (2026-12-05). The answers stay exactly moto's, checked here
 * against a brute-force reading of each condition, after keys are added and
 * removed between queries.
 */
import { describe, expect, it } from 'vitest';
import { runInPatchedMoto } from '../support/patched-moto.ts';

const SCRIPT = `
import json, random
from moto.dynamodb.models import dynamodb_backends
from moto.dynamodb.models.dynamo_type import DynamoType
from moto.dynamodb.parsing.key_condition_expression import parse_expression

backend = dynamodb_backends["123456789012"]["us-east-1"]
backend.create_table("wheel", schema=[{"AttributeName": "shard", "KeyType": "HASH"}, {"AttributeName": "entry", "KeyType": "RANGE"}], throughput=None, attr=[{"AttributeName": "shard", "AttributeType": "N"}, {"AttributeName": "entry", "AttributeType": "S"}], global_indexes=None, indexes=None, streams=None, billing_mode="PAY_PER_REQUEST", sse_specification=None, tags=[], deletion_protection_enabled=None, warm_throughput=None)
PARTITION = 8000
keys = set()
def put(shard, entry):
    backend.put_item("wheel", {"shard": {"N": str(shard)}, "entry": {"S": entry}, "jobs": {"S": "[]"}})
    if shard == 3: keys.add(entry)
for i in range(PARTITION):
    put(3, f"{i // 8:015d}#t.{i % 8}")
for i in range(50):
    put(4, f"{i:015d}#other")

compares = 0
stock_compare = DynamoType.compare
def counted(self, *args):
    global compares
    compares += 1
    return stock_compare(self, *args)
DynamoType.compare = counted

CONDITIONS = {
    "=": lambda k, a: k == a[0], "<": lambda k, a: k < a[0], "<=": lambda k, a: k <= a[0], ">": lambda k, a: k > a[0], ">=": lambda k, a: k >= a[0],
    "BETWEEN": lambda k, a: a[0] <= k <= a[1], "begins_with": lambda k, a: k.startswith(a[0]),
}
def query(comparison, bounds, limit, forward):
    values = {":s": {"N": "3"}, **{f":v{i}": {"S": b} for i, b in enumerate(bounds)}}
    expr = "shard = :s AND " + ("begins_with(entry, :v0)" if comparison == "begins_with" else "entry BETWEEN :v0 AND :v1" if comparison == "BETWEEN" else f"entry {comparison} :v0")
    hashes, ranges, _ = parse_expression(key_condition_expression=expr, expression_attribute_names={}, expression_attribute_values=values, schema=backend.get_schema(table_name="wheel", index_name=None))
    items, _, _ = backend.query("wheel", hashes[0][1], ranges[-1][1], ranges[-1][2], limit, None, forward, None, index_name=None, consistent_read=True, expr_names={}, expr_values=values, filter_expression=None, hash_key_conditions=hashes, range_key_conditions=ranges)
    return [item.range_key.value for item in items]
def expected(comparison, bounds, limit, forward):
    found = sorted((k for k in keys if CONDITIONS[comparison](k, bounds)), reverse=not forward)
    return found[:limit] if limit else found

rng = random.Random(5)
checked, wrong, most_compares = 0, [], 0
for round in range(3):
    for comparison in CONDITIONS:
        for _ in range(8):
            bucket = rng.randrange(PARTITION // 8 + 5)
            bounds = [f"{bucket:015d}#t.{rng.randrange(9)}"] if comparison != "BETWEEN" else [f"{bucket:015d}", f"{bucket + rng.randrange(3):015d}~"]
            if comparison == "begins_with": bounds = [f"{bucket:015d}#"]
            if comparison in ("<", "<=") : bounds = [f"{rng.randrange(4):015d}#t.{rng.randrange(9)}"]
            if comparison in (">", ">="): bounds = [f"{PARTITION // 8 - rng.randrange(4):015d}#t.{rng.randrange(9)}"]
            limit, forward = rng.choice([None, 1, 5]), rng.choice([True, False])
            compares = 0
            got = query(comparison, bounds, limit, forward)
            most_compares = max(most_compares, compares)
            checked += 1
            if got != expected(comparison, bounds, limit, forward): wrong.append([comparison, bounds, limit, forward, got[:3]])
    # Keys added and removed between queries: the next queries see them.
    for _ in range(40):
        put(3, f"{rng.randrange(PARTITION // 8):015d}#n.{rng.randrange(10**6)}")
    for entry in rng.sample(sorted(keys), 40):
        backend.delete_item("wheel", {"shard": {"N": "3"}, "entry": {"S": entry}})
        keys.discard(entry)
print(json.dumps({"checked": checked, "wrong": wrong[:5], "partition": len(keys), "mostComparesPerQuery": most_compares}))
`;

describe('the emulator’s range queries', () => {
  it('reads only the sort key range a Query asks for, and answers exactly as before', { timeout: 60_000 }, () => {
    const result = JSON.parse(runInPatchedMoto(SCRIPT)) as {
      checked: number;
      wrong: unknown[];
      partition: number;
      mostComparesPerQuery: number;
    };
    expect(result.checked).toBe(168);
    expect(result.wrong).toEqual([]);
    // A range of a few dozen keys out of about 8,000: stock moto tests every one.
    expect(result.partition).toBeGreaterThan(7900);
    expect(result.mostComparesPerQuery).toBeLessThan(100);
  });
});
