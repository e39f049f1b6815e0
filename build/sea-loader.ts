/**
 * The single executable's main script. It compiles the bundle (a SEA asset) with V8's code cache
 * of a whole start (another asset) and runs it, so the start compiles almost nothing.
 *
 * Why not the SEA's own `useCodeCache`: Node makes that cache right after compiling the main
 * script, before it runs, so it holds only the top-level code; every function the start then
 * calls (esbuild's module initialisers, zod's schema builders, commander, Hono's routes) was
 * compiled again at every start. The cache made here is taken when a real start (`serve`, up to
 * its first `/healthz` answer, build/sea.ts) exits, so it holds all of them. V8 accepts it only
 * from the same Node version with the same flags; otherwise (e.g. `NODE_OPTIONS` with a V8 flag)
 * it rejects it and compiles as without one, which is slower but correct.
 *
 * Under plain `node` with `OUTREACH_BUILD_CODE_CACHE=<bundle><delimiter><cache>` (build/sea.ts),
 * it runs that bundle and writes the cache at exit.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, dirname } from 'node:path';
import * as sea from 'node:sea';
import { Script } from 'node:vm';
import { BUNDLE_ASSET, CODE_CACHE_ASSET, MAKE_CODE_CACHE_VARIABLE } from './sea-assets.js';

type Main = (exports: object, require: NodeJS.Require, module: object, filename: string, dirname: string) => void;

/** Compiles `source` as a CommonJS module's body (with `cachedData` when given) and runs it. */
function run(source: string, filename: string, load: NodeJS.Require, cachedData?: Buffer, cacheOut?: string): void {
  const script = new Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename,
    cachedData,
  });
  if (cacheOut) process.once('exit', () => writeFileSync(cacheOut, script.createCachedData()));
  const module = { exports: {} };
  (script.runInThisContext() as Main)(module.exports, load, module, filename, dirname(filename));
}

if (sea.isSea()) {
  let cache: Buffer | undefined;
  try {
    cache = Buffer.from(sea.getRawAsset(CODE_CACHE_ASSET) as ArrayBuffer);
  } catch {
    // Built without one (another platform's executable): compiled at every start.
  }
  // The SEA's require: Node's built-in modules only, all the bundle needs.
  run(sea.getAsset(BUNDLE_ASSET, 'utf8'), process.execPath, require, cache);
} else {
  const [bundle, cacheOut] = (process.env[MAKE_CODE_CACHE_VARIABLE] ?? '').split(delimiter);
  if (!bundle || !cacheOut) throw new Error(`${MAKE_CODE_CACHE_VARIABLE} must name a bundle and a cache file`);
  delete process.env[MAKE_CODE_CACHE_VARIABLE];
  run(readFileSync(bundle, 'utf8'), bundle, createRequire(bundle), undefined, cacheOut);
}
