/**
 * What happened between a slice's holder and the standby that claimed it
 * next: failover latency after a kill or pause, zombies that ran on past a
 * takeover (overlaps), and takeovers of a holder that had not stopped
 * renewing (displacements). All on the drill's clock (observed.ts).
 */
import type { LifecycleEventType } from '../../lib/core/events.ts';
import type { ProcessFaultKind } from './fault-plan.ts';
import {
  eventTime,
  groupBy,
  realTime,
  type InjectedClientFault,
  type InjectedProcessFault,
  type ObservedEvent,
  type ObservedReceive,
  type ObservedRenewal,
} from './observed.ts';

export interface Failover {
  readonly executionKey: string;
  readonly victim: string;
  readonly standby: string;
  readonly fault: ProcessFaultKind;
  /** Drill time of the victim's last successful renewal (or its claim). */
  readonly lastHeartbeatAt: number;
  readonly takeoverAt: number;
  readonly latencyMs: number;
  /**
   * An injected AWS fault on the way: another replica's request about this slice throttled or hung (a claim that
   * hung waits out the 3 s request timeout), or the standby's own SQS request hung, between the last heartbeat and
   * the takeover; or the victim's own renewal refused or hung from a message visibility before it (RENEWAL_REQUESTS),
   * or since its claim when it stood disarmed. In the simulation also `slow`: such a request, or a receive that
   * returned the slice's message (the victim's own long poll, open when it stopped, among them), had a leg in the
   * profile's latency tail (a loaded emulator's seconds).
   */
  readonly slowedBy?: InjectedClientFault['kind'];
  /**
   * The victim's claim came back after a pause of its own that its message could have outlived (`overtakeable`):
   * its first renewal disarmed the holder's-message-back takeover (a standby may hold the message), so the standby
   * waits for the lease's expiry and the skew margin, about 8 s, by design (held-message.ts).
   */
  readonly claimAfterPause?: true;
  /**
   * A second process fault on the path: another worker received the slice's message after the victim's last
   * heartbeat and was killed or paused while it held it, before the takeover, so the message stayed hidden one
   * visibility timeout more (a 300 s drill: 6,127 ms, its first standby killed 1.1 s after its receive); or the
   * standby itself was paused between the victim's last heartbeat and its takeover (holding the message, or with
   * every other worker stopped too: a simulated settlement's mid-batch pause beside the plan's).
   */
  readonly messageHeldBy?: string;
  /**
   * When the message surfaced, every worker but the standby (and the victim) was stopped, paused or killed and not yet
   * replaced, and the standby received it more than a long poll later: the one worker left carried the fleet's load, its
   * pollers all busy (a simulated seed: its four batches in flight for 2.2 s after the surfacing). A second process
   * fault on the path: a deployment's event source scales out instead.
   */
  readonly othersStopped?: true;
  /**
   * The victim's takeover stood disarmed at the fault: a renewal before it disarmed the holder's-message-back takeover
   * (its message could have surfaced under it) and none re-armed it since. The standby then waits for the lease's
   * expiry and the skew margin. Told, not put apart: the renewal's reason (an extension refused, slow, or a late claim)
   * is what a slow failover's trace looks for next.
   */
  readonly disarmed?: true;
  /**
   * Drill time of the standby's last receive of the slice's message before its claim (when recorded): a slow
   * takeover whose receive came late waited on the queue or on free pollers, one whose receive came early on its claim.
   */
  readonly receivedAt?: number;
}

/** Which distribution a failover counts in: the bounded one, or the first of the reasons it is reported apart. */
export type FailoverClass = 'bounded' | 'slowedByAws' | 'afterPausedClaim' | 'afterHolderOfMessageStopped' | 'afterOthersStopped';

export function failoverClass(failover: Failover): FailoverClass {
  if (failover.slowedBy !== undefined) return 'slowedByAws';
  if (failover.claimAfterPause !== undefined) return 'afterPausedClaim';
  if (failover.messageHeldBy !== undefined) return 'afterHolderOfMessageStopped';
  if (failover.othersStopped !== undefined) return 'afterOthersStopped';
  return 'bounded';
}

/** A failover the 5 s bound applies to: no injected fault on its path slowed it, and its fast takeover was armed. */
export function isBoundedFailover(failover: Failover): boolean {
  return failoverClass(failover) === 'bounded';
}

