import { describe, expect, it } from 'vitest';
import { isBoundedFailover } from '../../tools/chaos/takeovers.ts';
import { simulateSeed } from '../../tools/sim/simulate-seed.ts';

function slowestBoundedFailover(verdict: Awaited<ReturnType<typeof simulateSeed>>['verdict']): number {
  return Math.max(...verdict.failovers.filter(isBoundedFailover).map((failover) => failover.latencyMs));
}

/**
 * Seeds that met a defect, replayed: each failed on the commit before its fix (docs/chaos.md, "Found by the
 * simulation"). A change to the simulation's model or to the engine may move a seed off its defect; the scenario
 * stays named here with what it met.
 */
describe('simulation regressions', () => {
  it('aws seed 12: a worker`s early hide, hung and retried by the SDK after its receipt lapsed, surfaced a standby`s copy under its live holder', async () => {
    const { verdict } = await simulateSeed({ seed: 12, minutes: 10, profile: 'aws' });
    expect(verdict.healthyHoldersDisplaced).toEqual([]);
    expect(verdict.failover.count).toBeGreaterThan(10);
  }, 60_000);

  it('aws seed 3: a paused worker`s hide with its lapsed receipt hid a dead holder`s message again (a 5.7 s failover)', async () => {
    const { verdict } = await simulateSeed({ seed: 3, minutes: 10, profile: 'aws' });
    expect(slowestBoundedFailover(verdict)).toBeLessThan(5000);
    expect(verdict.healthyHoldersDisplaced).toEqual([]);
  }, 60_000);

  it('aws seed 43 (the model, not the engine): the poller stand-in timed a receive whose first try hung from that try, not the one that answered, as the local poller does; its claim disarmed the fast takeover (a 10.3 s failover)', async () => {
    const { verdict } = await simulateSeed({ seed: 43, minutes: 10, profile: 'aws' });
    expect(slowestBoundedFailover(verdict)).toBeLessThan(5000);
  }, 60_000);

  it('loaded seed 1010: an extension hung since the last heartbeat held back the next, and the message surfaced under its live holder', async () => {
    const { verdict } = await simulateSeed({ seed: 1010, minutes: 10, profile: 'loaded' });
    expect(verdict.healthyHoldersDisplaced).toEqual([]);
    expect(verdict.failover.count).toBeGreaterThan(10);
  }, 60_000);

  it('aws seed 64: an extension sent on a renewal, hung, was retried by the SDK after its worker`s pause and hid the message again under the standby (a 5.7 s failover)', async () => {
    const { verdict } = await simulateSeed({ seed: 64, minutes: 10, profile: 'aws' });
    expect(slowestBoundedFailover(verdict)).toBeLessThan(5000);
    expect(verdict.healthyHoldersDisplaced).toEqual([]);
  }, 60_000);
});
