/**
 * One bad job harms no other, against the emulator: the real Scanner over
 * the DynamoDB and SQS adapters (its SQS client refusing what SQS refuses),
 * with bad rows written straight into the jobs table beside good jobs. Every
 * good occurrence is sent, the cursor moves past the bad jobs' buckets, and
 * each bad job is set aside on the wheel with its reason.
 */
import { UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../lib/core/clock.ts';
import { isSetAsideNow } from '../../lib/core/set-aside.ts';
import { occurrencesBetween } from '../../lib/core/schedule.ts';
import { scanHorizon } from '../../lib/core/wheel.ts';
import { Scanner } from '../../lib/engine/scanner.ts';
import { verifyInstallation } from '../../lib/aws/verify-installation.ts';
import { createTestInstallation, type TestInstallation } from '../support/harness.ts';
import { RecordingQueue } from '../support/recording-queue.ts';
import { refuseWhatSqsRefuses } from '../support/sqs-refusals.ts';

const LOOKAHEAD_MS = 30_000;
const T0 = Math.ceil(Date.now() / 60_000) * 60_000;
const GOOD = [
  { id: 'good-10s', schedule: '*/10 * * * * *' },
  { id: 'good-3s', schedule: '*/3 * * * * *' },
];
/** Each bad row: an update of a job put as a good one. */
const BAD: Record<
  string,
  { update: string; names?: Record<string, string>; values?: Record<string, { S: string } | { M: Record<string, { S: string }> }> }
> = {
  'bad-cron': { update: 'SET #schedule = :bad', names: { '#schedule': 'schedule' }, values: { ':bad': { S: 'every tuesday-ish' } } },
  'bad-zone': { update: 'SET #zone = :bad', names: { '#zone': 'timeZone' }, values: { ':bad': { S: 'Mars/Olympus_Mons' } } },
  'bad-enabled': { update: 'SET #enabled = :bad', names: { '#enabled': 'enabled' }, values: { ':bad': { S: 'yes' } } },
  'bad-policies': { update: 'REMOVE #policies', names: { '#policies': 'policies' } },
};

let installation: TestInstallation;
const clock = new ManualClock(T0);

beforeAll(async () => {
  installation = await createTestInstallation({ clock, env: { CRONFENCE_LOOKAHEAD_MS: String(LOOKAHEAD_MS) } });
  refuseWhatSqsRefuses(installation.runtime.clients.sqs);
});

afterAll(() => installation?.destroy());

async function corrupt(id: string): Promise<void> {
  const { update, names, values } = BAD[id]!;
  await installation.runtime.clients.dynamo.send(
    new UpdateItemCommand({
      TableName: installation.runtime.config.jobsTable,
      Key: { jobId: { S: id } },
      UpdateExpression: update,
      ...(names && { ExpressionAttributeNames: names }),
      ...(values && { ExpressionAttributeValues: values }),
    }),
  );
}

describe('a scan over the emulator with bad rows beside good jobs', () => {
  it('sends every good occurrence, moves its cursor and sets each bad job aside with its reason', async () => {
    const { runtime } = installation;
    const repository = runtime.jobs();
    for (const job of GOOD) await repository.put({ ...job, handler: 'h' });
    for (const id of Object.keys(BAD)) await repository.put({ id, schedule: '*/5 * * * * *', handler: 'h' });
    const queue = new RecordingQueue(runtime.workQueue);
    const scanner = new Scanner({
      scannerId: 'scanner',
      wheel: runtime.wheel,
      jobs: runtime.jobReader,
      slices: runtime.slices,
      queue,
      events: runtime.events,
      clock,
      lookaheadMs: LOOKAHEAD_MS,
      sweepGraceMs: runtime.config.sweepGraceMs,
    });
    // Two of them before the first scan (taken up from the inbox), two once on the wheel.
    await corrupt('bad-cron');
    await corrupt('bad-enabled');
    const reports = [await scanner.scanShard(0)];
    await corrupt('bad-zone');
    await corrupt('bad-policies');
    for (let second = 5; second <= 40; second += 5) {
      clock.set(T0 + second * 1000);
      reports.push(await scanner.scanShard(0));
    }

    expect(reports.map((report) => report.errors)).toEqual(reports.map(() => 0));
    expect(reports.every((report) => !report.incomplete)).toBe(true);
    const horizon = scanHorizon(clock.now(), LOOKAHEAD_MS);
    expect((await runtime.wheel.readCursor(0))?.scannedThrough).toBe(horizon);
    const sent = new Set(queue.sent.map((message) => `${message.jobId}@${message.scheduledAt}`));
    for (const job of GOOD) {
      const expected = occurrencesBetween({ cron: job.schedule, timeZone: 'UTC' }, T0, horizon, 1000);
      expect(
        expected.filter((at) => !sent.has(`${job.id}@${at}`)),
        job.id,
      ).toEqual([]);
    }

    const aside = await runtime.wheel.setAsideJobs(0);
    expect(aside.map((record) => record.jobId).sort()).toEqual(Object.keys(BAD).sort());
    for (const record of aside) expect(isSetAsideNow(record, await repository.get(record.jobId))).toBe(true);
    const reasons = Object.fromEntries(aside.map((record) => [record.jobId, record.reason]));
    expect(reasons['bad-cron']).toMatch(/every tuesday-ish/);
    expect(reasons['bad-zone']).toMatch(/Mars\/Olympus_Mons/);
    expect(reasons['bad-enabled']).toMatch(/enabled/);
    expect(
      installation.events
        .ofType('set_aside')
        .map((event) => event.jobId)
        .sort(),
    ).toEqual(Object.keys(BAD).sort());
    // The two set aside once on the wheel sent nothing past the bucket they were met in.
    const lastBadSend = Math.max(
      ...queue.sent
        .filter((message) => message.jobId === 'bad-zone' || message.jobId === 'bad-policies')
        .map((message) => message.scheduledAt),
    );
    expect(lastBadSend).toBeLessThan(T0 + LOOKAHEAD_MS + 5000);

    // verify names every job set aside, with the scan's reason, whether or not its row still reads as a job.
    const audit = await verifyInstallation({ dynamo: runtime.clients.dynamo, config: runtime.config, clock }, { since: T0 });
    const setAside = audit.violations.filter((violation) => violation.kind === 'set_aside');
    expect(setAside.map((violation) => violation.jobId).sort()).toEqual(Object.keys(BAD).sort());
    expect(setAside.find((violation) => violation.jobId === 'bad-enabled')?.detail).toMatch(
      /^set aside in generation 1 by scanner at .*enabled/,
    );
    expect(audit.exitCode).toBe(1);
  });
});
