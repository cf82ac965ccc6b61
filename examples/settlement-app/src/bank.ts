/**
 * The bank the settlement wires money through: a stand-in for a real
 * payments API. Like most of them it takes an idempotency key: a second wire
 * with the same key returns the first one instead of paying again. Tests
 * replace `bank.wire` (jest.spyOn) to watch what a handler sends it.
 */
export interface WireRequest {
  /** `ctx.executionKey`: the same for every run of one slice. */
  readonly idempotencyKey: string;
  /** `ctx.fence`: a bank that supports fencing refuses a lower one than it has seen. */
  readonly fence: number;
  readonly amountMinor: number;
  readonly currency: string;
}

export interface Wire {
  readonly id: string;
}

export const bank = {
  async wire(request: WireRequest, signal: AbortSignal): Promise<Wire> {
    signal.throwIfAborted();
    return { id: `wire-${request.idempotencyKey}` };
  },
};