export interface Overlap {
  readonly executionKey: string;
  readonly zombie: string;
  readonly zombieFence: number;
  readonly standby: string;
  readonly from: number;
  readonly to: number;
}

/** A claim with the next fence by another worker while the holder was still renewing. */
export interface Displacement {
  readonly executionKey: string;
  readonly holder: string;
  readonly holderFence: number;
  readonly standby: string;
  /** Drill time of the holder's last successful renewal (or its claim) before the takeover. */
  readonly lastRenewalAt: number;
  readonly takeoverAt: number;
  /** Takeover minus last renewal: under `minSilenceMs`. */
  readonly silenceMs: number;
}

export type ClaimsOf = (key: string) => ObservedEvent[];

/** The attempt ended by itself: on its own fence, so any later claim was a retry or impossible, not a takeover. */
/** An attempt's own ends: besides its outcome, the overlap gate putting its claim back to wait (`buffered`) or skipping it. */
const ATTEMPT_ENDS: readonly LifecycleEventType[] = ['committed', 'failed', 'dead', 'buffered', 'skipped'];

/** A zombie: a worker that had started its handler, then kept running past a standby's claim. */
export function findOverlaps(byKey: Map<string, ObservedEvent[]>, claimsOf: ClaimsOf): Overlap[] {
  const overlaps: Overlap[] = [];
  for (const [key, events] of byKey) {
    const claims = claimsOf(key);
    for (let i = 1; i < claims.length; i++) {
      const previous = claims[i - 1] as ObservedEvent;
      const standby = claims[i] as ObservedEvent;
      const zombieEnd = events.find(
        (observed) =>
          observed.replica === previous.replica &&
          observed.event.fence === previous.event.fence &&
          ['committed', 'fenced_out', 'failed', 'dead'].includes(observed.event.type),
      );
      const started = events.some(
        (observed) =>
          observed.replica === previous.replica && observed.event.fence === previous.event.fence && observed.event.type === 'started',
      );
      if (started && zombieEnd && eventTime(zombieEnd) > eventTime(standby)) {
        overlaps.push({
          executionKey: key,
          zombie: previous.replica,
          zombieFence: previous.event.fence,
          standby: standby.replica,
          from: eventTime(standby),
          to: eventTime(zombieEnd),
        });
      }
    }
  }
  return overlaps;
}

/** The drill's work queue visibility (3 s): how long after its last confirmed extension a holder's message stays hidden. */
const MESSAGE_VISIBILITY_MS = 3000;
/** A free poller's long poll is open when a message surfaces; one that receives it later than this waited for a poller. */
const FREE_POLLER_RECEIVE_MS = 1000;
/** A killed replica's replacement runs this long after the kill in the simulation; later in a drill (a process start). */
const REPLACEMENT_MS = 500;

/**
 * A holder's requests whose refusal can slow its failover: its lease renewal (an UpdateItem of the slice) and its
 * message's visibility extension. Its other requests about the slice, a settlement's chunk transactions, slow none:
 * in a CI drill a throttled chunk commit put the settlement's only two takeovers (about 3.1 s each) apart.
 */
const RENEWAL_REQUESTS: ReadonlySet<string> = new Set([
  'UpdateItemCommand',
  'ChangeMessageVisibilityCommand',
  'ChangeMessageVisibilityBatchCommand',
]);

