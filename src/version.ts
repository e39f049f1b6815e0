/** The outreach-api version: injected by the build, read from package.json when run from source. */
import { readFileSync } from 'node:fs';

declare const __OUTREACH_VERSION__: string | undefined;

export const VERSION: string =
  typeof __OUTREACH_VERSION__ !== 'undefined'
    ? __OUTREACH_VERSION__
    : (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
