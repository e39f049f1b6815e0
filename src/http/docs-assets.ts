/**
 * The reference page's static assets: Swagger UI's browser bundle and stylesheet from the
 * `swagger-ui-dist` package, 1.9 MB together. The single executable carries them as SEA assets
 * (build/sea.ts), read on first use through the `__OUTREACH_DOCS_ASSETS__` global that
 * build/entry.ts defines: kept out of the bundle's script, they cost its start nothing (they were
 * a third of the script V8 had to read at every start; docs/performance.md). From source (Node or
 * Deno) and from the bundle under plain `node`, they are read from the installed package on first use.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** The files of `swagger-ui-dist` the page loads, by name. */
export const DOCS_ASSET_FILES = ['swagger-ui-bundle.js', 'swagger-ui.css'] as const;
export type DocsAssetName = (typeof DOCS_ASSET_FILES)[number];

/** The SEA asset key of a file (build/sea.ts puts them in, build/entry.ts reads them). */
export const docsSeaAsset = (name: DocsAssetName): string => `docs/${name}`;

/** Set by build/entry.ts inside the single executable: the assets from the SEA blob. */
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
