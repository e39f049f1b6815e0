/**
 * Entry of the bundle that becomes the single executable (`npm run build`). It does what
 * src/main.ts does, without top-level await (a SEA main script is CommonJS), after pointing
 * better-sqlite3 at its native addon:
 * - inside the executable, the addon embedded as a SEA asset, loaded on first use (so
 *   `--version` and `--help` never touch the disk);
 * - when the bundle runs under plain `node` (to compare start-up times), the checkout's addon.
 * Inside the executable the reference page's files are SEA assets too, read on first use
 * (src/http/docs-assets.ts); under plain `node` they come from the checkout's `swagger-ui-dist`.
 */
import { createRequire } from 'node:module';
import * as sea from 'node:sea';
import { runCli } from '../src/cli/index.js';
import { DOCS_ASSET_FILES, type DocsAssetName, docsSeaAsset } from '../src/http/docs-assets.js';
import { NATIVE_SQLITE_ASSET, loadCachedAddon } from '../src/native.js';
import { VERSION } from '../src/version.js';

/** First hex digits of the addon's SHA-256, defined by build/build.ts. */
declare const __OUTREACH_NATIVE_HASH__: string;

const GLOBAL = '__OUTREACH_NATIVE_SQLITE__';

if (sea.isSea()) {
  let addon: unknown;
  Object.defineProperty(globalThis, GLOBAL, {
    configurable: true,
    get: () =>
      (addon ??= loadCachedAddon(
        new Uint8Array(sea.getRawAsset(NATIVE_SQLITE_ASSET) as ArrayBuffer),
        `${VERSION}-${__OUTREACH_NATIVE_HASH__}`,
      )),
  });
  let docs: Record<DocsAssetName, string> | undefined;
  Object.defineProperty(globalThis, '__OUTREACH_DOCS_ASSETS__', {
    configurable: true,
    get: () =>
      (docs ??= Object.fromEntries(
        DOCS_ASSET_FILES.map((name) => [name, sea.getAsset(docsSeaAsset(name), 'utf8')]),
      ) as Record<DocsAssetName, string>),
  });
} else {
  // better-sqlite3 requires a path given as nativeBinding; the bundle sits in dist/ of a checkout.
  Object.assign(globalThis, {
    [GLOBAL]: createRequire(__filename).resolve('better-sqlite3/build/Release/better_sqlite3.node'),
  });
}

runCli(process.argv.slice(2)).then((code) => {
  if (code !== 0) process.exitCode = code;
});
