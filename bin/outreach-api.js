#!/usr/bin/env node
// `outreach-api` from a source checkout: runs src/main.ts through tsx.
// The single executable (npm run build → dist/outreach-api) needs neither Node nor this file.
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
