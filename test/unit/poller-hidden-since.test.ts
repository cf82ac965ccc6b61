import { describe, expect, it } from 'vitest';
import { hiddenSince } from '../../lib/local/sqs-poller.ts';

describe('hiddenSince: since when a polled message has been hidden, at the earliest', () => {
  it('is the reply’s arrival when the reply came within the long poll’s wait', () => {
    expect(hiddenSince(10_000, 10_040, 1)).toBe(10_040);
    expect(hiddenSince(10_000, 11_400, 1)).toBe(11_400);
  });

  it('is the receive’s send time when the reply was held up past the wait (a paused process, a loaded queue)', () => {
    expect(hiddenSince(10_000, 11_501, 1)).toBe(10_000);
    expect(hiddenSince(10_000, 16_800, 1)).toBe(10_000);
  });
});
