/**
 * `npm run lint:openapi`: lints each OpenAPI document a server serves, the public one
 * (`/api/public/openapi.json`) and the fixture's admin one (`/__admin/openapi.json`, decisions.md
 * §14), with Redocly's `recommended` rules, offline (telemetry and update checks off). The server
 * runs on an in-memory store with the fixture on, as `npm run generate:types` starts it. Exits
 * non-zero on any error or warning in either, so both stay clean for the tools people point at them.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.js';
import { silentLogger } from '../../src/logger.js';
import { startServer } from '../../src/server.js';

const DOCUMENTS = ['/api/public/openapi.json', '/__admin/openapi.json'];

interface Report {
  totals?: { errors: number; warnings: number; ignored: number };
  problems?: Array<{ ruleId: string; severity: string; message: string; location?: Array<{ pointer?: string }> }>;
}

/** Redocly's report on `document`; exits the process when Redocly gives none. */
function lint(document: unknown, dir: string): { report: Report; status: number | null } {
  const file = join(dir, 'openapi.json');
  writeFileSync(file, JSON.stringify(document, null, 2));
  const result = spawnSync(
    'npx',
    ['--no-install', 'redocly', 'lint', file, '--extends', 'recommended', '--format', 'json'],
    {
      encoding: 'utf8',
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    },
  );
  try {
    return { report: JSON.parse(result.stdout) as Report, status: result.status };
  } catch {
    process.stderr.write(`redocly lint gave no report (status ${result.status}):\n${result.stdout}${result.stderr}`);
    process.exit(1);
  }
}

const config = loadConfig(undefined, {}, { db: ':memory:', 'fixture.enabled': true, 'server.port': 0 });
const server = await startServer({ config, logger: silentLogger });
const dir = mkdtempSync(join(tmpdir(), 'outreach-openapi-'));
let clean = true;
try {
  for (const path of DOCUMENTS) {
    const res = await fetch(server.origin + path);
    if (!res.ok) throw new Error(`GET ${path} answered ${res.status}`);
    const { report, status } = lint(await res.json(), dir);
    for (const p of report.problems ?? [])
      process.stdout.write(`${p.severity} ${p.ruleId}: ${p.message} at ${p.location?.[0]?.pointer ?? '?'}\n`);
    const { errors = 0, warnings = 0 } = report.totals ?? {};
    process.stdout.write(`${path} (Redocly recommended): ${errors} error(s), ${warnings} warning(s)\n`);
    if (errors + warnings > 0 || status !== 0) clean = false;
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
  await server.close();
}
process.exit(clean ? 0 : 1);