export function findFailovers(
  processFaults: readonly InjectedProcessFault[],
  renewals: readonly ObservedRenewal[],
  claimsOf: ClaimsOf,
  byKey: Map<string, ObservedEvent[]>,
  clientFaults: readonly InjectedClientFault[] = [],
  receives: readonly ObservedReceive[] = [],
): Failover[] {
  const failovers: Failover[] = [];
  for (const fault of processFaults) {
    if (fault.kind === 'scannerKill') continue;
    for (const [key, events] of byKey) {
      // The victim's latest claim before the fault: a worker whose own heartbeats lapsed may have re-claimed its slice.
      const claim = claimsOf(key)
        .filter((observed) => observed.replica === fault.replica && eventTime(observed) <= fault.at)
        .at(-1);
      if (!claim) continue;
      const endedBefore = events.some(
        (observed) =>
          observed.replica === fault.replica &&
          observed.event.fence === claim.event.fence &&
          observed.event.type !== 'claimed' &&
          observed.event.type !== 'started' &&
          eventTime(observed) <= fault.at,
      );
      if (endedBefore || releasedByOverlapGate(events, fault.replica, claim.event.fence)) continue;
      const takeover = claimsOf(key).find((observed) => observed.event.fence > claim.event.fence && observed.replica !== fault.replica);
      if (!takeover) continue;
      // One failover per takeover, from the victim's last fault before it: a pause it came back from and renewed after,
      // or a fault after the takeover, would list it again (a 300 s drill listed one three times), the first from the
      // heartbeats before that earlier pause.
      const stoppedBy = processFaults
        .filter((other) => other.replica === fault.replica && other.kind !== 'scannerKill' && other.at <= eventTime(takeover))
        .at(-1);
      if (stoppedBy !== fault) continue;
      const victimRenewals = renewals.filter(
        (renewal) =>
          renewal.replica === fault.replica &&
          renewal.executionKey === key &&
          renewal.fence === claim.event.fence &&
          realTime(renewal, renewal.at) <= fault.at,
      );
      const heartbeats = victimRenewals.map((renewal) => realTime(renewal, renewal.at));
      // Disarmed at the fault: the victim's last change of the message-back takeover was a disarm, not a re-arm.
      const disarmed = victimRenewals.findLast((renewal) => renewal.disarmed === true || renewal.rearmed === true)?.disarmed === true;
      const lastHeartbeatAt = Math.max(eventTime(claim), ...heartbeats);
      const takeoverAt = eventTime(takeover);
      // Who had the slice's message on the way to the takeover: the standby, and any worker that received it meanwhile.
      const messageHolders = new Set([
        takeover.replica,
        ...receives
          .filter((receive) => receive.executionKey === key && receive.at >= lastHeartbeatAt && receive.at <= takeoverAt)
          .map((receive) => receive.replica),
      ]);
      // Where a fault on the victim's own requests could have slowed this failover: within a message visibility
      // before its last heartbeat; for a victim that stood disarmed, since its claim's receive (what disarmed it, a
      // late read or an unconfirmed extension, keeps it on the lease until a re-arm).
      const victimPathFrom = disarmed ? eventTime(claim) - MESSAGE_VISIBILITY_MS : lastHeartbeatAt - MESSAGE_VISIBILITY_MS;
      const onPath = (injected: InjectedClientFault): boolean =>
        injected.at <= takeoverAt &&
        (injected.replica === fault.replica
          ? // The victim's own renewal of the slice refused or hung, from a message visibility before its last
            // heartbeat: an extension SQS did not confirm makes the holder disarm the fast takeover, and the standby
            // waits for the lease (the designed slow path, docs/architecture.md).
            injected.at >= victimPathFrom &&
            injected.executionKey === key &&
            (RENEWAL_REQUESTS.has(injected.request) ||
              // Its receive of the message, slowed: a claim read late disarms, as after a pause (`claimAfterPause`); or
              // its own long poll, open when it stopped, took the message back.
              injected.request === 'ReceiveMessageCommand')
          : injected.at >= lastHeartbeatAt &&
            (injected.executionKey === key ||
              // A read of the slice's job before a claim, by a worker that had the slice's message.
              (messageHolders.has(injected.replica) && injected.jobIds?.includes(takeover.event.jobId) === true) ||
              (injected.executionKey === undefined && injected.kind === 'hang' && injected.replica === takeover.replica)));
      // A refusal or a hang names the path's fault before a latency tail beside it.
      const slowedBy = (clientFaults.find((injected) => injected.kind !== 'slow' && onPath(injected)) ?? clientFaults.find(onPath))?.kind;
      const claimAfterPause =
        claim.event.overtakeable === true &&
        processFaults.some(
          (paused) =>
            paused.kind === 'pause' &&
            paused.replica === fault.replica &&
            paused.at <= eventTime(claim) &&
            (paused.until ?? paused.at) >= eventTime(claim) - MESSAGE_VISIBILITY_MS,
        );
      const receivedAt = receives.findLast(
        (receive) =>
          receive.replica === takeover.replica && receive.executionKey === key && receive.at >= lastHeartbeatAt && receive.at <= takeoverAt,
      )?.at;
      const standbyStopped = processFaults.some(
        (paused) =>
          paused.kind === 'pause' &&
          paused.replica === takeover.replica &&
          paused.at < takeoverAt &&
          (paused.until ?? paused.at) > lastHeartbeatAt,
      );
      const messageHeldBy = standbyStopped
        ? takeover.replica
        : receives.find(
            (receive) =>
              receive.executionKey === key &&
              receive.replica !== takeover.replica &&
              receive.replica !== fault.replica &&
              receive.at >= lastHeartbeatAt &&
              receive.at <= takeoverAt &&
              // Stopped while the receive held the message, or already stopped at it: a paused or dead process's long
              // poll, open on the server, still takes a message.
              processFaults.some(
                (held) =>
                  held.kind !== 'scannerKill' &&
                  held.replica === receive.replica &&
                  held.at < Math.min(takeoverAt, receive.at + MESSAGE_VISIBILITY_MS) &&
                  (held.at >= receive.at || (held.until ?? Number.POSITIVE_INFINITY) > receive.at),
              ),
          )?.replica;
      const surfacedAt = lastHeartbeatAt + MESSAGE_VISIBILITY_MS;
      const othersStopped =
        receivedAt !== undefined &&
        receivedAt - surfacedAt > FREE_POLLER_RECEIVE_MS &&
        everyOtherWorkerStopped(processFaults, byKey, [fault.replica, takeover.replica], surfacedAt);
      failovers.push({
        executionKey: key,
        victim: fault.replica,
        standby: takeover.replica,
        fault: fault.kind,
        lastHeartbeatAt,
        takeoverAt,
        latencyMs: takeoverAt - lastHeartbeatAt,
        ...(slowedBy ? { slowedBy } : {}),
        ...(claimAfterPause ? { claimAfterPause } : {}),
        ...(messageHeldBy !== undefined ? { messageHeldBy } : {}),
        ...(othersStopped ? { othersStopped } : {}),
        ...(disarmed ? { disarmed } : {}),
        ...(receivedAt !== undefined ? { receivedAt } : {}),
      });
    }
  }
  return failovers;
}

