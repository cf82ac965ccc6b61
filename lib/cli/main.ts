/** The `cronfence` command (bin/cronfence.mjs runs this module). */
import { runCronfence } from './program.ts';

await runCronfence();
