/**
 * A reader that went away (`cronfence runs nightly | head`) is not an error:
 * the command ends quietly instead of dying on an unhandled EPIPE with a stack
 * trace. A command that is stopping on its own signal handler (`dev`, which
 * stops its replicas and emulator on SIGINT) is stopped that way; any other
 * exits 0 at once. Output after the pipe broke is dropped.
 */
import type { EventEmitter } from 'node:events';

export interface BrokenPipeActions {
  /** @default process.exit */
  readonly exit?: (code: number) => void;
  /** @default SIGINT to this process when it has a handler for it (a long-running command), else undefined */
  readonly interrupt?: () => boolean;
}

const interruptSelf = (): boolean => {
  if (process.listenerCount('SIGINT') === 0) return false;
  process.kill(process.pid, 'SIGINT');
  return true;
};

/** Ends the process quietly when `stream` (stdout) reports EPIPE; other stream errors are thrown as before. */
export function endQuietlyOnBrokenPipe(stream: EventEmitter, actions: BrokenPipeActions = {}): void {
  const exit = actions.exit ?? ((code: number) => process.exit(code));
  const interrupt = actions.interrupt ?? interruptSelf;
  let broken = false;
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    if (broken) return;
    broken = true;
    if (!interrupt()) exit(0);
  });
}
