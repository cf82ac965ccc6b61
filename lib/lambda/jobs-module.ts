/**
 * A user's jobs module: the one input that `CronScheduler({ jobs })`, the
 * generated worker Lambda, `cronfence dev --jobs`, `cronfence jobs add --jobs`
 * and `cronfence/testing` all read. What it may export:
 *
 * - `defineJob(...)` handlers, as named exports (or in `default`), or
 *   `registry`: a HandlerRegistry (then only the registry counts);
 * - `schedules` (optional): job specs (`JobSpecInput[]`) `cronfence dev` registers;
 * - `tables` (optional): the business tables its handlers write, which local
 *   runs (`cronfence dev`, `cronfence/testing`) create, each named through an
 *   environment variable the handler reads (in Lambda, set it with
 *   `workerEnvironment`).
 *
 * Shapes are checked, not classes: a module compiled against the CommonJS
 * build of cronfence hands its objects to the ESM build (and back).
 */
import type { JobSpecInput } from '../core/job-spec.ts';
import { HandlerRegistry, type JobHandler } from '../engine/define-job.ts';
import type { AttributeType, KeyDefinition, TableDefinition } from '../aws/schema.ts';
import { CronfenceError } from '../core/errors.ts';

/** A business table for local runs: created as `${prefix}-${name}`, its name put in `process.env[env]`. */
export interface LocalTable {
  /** Logical name; locally the table is `${prefix}-${name}`. */
  readonly name: string;
  /** The variable your handler reads the table name from (`process.env.PAYOUTS_TABLE`). */
  readonly env: string;
  /** A string is a string-typed key. */
  readonly partitionKey: string | KeyDefinition;
  readonly sortKey?: string | KeyDefinition;
}

export interface JobsModule {
  readonly registry: HandlerRegistry;
  readonly schedules: readonly JobSpecInput[];
  readonly tables: readonly LocalTable[];
}

/** What a jobs module's namespace looks like to cronfence (any module object is accepted). */
export type JobsModuleExports = Readonly<Record<string, unknown>>;

/** A jobs module that exports nothing usable, or something malformed. */
export class InvalidJobsModuleError extends CronfenceError {
  override name = 'InvalidJobsModuleError';
  constructor(
    readonly source: string,
    readonly reason: string,
  ) {
    super(`jobs module ${source}: ${reason}`);
  }
}

/** @throws {InvalidJobsModuleError} naming the module and the export at fault. */
export function jobsFromModule(exports: JobsModuleExports | HandlerRegistry, source = 'jobs module'): JobsModule {
  if (isRegistryLike(exports)) return { registry: copyRegistry(exports, source), schedules: [], tables: [] };
  const namespace = withDefaultObject(exports);
  const registry = isRegistryLike(namespace.registry) ? copyRegistry(namespace.registry, source) : handlersOf(namespace, source);
  if (registry.names().length === 0) {
    throw new InvalidJobsModuleError(
      source,
      'exports no handlers: export the results of defineJob(...), or a HandlerRegistry as `registry`',
    );
  }
  return { registry, schedules: schedulesOf(namespace.schedules, source), tables: tablesOf(namespace.tables, source) };
}

/** The key definition a LocalTable names. */
export function tableDefinition(table: LocalTable): TableDefinition {
  return {
    logicalName: table.name,
    partitionKey: keyOf(table.partitionKey),
    ...(table.sortKey && { sortKey: keyOf(table.sortKey) }),
    globalSecondaryIndexes: [],
  };
}

function isHandlerLike(value: unknown): value is JobHandler {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as JobHandler).name === 'string' &&
    typeof (value as JobHandler).run === 'function'
  );
}

function isRegistryLike(value: unknown): value is Pick<HandlerRegistry, 'get' | 'names'> {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as HandlerRegistry).get === 'function' &&
    typeof (value as HandlerRegistry).names === 'function'
  );
}

/** A CommonJS module seen through `import()` has its exports object as `default` too. */
function withDefaultObject(exports: JobsModuleExports): JobsModuleExports {
  const fallback = exports.default;
  if (typeof fallback !== 'object' || fallback === null || isHandlerLike(fallback) || isRegistryLike(fallback)) return exports;
  return { ...(fallback as JobsModuleExports), ...exports };
}

function copyRegistry(registry: Pick<HandlerRegistry, 'get' | 'names'>, source: string): HandlerRegistry {
  const handlers = registry.names().map((name) => registry.get(name));
  if (!handlers.every(isHandlerLike))
    throw new InvalidJobsModuleError(source, '`registry` returns something other than defineJob handlers');
  return new HandlerRegistry(handlers);
}

function handlersOf(namespace: JobsModuleExports, source: string): HandlerRegistry {
  const unique = new Set<JobHandler>();
  for (const value of Object.values(namespace)) if (isHandlerLike(value)) unique.add(value);
  try {
    return new HandlerRegistry([...unique].sort((a, b) => a.name.localeCompare(b.name)));
  } catch (error) {
    throw new InvalidJobsModuleError(source, error instanceof Error ? error.message : String(error));
  }
}

function schedulesOf(value: unknown, source: string): JobSpecInput[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'object' && item !== null && !Array.isArray(item))) {
    throw new InvalidJobsModuleError(source, '`schedules` must be an array of job specs ({ id, schedule, handler, ... })');
  }
  return value as JobSpecInput[];
}

function tablesOf(value: unknown, source: string): LocalTable[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new InvalidJobsModuleError(source, '`tables` must be an array of { name, env, partitionKey, sortKey? }');
  return value.map((table: unknown, index) => {
    const t = (typeof table === 'object' && table !== null ? table : {}) as Record<string, unknown>;
    for (const field of ['name', 'env'] as const) {
      if (typeof t[field] !== 'string' || !/^[A-Za-z0-9_.-]+$/.test(t[field])) {
        throw new InvalidJobsModuleError(
          source,
          `tables[${index}].${field} must be a name of letters, digits, "_", "." or "-", got ${JSON.stringify(t[field])}`,
        );
      }
    }
    for (const field of ['partitionKey', 'sortKey'] as const) {
      if (field === 'sortKey' && t[field] === undefined) continue;
      if (!isKey(t[field])) {
        throw new InvalidJobsModuleError(
          source,
          `tables[${index}].${field} must be an attribute name or { name, type: "S" | "N" }, got ${JSON.stringify(t[field])}`,
        );
      }
    }
    return t as unknown as LocalTable;
  });
}

function isKey(value: unknown): value is string | KeyDefinition {
  if (typeof value === 'string') return value.length > 0;
  const key = value as Partial<KeyDefinition> | null;
  return typeof key === 'object' && key !== null && typeof key.name === 'string' && (['S', 'N'] as unknown[]).includes(key.type);
}

function keyOf(key: string | KeyDefinition): KeyDefinition {
  return typeof key === 'string' ? { name: key, type: 'S' as AttributeType } : key;
}