/** A replica's process: `worker-2` for its generations `worker-2.1`, `worker-2.2` (a replacement after a kill). */
function processOf(replica: string): string {
  return replica.split('.')[0] ?? replica;
}

/** At `at`, every worker process that claimed in the history, other than `except`'s, was paused, or killed and not yet replaced. */
function everyOtherWorkerStopped(
  processFaults: readonly InjectedProcessFault[],
  byKey: Map<string, ObservedEvent[]>,
  except: readonly string[],
  at: number,
): boolean {
  const excluded = new Set(except.map(processOf));
  const workers = new Set<string>();
  for (const events of byKey.values()) {
    for (const observed of events) if (observed.event.type === 'claimed') workers.add(processOf(observed.replica));
  }
  const others = [...workers].filter((worker) => !excluded.has(worker));
  return (
    others.length > 0 &&
    others.every((worker) =>
      processFaults.some(
        (stopped) =>
          processOf(stopped.replica) === worker &&
          stopped.kind !== 'scannerKill' &&
          stopped.at <= at &&
          at < (stopped.kind === 'pause' ? (stopped.until ?? stopped.at) : stopped.at + REPLACEMENT_MS),
      ),
    )
  );
}

/**
 * The overlap gate gave this claim back (`buffered`: the slice waits, ENQUEUED) or ended it (`skipped`), on its fence:
 * a conditional write no standby's claim could have preceded, so the next claim is not a failover, even when a pause
 * came between the write and its report (seen: a 5.4 s "failover" of a bufferOne slice released before the pause).
 */
function releasedByOverlapGate(events: readonly ObservedEvent[], replica: string, fence: number): boolean {
  return events.some(
    (observed) =>
      observed.replica === replica &&
      observed.event.fence === fence &&
      (observed.event.type === 'buffered' || observed.event.type === 'skipped'),
  );
}

