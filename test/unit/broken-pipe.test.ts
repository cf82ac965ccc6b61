/**
 * A reader that went away (`cronfence runs nightly | head`): stdout's EPIPE
 * ends the command quietly, once; a long-running command is stopped through
 * its own signal handler; any other stream error is still thrown. The real
 * pipe is tried against the emulator in test/integration/cli-edges.test.ts.
 */
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { endQuietlyOnBrokenPipe } from '../../lib/cli/broken-pipe.ts';

const epipe = (): NodeJS.ErrnoException => Object.assign(new Error('write EPIPE'), { code: 'EPIPE' });

describe('endQuietlyOnBrokenPipe', () => {
  it('exits 0 on EPIPE, once however many writes fail after it', () => {
    const stdout = new EventEmitter();
    const exits: number[] = [];
    endQuietlyOnBrokenPipe(stdout, { exit: (code) => exits.push(code), interrupt: () => false });
    stdout.emit('error', epipe());
    stdout.emit('error', epipe());
    expect(exits).toEqual([0]);
  });

  it('a command with its own stop (dev) is interrupted instead, to stop its replicas', () => {
    const stdout = new EventEmitter();
    const exits: number[] = [];
    let interrupts = 0;
    endQuietlyOnBrokenPipe(stdout, { exit: (code) => exits.push(code), interrupt: () => ++interrupts > 0 });
    stdout.emit('error', epipe());
    expect([interrupts, exits]).toEqual([1, []]);
  });

  it('other errors are not swallowed', () => {
    const stdout = new EventEmitter();
    endQuietlyOnBrokenPipe(stdout, { exit: () => {}, interrupt: () => false });
    expect(() => stdout.emit('error', Object.assign(new Error('write EIO'), { code: 'EIO' }))).toThrow('write EIO');
  });
});
