/**
 * `npm run lint:openapi`: writes the OpenAPI document the app serves to a temporary file and
 * lints it with Redocly's `recommended` rules, offline (telemetry and update checks off). Exits
 * non-zero on any error or warning, so the document stays clean for the tools people point at it.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { servedDocument } from './document.js';

const openapi = await servedDocument();

const dir = mkdtempSync(join(tmpdir(), 'outreach-openapi-'));
const file = join(dir, 'openapi.json');
writeFileSync(file, JSON.stringify(openapi, null, 2));
const result = spawnSync(
  'npx',
  ['--no-install', 'redocly', 'lint', file, '--extends', 'recommended', '--format', 'json'],
  {
    encoding: 'utf8',
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
  },
);
rmSync(dir, { recursive: true, force: true });
let report: {
  totals?: { errors: number; warnings: number; ignored: number };
  problems?: Array<{ ruleId: string; severity: string; message: string; location?: Array<{ pointer?: string }> }>;
};
try {
  report = JSON.parse(result.stdout);
} catch {
  process.stderr.write(`redocly lint gave no report (status ${result.status}):\n${result.stdout}${result.stderr}`);
  process.exit(1);
}
for (const p of report.problems ?? [])
  process.stdout.write(`${p.severity} ${p.ruleId}: ${p.message} at ${p.location?.[0]?.pointer ?? '?'}\n`);
const { errors = 0, warnings = 0 } = report.totals ?? {};
process.stdout.write(`OpenAPI document (Redocly recommended): ${errors} error(s), ${warnings} warning(s)\n`);
process.exit(errors + warnings === 0 && result.status === 0 ? 0 : 1);
