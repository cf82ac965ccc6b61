/**
 * The bench's settlement row: one 1,200-merchant settlement (the example job,
 * examples/jobs/settlement.ts) run by one worker in this process, its
 * wires delivered by an outbox dispatcher to a local mock bank, metered with
 * the request meter (AWS's published unit rules): write and read units per
 * payout, split into the chunked commits (rows, outbox items and their index
 * entries, chunk records, fence checks, the final commit) and the deliveries
 * (take + record, each moving the outbox index entry); dollars per million
 * payouts at public prices; and how long the 1,200 payouts took here, beside
 * the emulator's ceiling measured in the same run.
 *
 * test/integration/settlement-cost.test.ts measures the same with its own
 * harness; `settlementUnits` is the arithmetic both can share.
 */
import { CreateTableCommand, waitUntilTableExists } from '@aws-sdk/client-dynamodb';
import { DeleteMessageCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { bootstrap, createTableInput } from '../../lib/aws/bootstrap.ts';
import { destroyAwsClients } from '../../lib/aws/clients.ts';
import { queueUrl } from '../../lib/aws/sqs/queue-urls.ts';
import { OUTBOX_SHARDS } from '../../lib/core/chunks.ts';
import { systemClock } from '../../lib/core/clock.ts';
import { HandlerRegistry } from '../../lib/engine/define-job.ts';
import { OutboxDispatcher } from '../../lib/engine/outbox-dispatcher.ts';
import { PAYOUTS_TABLE } from '../../examples/jobs/examples.ts';
import { merchantSettlement, SETTLEMENT_MERCHANTS } from '../../examples/jobs/settlement.ts';
import { createRuntime, type Runtime } from '../../lib/lambda/wiring.ts';
import { MockBank } from '../../examples/jobs/mock-bank.ts';
import { RequestMeter, sumValues, type MeterSnapshot } from '../meter/request-meter.ts';
import { round } from './density.ts';
import { PRICE_TABLE } from './price-table.ts';

export interface SettlementUnits {
  /** Base-table and index write units. */
  readonly write: number;
  readonly read: number;
}

export interface SettlementCost {
  readonly merchants: number;
  readonly chunks: number;
  /** Per payout: the chunked commits (and the final commit's share). */
  readonly commitPerPayout: SettlementUnits;
  /** Per payout: the outbox deliveries. */
  readonly deliveryPerPayout: SettlementUnits;
  readonly writeUnitsPerPayout: number;
  readonly readUnitsPerPayout: number;
  readonly transactions: number;
  readonly transactItems: number;
  /** DynamoDB write and read units of a million payouts at PRICE_TABLE's prices. */
  readonly usdPerMillionPayouts: number;
  /** The claim to the slice SUCCEEDED: 1,200 rows and 1,200 outbox items committed. */
  readonly commitSeconds: number;
  /** The outbox dispatcher's delivery of the 1,200 wires. */
  readonly wireSeconds: number;
  readonly acceptedWires: number;
  /** DynamoDB write requests of the whole settlement (a transaction counted by its items). */
  readonly itemWrites: number;
}

/** The bench report's row: the measurement, and 1,200 payouts' time here beside the emulator's ceiling. */
export interface SettlementRow extends SettlementCost {
  /** Commit + wires, scaled to 1,200 payouts when fewer ran (the quick bench). */
  readonly secondsFor1200: number;
  /** The same item writes at the ceiling's plain-write rate: what the emulator could do at best. */
  readonly ceilingSecondsFor1200: number;
}

export function settlementRow(cost: SettlementCost, ceilingWritesPerSecond: number): SettlementRow {
  const scale = SETTLEMENT_MERCHANTS / Math.max(1, cost.merchants);
  return {
    ...cost,
    secondsFor1200: round((cost.commitSeconds + cost.wireSeconds) * scale, 1),
    ceilingSecondsFor1200: round((cost.itemWrites * scale) / Math.max(0.001, ceilingWritesPerSecond), 1),
  };
}

/** Write units (base table + indexes) and read units of a meter snapshot: the settlement-cost test's arithmetic. */
export function settlementUnits(snapshot: MeterSnapshot): SettlementUnits {
  return { write: sumValues(snapshot.writeUnits) + sumValues(snapshot.indexWriteUnits), read: sumValues(snapshot.readUnits) };
}

/** Dollars per million payouts from units per payout. */
export function usdPerMillionPayouts(writeUnitsPerPayout: number, readUnitsPerPayout: number): number {
  return round(
    writeUnitsPerPayout * PRICE_TABLE.dynamoWriteRequestUnitPerMillion + readUnitsPerPayout * PRICE_TABLE.dynamoReadRequestUnitPerMillion,
    2,
  );
}

const POLICIES = { timeoutMs: 300_000, leaseMs: 30_000, heartbeatMs: 5000 };

/**
 * Runs and meters one settlement on its own prefix (the one `env` names).
 * A long lease: this measures cost, not failover (on a loaded emulator a 4 s
 * lease can lapse while 30 large transactions queue).
 */
export async function measureSettlement(env: NodeJS.ProcessEnv, merchants = SETTLEMENT_MERCHANTS): Promise<SettlementCost> {
  const runtime = createRuntime({ env });
  const payoutsTable = `${runtime.config.prefix}-${PAYOUTS_TABLE.logicalName}`;
  const bank = await new MockBank().start();
  try {
    await bootstrap(runtime.clients, runtime.config);
    await runtime.clients.dynamo.send(new CreateTableCommand(createTableInput(payoutsTable, PAYOUTS_TABLE)));
    await waitUntilTableExists({ client: runtime.clients.dynamo, maxWaitTime: 60 }, { TableName: payoutsTable });
    await runtime.jobs([merchantSettlement.name]).put({
      id: 'bench-settlement',
      schedule: '0 0 6 1 * *',
      timeZone: 'Asia/Kolkata',
      handler: merchantSettlement.name,
      // The handler runs in this process: its table by name in the payload (this process's environment names none).
      payload: { merchants, bankUrl: bank.url, payoutsTable },
      policies: POLICIES,
    });
    const { executionKey } = await runtime.operator().trigger('bench-settlement', { requestId: 'bench', actor: 'cronfence bench' });
    // From the claim on (the trigger's own slot write is the operator's, not the settlement's).
    const meter = new RequestMeter(runtime.config).attach(runtime.clients);
    const commitStarted = performance.now();
    await settleOne(runtime);
    const commitSeconds = (performance.now() - commitStarted) / 1000;
    const commit = meter.snapshot();
    meter.reset();
    const wireStarted = performance.now();
    const dispatcher = new OutboxDispatcher({ store: runtime.outbox, clock: systemClock, concurrency: 8 });
    while ((await runtime.outbox.list(executionKey)).some((item) => item.status === 'PENDING')) {
      for (let shard = 0; shard < OUTBOX_SHARDS; shard++) await dispatcher.dispatchDue(200, shard);
    }
    const wireSeconds = (performance.now() - wireStarted) / 1000;
    return costOf(commit, meter.snapshot(), { merchants, commitSeconds, wireSeconds, acceptedWires: bank.booked.size });
  } finally {
    await bank.close();
    destroyAwsClients(runtime.clients);
  }
}

/** Receives the settlement's message and runs it to SUCCEEDED (a message whose run stood down comes back). */
async function settleOne(runtime: Runtime): Promise<void> {
  const url = await queueUrl(runtime.clients.sqs, runtime.config.workQueueName);
  const worker = runtime.worker('bench-settlement', new HandlerRegistry([merchantSettlement]));
  const deadline = Date.now() + POLICIES.timeoutMs;
  while (Date.now() < deadline) {
    const { Messages = [] } = await runtime.clients.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: url,
        MaxNumberOfMessages: 1,
        WaitTimeSeconds: 5,
        MessageSystemAttributeNames: ['ApproximateReceiveCount'],
      }),
    );
    for (const message of Messages) {
      const disposition = await worker.process({
        body: message.Body ?? '',
        receiptHandle: message.ReceiptHandle ?? '',
        messageId: message.MessageId,
        receiveCount: Number(message.Attributes?.ApproximateReceiveCount ?? 1),
      });
      if (disposition === 'delete') {
        await runtime.clients.sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: message.ReceiptHandle }));
        return;
      }
    }
  }
  throw new Error('the bench settlement did not succeed within its timeout');
}

