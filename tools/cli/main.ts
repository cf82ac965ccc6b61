/**
 * The repository's own command line: the published `cronfence` commands and
 * the tools beside them, `chaos` (the fault drill, docs/chaos.md) and `bench`
 * (docs/bench.md), with `dev` running the example jobs without `--jobs` and
 * metering the replicas' AWS requests (`npm start`). Not published: `npm
 * start`, `npm run chaos -- <flags>`, `npm run bench -- <flags>`, or `node
 * --import tsx tools/cli/main.ts <command>`.
 */
import { registry as exampleRegistry } from '../../examples/jobs/index.ts';
import { runCronfence } from '../../lib/cli/program.ts';
import { devAdditions } from '../dev/dev-additions.ts';
import { benchCommand } from './bench-command.ts';
import { chaosCommand } from './chaos-command.ts';
import { simCommand } from './sim-command.ts';

// Lambda runs Node 22; locally Node 20 is supported, so the SDK's Node 22 notice is noise here (as in bin/cronfence.mjs).
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

await runCronfence({ commands: [chaosCommand, benchCommand, simCommand], dev: devAdditions(), defaultHandlers: exampleRegistry.names() });
