/**
 * The names the single executable's loader (build/sea-loader.ts) and its build (build/sea.ts)
 * share: the SEA asset keys of the bundle and of its code cache, and the variable that makes the
 * loader write that cache at build time.
 */

/** The bundle (build/bundle.ts), as a SEA asset: the loader compiles and runs it. */
export const BUNDLE_ASSET = 'outreach-api.cjs';

/** V8's code cache of the bundle taken after a start (see build/sea-loader.ts), as a SEA asset. */
export const CODE_CACHE_ASSET = 'outreach-api.code-cache';

/**
 * Under plain `node` at build time: `<bundle path>` and `<cache path>` joined by the path
 * delimiter. The loader runs that bundle and writes its code cache to that path when the process exits.
 */
export const MAKE_CODE_CACHE_VARIABLE = 'OUTREACH_BUILD_CODE_CACHE';
