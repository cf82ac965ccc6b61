/**
 * The handler's own writes, as the in-memory store applies them inside a
 * commit. It evaluates no DynamoDB expressions: an unconditional `put` or
 * `delete` on a table the installation declared is applied; anything else is
 * refused before the commit writes anything, naming the write and why, so a
 * test never passes on a condition nobody checked.
 */
import { CommitRejectedError, MissingResourceError } from '../core/errors.ts';
import type { AttributeMap, BusinessWrite } from '../core/ports.ts';
import type { MemoryTables } from './memory-tables.ts';

/** Checks every write first (a commit is all or nothing); returns what applies them. */
export function planBusinessWrites(tables: MemoryTables, executionKey: string, writes: readonly BusinessWrite[]): () => void {
  const steps = writes.map((write, index) => planOne(tables, executionKey, write, index));
  return () => {
    for (const step of steps) step();
  };
}

function planOne(tables: MemoryTables, executionKey: string, write: BusinessWrite, index: number): () => void {
  const refuse = (detail: string): never => {
    throw new CommitRejectedError(executionKey, 'UnsupportedInMemory', `write #${index}: ${detail}`);
  };
  if ('put' in write) {
    const { tableName, item, conditionExpression } = write.put;
    const table = tableOf(tables, tableName);
    if (conditionExpression !== undefined)
      refuse(`the in-memory store does not evaluate conditionExpression ${JSON.stringify(conditionExpression)}`);
    const id = keyOf(tables, executionKey, tableName, item, index);
    const copy = structuredClone(item);
    return () => table.set(id, copy);
  }
  if ('delete' in write) {
    const { tableName, key, conditionExpression } = write.delete;
    const table = tableOf(tables, tableName);
    if (conditionExpression !== undefined)
      refuse(`the in-memory store does not evaluate conditionExpression ${JSON.stringify(conditionExpression)}`);
    const id = keyOf(tables, executionKey, tableName, key, index);
    return () => table.delete(id);
  }
  const kind = 'update' in write ? 'update' : 'conditionCheck';
  return refuse(`the in-memory store applies only unconditional put and delete, not ${kind}`);
}

function tableOf(tables: MemoryTables, tableName: string): Map<string, Record<string, unknown>> {
  const table = tables.business.get(tableName);
  if (table === undefined) throw new MissingResourceError('table', tableName, { usersOwn: true });
  return table;
}

function keyOf(tables: MemoryTables, executionKey: string, tableName: string, item: AttributeMap, index: number): string {
  const names = tables.businessKeys[tableName] ?? [];
  const missing = names.find((name) => item[name] === undefined);
  if (missing !== undefined) {
    throw new CommitRejectedError(
      executionKey,
      'ValidationException',
      `write #${index} to ${tableName}: missing key attribute ${JSON.stringify(missing)}`,
    );
  }
  return JSON.stringify(names.map((name) => item[name]));
}
