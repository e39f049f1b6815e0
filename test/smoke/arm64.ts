/**
 * `npm run test:arm64`: builds the Linux arm64 executable (build/arm64.ts; the cross-compiled addon
 * and the arm64 Node are kept in dist/.cache/ from one run to the next) and runs the smoke checks
 * of `npm run smoke` on it under qemu's user mode (test/smoke/smoke.ts `--via`): on SQLite serve,
 * `/me`, a list, a write, the operator endpoints, the settings area, `backup` and a backlink check;
 * on PostgreSQL `migrate`, the same requests, `accounts`/`tokens` beside the server, the limiter
 * in Redis and a revocation.
 *
 * Skipped in one line without qemu-aarch64-static or the cross compiler (Debian's
 * qemu-user-static, g++-aarch64-linux-gnu); under `CI` either is a failure. Exits with the
 * smoke's code.
 */
import { spawnSync } from 'node:child_process';
import { ARM64_EXECUTABLE, QEMU_ARM64, buildArm64Executable } from '../../build/arm64.js';
import { serviceSkip } from '../helpers/services.js';

async function main(): Promise<number> {
  if ((await serviceSkip('qemu-aarch64-static')) || (await serviceSkip('aarch64-linux-gnu-g++'))) return 0;
  const started = performance.now();
  await buildArm64Executable();
  const built = performance.now();
  const smoke = spawnSync(
    process.execPath,
    ['--import', 'tsx', 'test/smoke/smoke.ts', '--exe', ARM64_EXECUTABLE, '--via', ...QEMU_ARM64],
    { stdio: 'inherit' },
  );
  const seconds = (from: number, to: number) => ((to - from) / 1000).toFixed(1);
  process.stdout.write(
    `test:arm64: build ${seconds(started, built)} s, smoke under qemu ${seconds(built, performance.now())} s\n`,
  );
  return smoke.status ?? 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`test:arm64: ${(error as Error).message}\n`);
    process.exit(1);
  },
);
