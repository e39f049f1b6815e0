/**
 * `startFixture()`'s options (issue #29 item 3) are checked before anything starts: an unknown
 * option is a TypeError naming it, as is an option of the wrong type. The fixture itself runs
 * from the installed package in test/package/fixture.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startFixture } from '../../src/testing/index.js';

describe('startFixture options', () => {
  it('refuses an unknown option, naming it', async () => {
    await assert.rejects(
      startFixture({ datset: 'demo' } as never),
      (error: Error) => error instanceof TypeError && /unknown option "datset"/.test(error.message),
    );
    await assert.rejects(startFixture({ port: 8080 } as never), /unknown option "port"/);
  });

  it('refuses an option of the wrong type, naming it', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ dataset: '' }, 'dataset'],
      [{ seed: true }, 'seed'],
      [{ config: [] }, 'config'],
      [{ env: { A: 1 } }, 'env'],
      [{ startTimeoutMs: 0 }, 'startTimeoutMs'],
      [{ token: 5 }, 'token'],
    ];
    for (const [options, name] of cases)
      await assert.rejects(startFixture(options as never), (error: Error) => {
        assert.ok(error instanceof TypeError, `${name}: ${error}`);
        assert.match(error.message, new RegExp(`option "${name}"`));
        return true;
      });
    await assert.rejects(startFixture(null as never), TypeError);
  });
});
