/**
 * One configuration module: docs/configuration.md lists exactly the
 * variables lib/aws/config.ts declares, with their defaults, and no product
 * file but that module reads a CRONFENCE_* variable from an environment.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CONFIGURATION_TABLE, loadConfig, localConfig } from '../../lib/aws/config.ts';
import { InvalidJobSpecError } from '../../lib/core/errors.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CONFIG_MODULE = 'lib/aws/config.ts';

function productFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = `${dir}/${entry.name}`;
    return entry.isDirectory() ? productFiles(relative) : relative.endsWith('.ts') ? [relative] : [];
  });
}

describe('configuration', () => {
  const doc = readFileSync(path.join(ROOT, 'docs/configuration.md'), 'utf8');

  it('docs/configuration.md has one row per declared variable, with its default and description', () => {
    for (const row of CONFIGURATION_TABLE) expect(doc).toContain(`| \`${row.name}\` | ${row.default} | ${row.description} |`);
    const documented = [...doc.matchAll(/^\| `(CRONFENCE_[A-Z_]+)` \|/gm)].map((match) => match[1]);
    expect(documented).toEqual([...CONFIGURATION_TABLE.map((row) => row.name), 'CRONFENCE_STACK_NAME', 'CRONFENCE_LOCALSTACK_PYTHON']);
  });

  it('no product file but the config module reads a CRONFENCE_* variable', () => {
    const readers = [...productFiles('lib'), ...productFiles('functions')]
      .filter((file) => file !== CONFIG_MODULE)
      .filter((file) => /env(\.|\[\s*['"`])CRONFENCE_/.test(readFileSync(path.join(ROOT, file), 'utf8')));
    expect(readers).toEqual([]);
  });

  it('parses defaults, values and queue URLs', () => {
    const config = loadConfig({
      CRONFENCE_PREFIX: 'p',
      CRONFENCE_SHARDS: '4',
      CRONFENCE_SCAN_BUDGET_MS: '',
      CRONFENCE_WORK_QUEUE_URL: 'http://q/work',
    });
    expect(config).toMatchObject({
      jobsTable: 'p-jobs',
      deadLetterQueueName: 'p-dlq',
      shardCount: 4,
      scanBudgetMs: 20_000,
      queueUrls: { work: 'http://q/work' },
    });
    expect(localConfig({})).toEqual({ emulator: undefined, stateDir: '.cronfence', workerBatches: 16, chaos: undefined });
  });

  it('refuses a value out of range, naming the variable and the range', () => {
    expect(() => loadConfig({ CRONFENCE_SHARDS: '0' })).toThrow(InvalidJobSpecError);
    expect(() => loadConfig({ CRONFENCE_LOOKAHEAD_MS: 'soon' })).toThrow(
      'invalid CRONFENCE_LOOKAHEAD_MS "soon": must be a whole number from 10000 to 3600000',
    );
    expect(() => localConfig({ CRONFENCE_WORKER_BATCHES: '1.5' })).toThrow('CRONFENCE_WORKER_BATCHES');
  });
});