/**
 * Takeovers of a healthy holder: a claim with the next fence by another
 * worker, when the holder's attempt had not ended by itself (nor had it
 * given the lease up, reporting `fenced_out` before the takeover), the holder
 * was not killed or stopped between its last successful renewal and the
 * takeover, and that renewal was less than `minSilenceMs` before it.
 *
 * `minSilenceMs` is the message's visibility after a heartbeat (lease minus
 * heartbeat): the queue hands the holder's own message to a standby only
 * that long after the holder's last heartbeat, and a claim on the lease's
 * expiry needs longer still (lease plus the skew margin, minus at most the
 * skew). A takeover sooner than that displaced a holder that was renewing.
 * A renewal's time is read before it is sent and a claim's is reported after
 * it returned, so both errors make the silence look longer, never shorter:
 * what this reports did happen.
 *
 * A holder with no renewal yet is judged from its claim, which is reported
 * after the claim returned, later than the receive its message's visibility
 * counts from: only a takeover within `heartbeatMs` of that report (before
 * its first renewal was even due) is sure to have displaced it.
 */
export function findDisplacements(
  byKey: Map<string, ObservedEvent[]>,
  renewals: readonly ObservedRenewal[],
  processFaults: readonly InjectedProcessFault[],
  bounds: { readonly minSilenceMs: number; readonly heartbeatMs: number },
): Displacement[] {
  const renewalsOf = groupBy(renewals, (renewal) => `${renewal.executionKey}#${renewal.fence}#${renewal.replica}`);
  const faultsOf = groupBy(
    processFaults.filter((fault) => fault.kind !== 'scannerKill'),
    (fault) => fault.replica,
  );
  const displacements: Displacement[] = [];
  for (const [key, events] of byKey) {
    const claims = events.filter((observed) => observed.event.type === 'claimed');
    const claimOfFence = new Map<number, ObservedEvent>();
    for (const claim of claims) if (!claimOfFence.has(claim.event.fence)) claimOfFence.set(claim.event.fence, claim);
    for (const takeover of claims) {
      const holder = claimOfFence.get(takeover.event.fence - 1);
      if (!holder || holder.replica === takeover.replica) continue;
      const takeoverAt = eventTime(takeover);
      // Reported after the takeover: the holder was stopped between its claim and its report.
      if (eventTime(holder) > takeoverAt) continue;
      const ended = events.some(
        (o) =>
          o.replica === holder.replica &&
          o.event.fence === holder.event.fence &&
          // Its own end; or it gave the lease up before the takeover (a renewal that did not answer within the lease).
          (ATTEMPT_ENDS.includes(o.event.type) || (o.event.type === 'fenced_out' && eventTime(o) < takeoverAt)),
      );
      if (ended) continue;
      const renewedAt = (renewalsOf.get(`${key}#${holder.event.fence}#${holder.replica}`) ?? [])
        .map((r) => realTime(r, r.at))
        .filter((at) => at <= takeoverAt);
      const lastRenewalAt = Math.max(eventTime(holder), ...renewedAt);
      if (renewedAt.length === 0 && wasOvertaken(holder, events)) continue;
      const stopped = (faultsOf.get(holder.replica) ?? []).some(
        (fault) => fault.at <= takeoverAt && (fault.until ?? Number.POSITIVE_INFINITY) >= lastRenewalAt,
      );
      const silenceMs = takeoverAt - lastRenewalAt;
      if (stopped || silenceMs >= (renewedAt.length > 0 ? bounds.minSilenceMs : bounds.heartbeatMs)) continue;
      displacements.push({
        executionKey: key,
        holder: holder.replica,
        holderFence: holder.event.fence,
        standby: takeover.replica,
        lastRenewalAt,
        takeoverAt,
        silenceMs,
      });
    }
  }
  return displacements;
}

/**
 * A claim that returned after its message surfaced again and never started
 * its handler: the worker waits for its first renewal before starting such a
 * claim, so a standby's later delivery that claimed first leaves one handler
 * running, not two (lib/engine/worker.ts). Not a displacement of a healthy
 * holder; counted apart.
 */
function wasOvertaken(holder: ObservedEvent, events: readonly ObservedEvent[]): boolean {
  return (
    holder.event.overtakeable === true &&
    !events.some((o) => o.replica === holder.replica && o.event.fence === holder.event.fence && o.event.type === 'started')
  );
}

/** Claims that stood down unstarted because a standby's later delivery claimed first (see `wasOvertaken`). */
export function findOvertakenClaims(byKey: Map<string, ObservedEvent[]>): ObservedEvent[] {
  return [...byKey.values()].flatMap((events) =>
    events.filter(
      (o) =>
        o.event.type === 'claimed' &&
        wasOvertaken(o, events) &&
        events.some((other) => other.event.type === 'claimed' && other.event.fence > o.event.fence),
    ),
  );
}
