/**
 * The simulated network between a process and the simulated services. Each
 * port call is one request as the engine's AWS adapters make it: it travels,
 * is applied at once on arrival (the in-memory stores apply each operation
 * atomically, as DynamoDB applies a conditional write per item), and its
 * reply travels back. Each try draws a latency from the profile and may be
 * throttled (the SDK backs off and tries again, up to its 3 tries), hang
 * until the client's 3 s timeout (tried again likewise), or be applied with
 * its reply lost (the call fails with a TimeoutError, its outcome unknown to
 * the caller). docs/simulation.md says where this differs from AWS.
 */
import { REQUEST_TIMEOUT_MS } from '../../lib/aws/clients.ts';
import type { SeededRandom } from '../chaos/random.ts';
import type { SimProcess } from './sim-process.ts';
import type { VirtualClock } from './virtual-clock.ts';

export type ProfileName = 'aws' | 'loaded';

export interface NetworkProfile {
  readonly name: ProfileName;
  /** One leg of a request (there and back are drawn apart), in ms. */
  latencyMs(random: SeededRandom): number;
  /** Per try. */
  readonly throttle: number;
  readonly hang: number;
  readonly lostReply: number;
}

/** Exponential with the given mean, from a uniform draw. */
const exponential = (random: SeededRandom, meanMs: number): number => -Math.log(1 - random.next()) * meanMs;

export const PROFILES: Record<ProfileName, NetworkProfile> = {
  // DynamoDB and SQS in-region: a few ms a leg, a rare tail of tens to hundreds of ms.
  aws: {
    name: 'aws',
    latencyMs: (random) => (random.chance(0.005) ? random.int(50, 300) : 2 + exponential(random, 3)),
    throttle: 0.002,
    hang: 0.0005,
    lostReply: 0.0005,
  },
  // The one-request-at-a-time emulator on a busy 2-core machine: tens of ms a leg, seconds-long tails.
  loaded: {
    name: 'loaded',
    latencyMs: (random) => (random.chance(0.01) ? random.int(300, 1500) : 5 + exponential(random, 20)),
    throttle: 0.01,
    hang: 0.002,
    lostReply: 0.002,
  },
};

/**
 * The SDK commands of the port calls the drill's checker reads by name (tools/chaos/takeovers.ts: a victim's
 * renewal or visibility extension that failed slows its failover by design); the others keep their port names.
 */
const SDK_COMMANDS: Readonly<Record<string, string>> = {
  renew: 'UpdateItemCommand',
  hide: 'ChangeMessageVisibilityCommand',
  hideBatched: 'ChangeMessageVisibilityBatchCommand',
};

/** The SDK's tries of one call (lib/aws/clients.ts). */
const SDK_TRIES = 3;

/** What a request was about, as the drill's checker ties a fault to a failover (tools/chaos/takeovers.ts). */
export interface RequestSubject {
  readonly executionKey?: string;
  readonly jobIds?: readonly string[];
}

export type RequestFault = 'throttle' | 'hang' | 'lostReply';

/** A leg this long is a latency tail (the loaded profile's 0.3-1.5 s, the aws profile's rare 250-300 ms): reported. */
export const SLOW_LEG_MS = 250;

export interface RequestFaultReport {
  /** `slow`: a leg of the request, there or back, took `SLOW_LEG_MS` or more; the others as `RequestFault`. */
  readonly kind: RequestFault | 'slow';
  readonly process: string;
  readonly request: string;
  /** The slice the request named, when its first argument names one. */
  readonly executionKey?: string;
  /** The jobs it named by their own item (a job read before a claim), when it named no slice. */
  readonly jobIds?: readonly string[];
  readonly at: number;
}

export class SimNetwork {
  /** No faults while draining: the history's end is read from a settled installation. */
  faultsOn = true;

  constructor(
    private readonly time: VirtualClock,
    private readonly profile: NetworkProfile,
    private readonly random: SeededRandom,
    private readonly onFault: (report: RequestFaultReport) => void,
  ) {}

  /**
   * Every method of `target` as `process`'s requests to the service behind it.
   * @param subjectOf what a call's arguments name (a slice, or jobs), asked only when a fault is reported.
   */
  connect<T extends object>(
    target: T,
    process: SimProcess,
    service: string,
    subjectOf: (args: unknown[]) => RequestSubject = () => ({}),
  ): T {
    return new Proxy(target, {
      get: (object, property, receiver) => {
        const value = Reflect.get(object, property, receiver) as unknown;
        if (typeof value !== 'function') return value;
        const request = SDK_COMMANDS[String(property)] ?? `${service}.${String(property)}`;
        return (...args: unknown[]) =>
          this.request(
            process,
            request,
            () => subjectOf(args),
            () => (value as (...a: unknown[]) => unknown).apply(object, args),
            undefined,
            args.find((arg): arg is AbortSignal => arg instanceof AbortSignal),
          );
      },
    });
  }

