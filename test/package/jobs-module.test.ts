/**
 * The jobs-module reader: what counts as a handler, a registry, schedules and
 * tables, and the errors for everything else (naming the module and export).
 * Shapes, not classes: a module built against the other build of cronfence
 * (ESM / CommonJS) hands over objects of other classes.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { defineJob, HandlerRegistry } from '../../lib/engine/define-job.ts';
import { describeJobsModule } from '../../lib/package/describe-jobs-module.ts';
import { InvalidJobsModuleError, jobsFromModule, tableDefinition } from '../../lib/lambda/jobs-module.ts';
import { moduleFormat } from '../../lib/local/fleet.ts';

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');
const a = defineJob('a-job', async () => {});
const b = defineJob('b-job', async () => {});

describe('jobsFromModule', () => {
  it('collects defineJob exports, once each, whatever they are exported as', () => {
    expect(jobsFromModule({ a, b, again: a, count: 3, name: 'x' }).registry.names()).toEqual(['a-job', 'b-job']);
  });

  it('reads a CommonJS module seen through import(): its exports object is also `default`', () => {
    expect(jobsFromModule({ default: { a, b } }).registry.names()).toEqual(['a-job', 'b-job']);
  });

  it('takes a `registry` export alone, by its shape (another build’s HandlerRegistry)', () => {
    const foreign = { names: () => ['a-job'], get: (name: string) => (name === 'a-job' ? a : undefined) };
    expect(jobsFromModule({ registry: foreign, b }).registry.names()).toEqual(['a-job']);
    expect(jobsFromModule(new HandlerRegistry([b])).registry.get('b-job')).toBe(b);
  });

  it('refuses a module without handlers, and two handlers of one name', () => {
    expect(() => jobsFromModule({ answer: 42 }, 'src/empty.ts')).toThrow(
      new InvalidJobsModuleError(
        'src/empty.ts',
        'exports no handlers: export the results of defineJob(...), or a HandlerRegistry as `registry`',
      ),
    );
    expect(() => jobsFromModule({ a, other: defineJob('a-job', async () => {}) }, 'm.ts')).toThrow(
      'jobs module m.ts: handler "a-job" is defined twice',
    );
  });

  it('checks `schedules` and `tables`, naming the field and value', () => {
    expect(() => jobsFromModule({ a, schedules: 'daily' }, 'm.ts')).toThrow('jobs module m.ts: `schedules` must be an array of job specs');
    expect(() => jobsFromModule({ a, tables: [{ name: 'payouts', partitionKey: 'id' }] }, 'm.ts')).toThrow(
      'jobs module m.ts: tables[0].env must be a name of letters, digits, "_", "." or "-", got undefined',
    );
    expect(() =>
      jobsFromModule({ a, tables: [{ name: 'payouts', env: 'PAYOUTS', partitionKey: { name: 'id', type: 'B' } }] }, 'm.ts'),
    ).toThrow(
      'jobs module m.ts: tables[0].partitionKey must be an attribute name or { name, type: "S" | "N" }, got {"name":"id","type":"B"}',
    );
    const jobs = jobsFromModule({
      a,
      schedules: [{ id: 'x', schedule: '* * * * *', handler: 'a-job' }],
      tables: [{ name: 'payouts', env: 'PAYOUTS', partitionKey: 'id', sortKey: { name: 'n', type: 'N' } }],
    });
    expect(jobs.schedules).toEqual([{ id: 'x', schedule: '* * * * *', handler: 'a-job' }]);
    expect(tableDefinition(jobs.tables[0]!)).toEqual({
      logicalName: 'payouts',
      partitionKey: { name: 'id', type: 'S' },
      sortKey: { name: 'n', type: 'N' },
      globalSecondaryIndexes: [],
    });
  });
});

describe('describeJobsModule (a child process under tsx, as synth and the CLI read a module)', () => {
  it('reads a TypeScript module’s handlers, schedules and tables', () => {
    const described = describeJobsModule(path.join(fixtures, 'settle-jobs.ts'));
    expect(described.handlers).toEqual(['failing', 'settle', 'slow']);
    expect(described.schedules.map((job) => job.id)).toEqual(['monthly-settlement']);
    expect(described.tables).toEqual([{ name: 'ledger-rows', env: 'LEDGER_ROWS_TABLE', partitionKey: 'rowId' }]);
  });

  it('names the module when it is missing, exports nothing, or fails to load', () => {
    expect(() => describeJobsModule(path.join(fixtures, 'missing.ts'))).toThrow(
      `jobs module ${path.join(fixtures, 'missing.ts')}: no such file`,
    );
    expect(() => describeJobsModule(path.join(fixtures, 'no-handlers.ts'))).toThrow('exports no handlers');
    expect(() => describeJobsModule(path.join(fixtures, 'throws-on-load.ts'))).toThrow(
      /throws-on-load\.ts: failed to load:\n[^]*boom at import: REPORTS_BUCKET is not set/,
    );
  });
});

describe('moduleFormat (which build of the replica cronfence dev forks for a jobs module)', () => {
  it('follows the extension, else the nearest package.json type, as Node and tsx do', () => {
    expect(moduleFormat(path.join(fixtures, 'esm-app', 'src', 'cron-jobs.ts'))).toBe('esm');
    expect(moduleFormat(path.join(fixtures, '..', '..', '..', 'examples', 'settlement-app', 'src', 'cron-jobs.ts'))).toBe('cjs');
    expect(moduleFormat(path.join(fixtures, 'esm-app', 'src', 'jobs.cts'))).toBe('cjs');
    expect(moduleFormat(path.join(fixtures, '..', '..', '..', 'examples', 'settlement-app', 'src', 'jobs.mts'))).toBe('esm');
  });
});
