/**
 * Which program `startFixture()` starts: the server itself, never a launcher in front of it, so
 * the fixture's `pid` is the server's. `OUTREACH_API_BINARY` names an executable (a `.js`/`.cjs`
 * bundle runs under this Node).
 * @throws Error when nothing names one.
 */
export function serverCommand(env: Record<string, string | undefined> = process.env): {
  command: string;
  args: string[];
} {
  const binary = env.OUTREACH_API_BINARY;
  if (!binary) throw new Error('outreach-api/testing: set OUTREACH_API_BINARY to the outreach-api executable');
  return /\.c?js$/.test(binary) ? { command: process.execPath, args: [binary] } : { command: binary, args: [] };
}
