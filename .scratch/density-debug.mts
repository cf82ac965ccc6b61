import { ensureAwsEndpoint } from '../lib/local/emulator.ts';
import { runDensity } from '../lib/bench/density.ts';
const aws = await ensureAwsEndpoint({});
const env = { ...process.env, CRONFENCE_PREFIX: `dbg${Date.now() % 100000}-density`, CRONFENCE_SHARDS: '8', CRONFENCE_LOOKAHEAD_MS: '40000', CRONFENCE_SWEEP_GRACE_MS: '3600000', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };
const t = Date.now();
const result = await runDensity({ env, levels: [2000, 30000], duePerLevel: 50, onProgress: (p, d, n) => { if (d === n) console.error(`${Math.round((Date.now() - t) / 1000)}s ${p}`); } });
for (const l of result.levels) console.log(JSON.stringify({ schedules: l.schedules, sent: l.sent, itemsRead: l.itemsRead, ms: l.msPerShardMean, reg: l.registerSeconds }));
await aws.stop();
