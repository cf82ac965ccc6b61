/**
 * The repository's own command line: the published `cronfence` commands and
 * the tools beside them, `chaos` (the fault drill, docs/chaos.md) and `bench`
 * (docs/bench.md). Not published: `npm run chaos -- <flags>`, `npm run bench
 * -- <flags>`, or `node --import tsx tools/cli/main.ts <command>`.
 */
import { runCronfence } from '../../lib/cli/program.ts';
import { benchCommand } from './bench-command.ts';
import { chaosCommand } from './chaos-command.ts';

// Lambda runs Node 22; locally Node 20 is supported, so the SDK's Node 22 notice is noise here (as in bin/cronfence.mjs).
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

await runCronfence([chaosCommand, benchCommand]);
