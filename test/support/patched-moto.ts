/**
 * Runs a Python script inside moto as the emulator patches it
 * (scripts/emulator/serve.py, `_patch_moto`), in-process, in the project's
 * emulator venv: for tests of the patches themselves. Returns its stdout.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const python = path.join(repoRoot, '.venv-emulator', 'bin', 'python');

const PREAMBLE = `import sys
sys.path.insert(0, sys.argv[1])
import serve
serve._patch_moto()
`;

export function runInPatchedMoto(script: string): string {
  return execFileSync(python, ['-c', PREAMBLE + script, path.join(repoRoot, 'scripts', 'emulator')], { encoding: 'utf8' });
}
