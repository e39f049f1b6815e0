/**
 * The reference page's static assets: Swagger UI's browser bundle and stylesheet from the
 * `swagger-ui-dist` package. The single executable carries them (esbuild `define` of
 * `__OUTREACH_DOCS_ASSETS__` in build/build.ts); from source (Node or Deno) they are read from
 * the installed package on first use.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** The files of `swagger-ui-dist` the page loads, by name. */
export const DOCS_ASSET_FILES = ['swagger-ui-bundle.js', 'swagger-ui.css'] as const;
export type DocsAssetName = (typeof DOCS_ASSET_FILES)[number];

declare const __OUTREACH_DOCS_ASSETS__: Record<DocsAssetName, string> | undefined;

/**
 * Reads the assets from the installed `swagger-ui-dist` (used by the build, and from source).
 * @throws when the package is not installed.
 */
export function readDocsAssets(fromUrl: string = import.meta.url): Record<DocsAssetName, string> {
  const dir = dirname(createRequire(fromUrl).resolve('swagger-ui-dist/package.json'));
  return Object.fromEntries(DOCS_ASSET_FILES.map((name) => [name, readFileSync(join(dir, name), 'utf8')])) as Record<
    DocsAssetName,
    string
  >;
}

let cached: Record<DocsAssetName, string> | undefined;
/** The assets of this build, loaded once. */
export function docsAssets(): Record<DocsAssetName, string> {
  cached ??= typeof __OUTREACH_DOCS_ASSETS__ !== 'undefined' ? __OUTREACH_DOCS_ASSETS__ : readDocsAssets();
  return cached;
}
