/** Types of ./platform.cjs (which program runs outreach-api in an installed npm package). */

/** The platforms with a package of their own, `<os>-<cpu>`: what the package's package.json says. */
export declare const PLATFORMS: Record<string, { os: string; cpu: string; libc?: 'glibc' | 'musl' }>;

/** `OUTREACH_API_BINARY`: names another executable. */
export declare const BINARY_VARIABLE: string;

/** Where a platform package keeps the executable, relative to the package: `bin/outreach-api`. */
export declare const EXECUTABLE: string;

/** The npm package of a platform key: `@outreach-api/<key>`. */
export declare function packageOf(key: string): string;

/**
 * The program that runs outreach-api here (spawn `command` with `args`, then its own
 * arguments), or the one-line reason there is none. Never throws.
 */
export declare function serverCommand(options?: {
  env?: Record<string, string | undefined>;
  platform?: string;
  arch?: string;
}): { command: string; args: string[]; via: 'variable' | 'platform' | 'bundle' } | { error: string };