  /**
   * @param keysOfReply the slices a reply names (a receive's messages): a lost or slow reply is reported for each,
   * since what it took is then hidden with nobody working on it, or for less time than its receiver counts.
   */
  async request<R>(
    process: SimProcess,
    request: string,
    subjectOf: () => RequestSubject,
    apply: () => R | Promise<R>,
    keysOfReply?: (reply: R) => readonly string[],
    /** The caller's abort (WorkQueue.hide's): no try is sent after it, and a wait for a reply ends with it. */
    signal?: AbortSignal,
    /** Told as each try goes out (the local poller times a receive's hide from the try that answered). */
    onTry?: () => void,
  ): Promise<R> {
    for (let attempt = 1; ; attempt++) {
      // Each try is sent by the process: a paused one sends its retry when it resumes, a killed one never.
      await process.gate();
      signal?.throwIfAborted();
      onTry?.();
      const fault = this.draw();
      const report = (subject: RequestSubject): void =>
        this.onFault({ kind: fault as RequestFault, process: process.id, request, at: this.time.now(), ...subject });
      if (fault === 'throttle' || fault === 'hang') report(subjectOf());
      if (fault === 'throttle' || fault === 'hang') {
        await this.time.sleep(fault === 'hang' ? REQUEST_TIMEOUT_MS : 2 * this.leg() + backoffMs(attempt, this.random), signal);
        if (attempt < SDK_TRIES) continue;
        await process.gate();
        throw fault === 'hang' ? timeoutError(request) : throttledError(request);
      }
      // Aborted on its way out, the request never arrives.
      const there = this.leg();
      const slowThereAt = there >= SLOW_LEG_MS ? this.time.now() : undefined;
      // A slow receive is told by the messages it took, once it took them.
      if (slowThereAt !== undefined && !keysOfReply) this.reportSlow(process, request, subjectOf());
      await this.time.sleep(there, signal);
      let outcome: { value: R } | { error: unknown };
      try {
        outcome = { value: await apply() };
      } catch (error) {
        outcome = { error };
      }
      if (fault === 'lostReply') {
        const keys = 'value' in outcome && keysOfReply ? keysOfReply(outcome.value) : [];
        if (keys.length === 0) report(subjectOf());
        for (const key of keys) report({ executionKey: key });
      }
      const back = fault === 'lostReply' ? REQUEST_TIMEOUT_MS : this.leg();
      const slowAt = [
        ...(slowThereAt !== undefined && keysOfReply ? [slowThereAt] : []),
        ...(fault !== 'lostReply' && back >= SLOW_LEG_MS ? [this.time.now()] : []),
      ];
      for (const at of slowAt) {
        const keys = 'value' in outcome && keysOfReply ? keysOfReply(outcome.value) : [];
        if (keys.length === 0) this.reportSlow(process, request, subjectOf(), at);
        for (const key of keys) this.reportSlow(process, request, { executionKey: key }, at);
      }
      await this.time.sleep(back, signal);
      await process.gate();
      if (fault === 'lostReply') throw timeoutError(request);
      if ('error' in outcome) throw outcome.error;
      return outcome.value;
    }
  }

  private reportSlow(process: SimProcess, request: string, subject: RequestSubject, at = this.time.now()): void {
    if (this.faultsOn) this.onFault({ kind: 'slow', process: process.id, request, at, ...subject });
  }

  /** One leg's latency. */
  leg(): number {
    return Math.round(this.profile.latencyMs(this.random));
  }

  private draw(): RequestFault | undefined {
    if (!this.faultsOn) return undefined;
    const draw = this.random.next();
    const { throttle, hang, lostReply } = this.profile;
    if (draw < throttle) return 'throttle';
    if (draw < throttle + hang) return 'hang';
    if (draw < throttle + hang + lostReply) return 'lostReply';
    return undefined;
  }
}

/** The SDK's retry delay: full jitter from 100 ms. */
function backoffMs(attempt: number, random: SeededRandom): number {
  return random.int(0, 100 * 2 ** attempt);
}

function timeoutError(request: string): Error {
  const error = new Error(`${request}: no reply within ${REQUEST_TIMEOUT_MS} ms (simulated)`);
  error.name = 'TimeoutError';
  return error;
}

function throttledError(request: string): Error {
  const error = new Error(`${request}: throttled on every try (simulated)`);
  error.name = request.startsWith('sqs') ? 'RequestThrottled' : 'ProvisionedThroughputExceededException';
  return error;
}
