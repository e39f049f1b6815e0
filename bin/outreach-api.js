#!/usr/bin/env node
// `outreach-api` from a source checkout: runs src/main.ts through tsx, with this checkout's
// tsconfig.json named (tsx would read the working directory's, and the settings pages' JSX needs
// its jsxImportSource), so it runs from any directory. The npm package's command is
// bin/launcher.cjs, which runs the single executable instead (npm run pack; docs/development.md).
import { fileURLToPath } from 'node:url';
import { register } from 'tsx/esm/api';

register({ tsconfig: fileURLToPath(new URL('../tsconfig.json', import.meta.url)) });
await import('../src/main.ts');
