/**
 * The package's two library entry points, built from src/testing/ and src/client/ into
 * `dist/lib/` (part of `npm run build`; `node --import tsx build/library.ts [outDir]` alone):
 *
 *   testing.mjs, testing.cjs, testing.d.mts, testing.d.cts   `outreach-api/testing` (startFixture)
 *   client.mjs,  client.cjs,  client.d.mts,  client.d.cts    `outreach-api/client` (createClient)
 *
 * esbuild bundles each, openapi-fetch included, so the installed package needs no dependency for
 * them; dts-bundle-generator writes one self-contained declaration file each, openapi-fetch's
 * types inlined. ES module and CommonJS both: Jest's default runtime loads only CommonJS.
 * {@link LIBRARY_EXPORTS} is what package.json's `exports` says of them.
 */
import { copyFileSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { generateDtsBundle } from 'dts-bundle-generator';
import { build } from 'esbuild';
import { ROOT } from './bundle.js';

/** How src/testing/ imports bin/platform.cjs, kept as is in the built files (dist/lib/ is as deep). */
const PLATFORM_MODULE = '../../bin/platform.cjs';

/** Each entry point: its subpath export and its source, relative to the checkout. */
export const LIBRARIES = { testing: 'src/testing/index.ts', client: 'src/client/index.ts' } as const;

/** The `exports` entries of the libraries, for files in `<package>/<dir>/` (default `dist/lib`). */
export function libraryExports(dir = 'dist/lib'): Record<string, unknown> {
  return Object.fromEntries(
    Object.keys(LIBRARIES).map((name) => [
      `./${name}`,
      {
        import: { types: `./${dir}/${name}.d.mts`, default: `./${dir}/${name}.mjs` },
        require: { types: `./${dir}/${name}.d.cts`, default: `./${dir}/${name}.cjs` },
      },
    ]),
  );
}

/**
 * Writes the files listed above into `outDir`; answers their paths and sizes (bytes).
 * @throws when esbuild or the declaration bundler fails (a type error in the sources included).
 */
export async function buildLibraries(outDir: string): Promise<{ file: string; bytes: number }[]> {
  mkdirSync(outDir, { recursive: true });
  const written: string[] = [];
  for (const [name, entry] of Object.entries(LIBRARIES)) {
    for (const format of ['esm', 'cjs'] as const) {
      const outfile = join(outDir, `${name}.${format === 'esm' ? 'mjs' : 'cjs'}`);
      await build({
        absWorkingDir: ROOT,
        entryPoints: [entry],
        outfile,
        bundle: true,
        platform: 'node',
        target: 'node20',
        format,
        legalComments: 'none',
        logLevel: 'warning',
        // bin/platform.cjs decides which program runs the server (for the launcher too): it stays a
        // file of its own, found at the same relative path from dist/lib/ as from src/testing/.
        external: [PLATFORM_MODULE],
      });
      written.push(outfile);
    }
  }
  const declarations = generateDtsBundle(
    Object.values(LIBRARIES).map((entry) => ({
      filePath: join(ROOT, entry),
      libraries: { inlinedLibraries: ['openapi-fetch', 'openapi-typescript-helpers'] },
      output: { noBanner: true, exportReferencedTypes: false },
    })),
    { preferredConfigPath: join(ROOT, 'tsconfig.json') },
  );
  Object.keys(LIBRARIES).forEach((name, i) => {
    const mts = join(outDir, `${name}.d.mts`);
    writeFileSync(mts, declarations[i]!);
    copyFileSync(mts, join(outDir, `${name}.d.cts`));
    written.push(mts, join(outDir, `${name}.d.cts`));
  });
  return written.map((file) => ({ file, bytes: statSync(file).size }));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const outDir = resolve(process.argv[2] ?? join(ROOT, 'dist/lib'));
  for (const { file, bytes } of await buildLibraries(outDir))
    process.stdout.write(`build: ${file} (${(bytes / 1024).toFixed(0)} KiB)\n`);
}
