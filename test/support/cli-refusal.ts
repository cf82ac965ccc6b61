/** What a commander command writes to stderr when it refuses `args` (it must throw, not run). */
import type { Command } from 'commander';
import { expect } from 'vitest';

export async function refusalOf(command: Command, args: readonly string[]): Promise<string> {
  let written = '';
  command.exitOverride().configureOutput({ writeErr: (text) => (written += text) });
  await expect(command.parseAsync([...args], { from: 'user' })).rejects.toThrow();
  return written;
}
