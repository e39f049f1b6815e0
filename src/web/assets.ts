/**
 * The settings area's static files (decisions.md §18): its stylesheet and its one script, from
 * `src/web/assets/`. The single executable carries them (esbuild `define` of
 * `__OUTREACH_SETTINGS_ASSETS__` in build/bundle.ts); from source (Node or Deno) they are read
 * from that directory on first use.
 */
import { readFileSync } from 'node:fs';

/** The files, by the name they are served under (`/settings/assets/NAME`), with their content type. */
export const SETTINGS_ASSET_TYPES = {
  'settings.css': 'text/css; charset=utf-8',
  'copy.js': 'text/javascript; charset=utf-8',
} as const;
export type SettingsAssetName = keyof typeof SETTINGS_ASSET_TYPES;

declare const __OUTREACH_SETTINGS_ASSETS__: Record<SettingsAssetName, string> | undefined;

/**
 * Reads the files from `src/web/assets/` (used by the build, and from source).
 * @throws when a file is missing.
 */
export function readSettingsAssets(): Record<SettingsAssetName, string> {
  return Object.fromEntries(
    Object.keys(SETTINGS_ASSET_TYPES).map((name) => [
      name,
      readFileSync(new URL(`./assets/${name}`, import.meta.url), 'utf8'),
    ]),
  ) as Record<SettingsAssetName, string>;
}

let cached: Record<SettingsAssetName, string> | undefined;
/** The files of this build, loaded once. */
export function settingsAssets(): Record<SettingsAssetName, string> {
  cached ??= typeof __OUTREACH_SETTINGS_ASSETS__ !== 'undefined' ? __OUTREACH_SETTINGS_ASSETS__ : readSettingsAssets();
  return cached;
}
