/**
 * The takeover's transitions (lib/core/message-back.ts), row by row: what a renewal carries from each state, given
 * what the holder knows, and the state it leaves.
 */
import { describe, expect, it } from 'vitest';
import { messageBackChange, takeoverAfter, type RenewalView, type Takeover } from '../../lib/core/message-back.ts';

/** A holder that is sure: no refusal, not overtakeable, the message hidden past the next renewal and throughout. */
const sure: RenewalView = {
  extensionRefused: false,
  firstOfOvertakeable: false,
  mayBeVisible: false,
  heldThroughout: true,
  messageId: 'm1',
};

describe('messageBackChange', () => {
  it.each<[string, Partial<RenewalView>]>([
    ['an extension was refused', { extensionRefused: true }],
    ['it is the first renewal of an overtakeable claim', { firstOfOvertakeable: true }],
    ['the message may surface before the next renewal lands', { mayBeVisible: true }],
    ['the message was not hidden throughout', { heldThroughout: false }],
  ])('ARMED disarms when %s', (_why, unsure) => {
    expect(messageBackChange('armed', { ...sure, ...unsure })).toBe('disarm');
  });

  it('ARMED and sure sends no change (a plain renewal)', () => {
    expect(messageBackChange('armed', sure)).toBeUndefined();
  });

  it.each<Takeover>(['disarmed', 'unknown'])('%s re-arms, naming the message, once the holder is sure', (takeover) => {
    expect(messageBackChange(takeover, sure)).toEqual({ rearm: 'm1' });
  });

  it.each<[string, Partial<RenewalView>]>([
    ['an extension was refused', { extensionRefused: true }],
    ['the message may surface before the next renewal lands', { mayBeVisible: true }],
    ['the message was not hidden throughout', { heldThroughout: false }],
    ['the claim named no message', { messageId: undefined }],
  ])('while unsure (%s), DISARMED stays so and UNKNOWN disarms again', (_why, unsure) => {
    expect(messageBackChange('disarmed', { ...sure, ...unsure })).toBeUndefined();
    expect(messageBackChange('unknown', { ...sure, ...unsure })).toBe('disarm');
  });
});

describe('takeoverAfter', () => {
  it('a landed change sets the state it names; no change keeps it', () => {
    expect(takeoverAfter('armed', 'disarm', 'landed')).toBe('disarmed');
    expect(takeoverAfter('unknown', { rearm: 'm1' }, 'landed')).toBe('armed');
    expect(takeoverAfter('disarmed', undefined, 'landed')).toBe('disarmed');
    expect(takeoverAfter('disarmed', undefined, 'unknown')).toBe('disarmed');
  });

  it('a change whose outcome is unknown leaves the row unknown; a refused one changed nothing', () => {
    expect(takeoverAfter('armed', 'disarm', 'unknown')).toBe('unknown');
    expect(takeoverAfter('disarmed', { rearm: 'm1' }, 'unknown')).toBe('unknown');
    expect(takeoverAfter('armed', 'disarm', 'refused')).toBe('armed');
  });
});
