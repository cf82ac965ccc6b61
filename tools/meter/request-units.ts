/**
 * DynamoDB request units by AWS's published rules, computed from what a
 * request sends and receives (the engine does not ask for
 * ReturnConsumedCapacity, so the bench works them out):
 *
 * - item size: attribute names plus values (strings in UTF-8 bytes, numbers
 *   about one byte per two significant digits plus one, maps and lists 3
 *   bytes plus one per element);
 * - write: one WRU per started 1 KB of the item (the larger of before and
 *   after for an update), doubled inside TransactWriteItems;
 * - read: one RRU per started 4 KB, strongly consistent; half that eventually
 *   consistent (every GSI query); double inside a transaction. A Query or
 *   Scan adds up the sizes of the items it read before rounding;
 * - index writes: a write that puts an item into a GSI, takes it out, or
 *   changes a projected attribute costs one index write of the projected
 *   size; one that changes the index's key costs two (delete + put).
 *   Index writes are counted once, also for transactional writes (DynamoDB
 *   applies them to the index outside the transaction).
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';

export type Item = Record<string, AttributeValue>;
export type ReadConsistency = 'eventual' | 'strong' | 'transactional';

const WRITE_UNIT_BYTES = 1024;
const READ_UNIT_BYTES = 4096;

export function attributeValueBytes(value: AttributeValue): number {
  if (value.S !== undefined) return Buffer.byteLength(value.S, 'utf8');
  if (value.N !== undefined) return numberBytes(value.N);
  if (value.B !== undefined) return value.B.byteLength;
  if (value.BOOL !== undefined || value.NULL !== undefined) return 1;
  if (value.SS !== undefined) return value.SS.reduce((sum, s) => sum + Buffer.byteLength(s, 'utf8'), 0);
  if (value.NS !== undefined) return value.NS.reduce((sum, n) => sum + numberBytes(n), 0);
  if (value.BS !== undefined) return value.BS.reduce((sum, b) => sum + b.byteLength, 0);
  if (value.M !== undefined) {
    return (
      3 + Object.entries(value.M).reduce((sum, [name, inner]) => sum + Buffer.byteLength(name, 'utf8') + attributeValueBytes(inner) + 1, 0)
    );
  }
  if (value.L !== undefined) return 3 + value.L.reduce((sum, inner) => sum + attributeValueBytes(inner) + 1, 0);
  return 0;
}

/** Approximate, as AWS documents it: 1 byte per two significant digits, plus 1. */
export function numberBytes(text: string): number {
  const digits = text.replace(/^-/, '').replace('.', '').replace(/^0+/, '').replace(/0+$/, '');
  return Math.ceil(Math.max(1, digits.length) / 2) + 1;
}

export function itemBytes(item: Item): number {
  return Object.entries(item).reduce((sum, [name, value]) => sum + Buffer.byteLength(name, 'utf8') + attributeValueBytes(value), 0);
}

export function writeRequestUnits(itemSizeBytes: number, options: { transactional?: boolean } = {}): number {
  const units = Math.max(1, Math.ceil(itemSizeBytes / WRITE_UNIT_BYTES));
  return options.transactional ? 2 * units : units;
}

/** Units of one read of `totalBytes` (one item, or everything a Query page read). */
export function readRequestUnits(totalBytes: number, consistency: ReadConsistency): number {
  const units = Math.max(1, Math.ceil(totalBytes / READ_UNIT_BYTES));
  if (consistency === 'eventual') return units / 2;
  if (consistency === 'transactional') return units * 2;
  return units;
}

export interface IndexShape {
  readonly indexName: string;
  readonly keyAttributes: readonly string[];
  /** undefined: ALL; otherwise the non-key attributes projected (table keys are always projected). */
  readonly projected?: readonly string[];
}

/** A put of a whole item: one index write for each index whose keys the item carries. */
export function indexWritesForPut(item: Item, index: IndexShape, tableKeys: readonly string[]): number {
  if (!index.keyAttributes.every((name) => item[name] !== undefined)) return 0;
  return writeRequestUnits(projectedBytes(item, index, tableKeys));
}

/**
 * An update naming the attributes it sets and removes. `wasIndexed`: whether
 * the item carried the index's keys before (true when unknown and the update
 * does not set them).
 */
export function indexWritesForUpdate(
  change: { readonly set: readonly string[]; readonly removed: readonly string[] },
  index: IndexShape,
  projectedSizeBytes: number,
  wasIndexed: boolean,
): number {
  const unit = writeRequestUnits(projectedSizeBytes);
  const touchesKey = index.keyAttributes.some((name) => change.set.includes(name));
  const removesKey = index.keyAttributes.some((name) => change.removed.includes(name));
  if (removesKey) return wasIndexed ? unit : 0;
  if (touchesKey) return wasIndexed ? 2 * unit : unit;
  if (!wasIndexed) return 0;
  const touched = [...change.set, ...change.removed];
  const projects = (name: string): boolean => index.projected === undefined || index.projected.includes(name);
  return touched.some(projects) ? unit : 0;
}

export function projectedBytes(item: Item, index: IndexShape, tableKeys: readonly string[]): number {
  if (index.projected === undefined) return itemBytes(item);
  const keep = new Set([...tableKeys, ...index.keyAttributes, ...index.projected]);
  return itemBytes(Object.fromEntries(Object.entries(item).filter(([name]) => keep.has(name))));
}

/** The attribute names an UpdateExpression sets (SET, ADD) and removes (REMOVE, DELETE), #names resolved. */
export function updatedAttributes(expression: string, names: Record<string, string> = {}): { set: string[]; removed: string[] } {
  const set: string[] = [];
  const removed: string[] = [];
  const clauses = expression.split(/\b(SET|REMOVE|ADD|DELETE)\b/i).map((part) => part.trim());
  for (let i = 1; i < clauses.length; i += 2) {
    const action = (clauses[i] ?? '').toUpperCase();
    const body = clauses[i + 1] ?? '';
    for (const assignment of splitTopLevel(body)) {
      const target = (assignment.split(/[=\s]/)[0] ?? '').trim();
      const name = names[target] ?? target;
      if (!name) continue;
      (action === 'REMOVE' || action === 'DELETE' ? removed : set).push(name.split(/[.[]/)[0] ?? name);
    }
  }
  return { set, removed };
}

function splitTopLevel(body: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const char of body) {
    if (char === '(') depth++;
    if (char === ')') depth--;
    if (char === ',' && depth === 0) {
      parts.push(current.trim());
      current = '';
    } else current += char;
  }
  if (current.trim()) parts.push(current.trim());
  return parts;
}