function costOf(
  commit: MeterSnapshot,
  delivery: MeterSnapshot,
  timing: { merchants: number; commitSeconds: number; wireSeconds: number; acceptedWires: number },
): SettlementCost {
  const per = (n: number): number => round(n / timing.merchants, 3);
  const c = settlementUnits(commit);
  const d = settlementUnits(delivery);
  const writeUnitsPerPayout = per(c.write + d.write);
  const readUnitsPerPayout = per(c.read + d.read);
  const plainWrites = (snapshot: MeterSnapshot): number => snapshot.kinds.dynamoWrite + snapshot.kinds.heartbeat;
  return {
    merchants: timing.merchants,
    chunks: Math.max(0, commit.kinds.dynamoTransactWrite - 1),
    commitPerPayout: { write: per(c.write), read: per(c.read) },
    deliveryPerPayout: { write: per(d.write), read: per(d.read) },
    writeUnitsPerPayout,
    readUnitsPerPayout,
    transactions: commit.kinds.dynamoTransactWrite,
    transactItems: commit.transactItems,
    usdPerMillionPayouts: usdPerMillionPayouts(writeUnitsPerPayout, readUnitsPerPayout),
    commitSeconds: round(timing.commitSeconds, 2),
    wireSeconds: round(timing.wireSeconds, 2),
    acceptedWires: timing.acceptedWires,
    itemWrites: commit.transactItems + plainWrites(commit) + plainWrites(delivery) + delivery.kinds.dynamoTransactWrite,
  };
}
