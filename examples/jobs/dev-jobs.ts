/**
 * The example jobs as the repository's `npm start` runs them (the tools'
 * `cronfence dev` without `--jobs`, tools/dev): the payouts table, a local
 * mock bank the example settlement wires its 1,200 payouts to through the
 * outbox, and the example jobs, the settlements given the bank's URL.
 */
import type { StoredJob } from '../../lib/core/job-record.ts';
import type { Runtime } from '../../lib/lambda/wiring.ts';
import { createBusinessTable, putAll, type DevJobs } from '../../lib/local/dev-setup.ts';
import { EXAMPLE_JOBS, merchantSettlement, PAYOUTS_TABLE, payoutsTableName } from './examples.ts';
import { registry } from './index.ts';
import { MockBank } from './mock-bank.ts';

export function exampleDevJobs(): DevJobs {
  let bank: MockBank | undefined;
  return {
    async prepare(runtime) {
      await createBusinessTable(runtime, payoutsTableName(runtime.config.prefix), PAYOUTS_TABLE);
      bank = await new MockBank().start();
      return {};
    },
    async register(runtime, say) {
      const registered = await registerExampleJobs(runtime, bank?.url);
      if (bank) say(`the settlements wire their payouts through the outbox to a local mock bank at ${bank.url}`);
      return registered;
    },
    async stop() {
      if (!bank) return undefined;
      await bank.close();
      return `mock bank: ${bank.booked.size} wires accepted, ${bank.replays} repeats answered by idempotency key`;
    },
  };
}

/** Registers (or re-registers) the example jobs; with `bankUrl`, the settlements wire their payouts there. */
export async function registerExampleJobs(runtime: Runtime, bankUrl?: string): Promise<StoredJob[]> {
  const specs = EXAMPLE_JOBS.map((spec) =>
    bankUrl !== undefined && spec.handler === merchantSettlement.name ? { ...spec, payload: { ...spec.payload, bankUrl } } : spec,
  );
  return putAll(runtime, specs, registry.names());
}
