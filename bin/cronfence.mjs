#!/usr/bin/env node
// Runs the TypeScript CLI through tsx's loader, so there is no build step.
import { register } from 'tsx/esm/api';

// Lambda runs Node 22; locally Node 20 is supported, so the SDK's Node 22 notice is noise here.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

register();
await import('../lib/cli/main.ts');
