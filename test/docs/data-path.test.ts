/**
 * One data path (issue #21 item 7): the README's first steps, the systemd unit and the container
 * image keep the database at the same place, and every absolute database path the docs show is
 * that one (the unit allows writes only under its StateDirectory, so another path in the README
 * would be a path the service cannot use).
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DATA_PATH = '/var/lib/outreach-api/outreach.db';
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

describe('the data path', () => {
  it('is the same in the systemd unit and the container image', () => {
    const unit = read('deploy/outreach-api.service');
    assert.match(unit, /^StateDirectory=outreach-api$/m);
    assert.match(unit, new RegExp(`^Environment=OUTREACH_API_DB=${DATA_PATH}$`, 'm'));
    const dockerfile = read('Dockerfile');
    assert.match(dockerfile, new RegExp(`^ENV OUTREACH_API_DB=${DATA_PATH} `, 'm'));
    assert.match(dockerfile, /^VOLUME \["\/var\/lib\/outreach-api"\]$/m);
  });

  it('is the only absolute database path in README.md and docs/', () => {
    const files = ['README.md', ...readdirSync(join(ROOT, 'docs')).map((f) => join('docs', f))];
    const others = files.flatMap((file) =>
      [...read(file).matchAll(/(?:--db |OUTREACH_API_DB=)(\/\S+\.db)/g)]
        .map((m) => m[1]!)
        .filter((path) => path !== DATA_PATH && !path.startsWith('/proc/'))
        .map((path) => `${file}: ${path}`),
    );
    assert.deepEqual(others, []);
    assert.ok(read('README.md').includes(`--db ${DATA_PATH} accounts create`), 'the README shows the first account');
    assert.ok(read('README.md').includes(`--db ${DATA_PATH} tokens create`), 'and the first token');
  });
});
