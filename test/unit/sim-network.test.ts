import { describe, expect, it } from 'vitest';
import { SeededRandom } from '../../tools/chaos/random.ts';
import { SLOW_LEG_MS, SimNetwork, type NetworkProfile, type RequestFaultReport } from '../../tools/sim/sim-network.ts';
import { SimProcess } from '../../tools/sim/sim-process.ts';
import { VirtualClock } from '../../tools/sim/virtual-clock.ts';

const START = Date.UTC(2026, 4, 4);

/** No faults drawn; each leg takes the next of `legs`. */
function network(legs: number[]): { time: VirtualClock; net: SimNetwork; process: SimProcess; reports: RequestFaultReport[] } {
  const time = new VirtualClock(START);
  const profile: NetworkProfile = { name: 'loaded', latencyMs: () => legs.shift() ?? 5, throttle: 0, hang: 0, lostReply: 0 };
  const reports: RequestFaultReport[] = [];
  const net = new SimNetwork(time, profile, new SeededRandom(1), (report) => reports.push(report));
  return { time, net, process: new SimProcess('worker-1.1', 'worker', time, 0), reports };
}

describe('SimNetwork: a leg in the latency tail', () => {
  it('reports a slow receive by each slice its reply names, for its leg there and its leg back', async () => {
    const { time, net, process, reports } = network([SLOW_LEG_MS, 900]);
    const reply = net.request(
      process,
      'ReceiveMessageCommand',
      () => ({}),
      () => ['a:1', 'b:2'],
      (keys) => keys,
    );
    await time.run(START + 5000);
    await expect(reply).resolves.toEqual(['a:1', 'b:2']);
    expect(reports).toEqual([
      { kind: 'slow', process: 'worker-1.1', request: 'ReceiveMessageCommand', at: START, executionKey: 'a:1' },
      { kind: 'slow', process: 'worker-1.1', request: 'ReceiveMessageCommand', at: START, executionKey: 'b:2' },
      { kind: 'slow', process: 'worker-1.1', request: 'ReceiveMessageCommand', at: START + SLOW_LEG_MS, executionKey: 'a:1' },
      { kind: 'slow', process: 'worker-1.1', request: 'ReceiveMessageCommand', at: START + SLOW_LEG_MS, executionKey: 'b:2' },
    ]);
  });

  it('reports another request`s slow leg by what it names; nothing for legs under the tail, nor once faults are off', async () => {
    const claimOnce = async (legs: number[], faultsOn = true): Promise<RequestFaultReport[]> => {
      const { time, net, process, reports } = network(legs);
      net.faultsOn = faultsOn;
      void net.request(
        process,
        'dynamodb.claim',
        () => ({ executionKey: 'a:1' }),
        () => 1,
      );
      await time.run(START + 5000);
      return reports;
    };
    expect(await claimOnce([400, 20])).toEqual([
      { kind: 'slow', process: 'worker-1.1', request: 'dynamodb.claim', at: START, executionKey: 'a:1' },
    ]);
    expect(await claimOnce([SLOW_LEG_MS - 1, 20])).toEqual([]);
    expect(await claimOnce([1500, 1500], false)).toEqual([]);
  });
});
