#!/usr/bin/env node
// The `cronfence` command. Installed, it runs the compiled CLI (dist/esm); in this repository, where the
// TypeScript sources are (the package ships only dist/), it runs them through tsx's loader, so a change
// needs no build. Users' .ts jobs modules are loaded through tsx either way (in child processes).
import { existsSync } from 'node:fs';

// Lambda runs Node 22; locally Node 20 is supported, so the SDK's Node 22 notice is noise here.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const source = new URL('../lib/cli/main.ts', import.meta.url);
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(source.href);
} else {
  await import('../dist/esm/lib/cli/main.js');
}
