/** Token format, checksum and hashing (contract §5). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { generateToken, hashToken, isWellFormedToken, tokenHints } from '../src/domain/tokens.js';

describe('tokens', () => {
  it('have the oapi_ prefix, 256 random bits in base62 and a checksum', () => {
    const token = generateToken();
    assert.match(token, /^oapi_[0-9A-Za-z]{49}$/);
    assert.ok(isWellFormedToken(token));
    assert.notEqual(generateToken(), token);
  });

  it('refuse a token whose checksum does not match', () => {
    const token = generateToken();
    const last = token.at(-1) === 'a' ? 'b' : 'a';
    assert.equal(isWellFormedToken(token.slice(0, -1) + last), false);
  });

  it('accept imported fixture tokens of 32+ printable characters, and nothing shorter', () => {
    assert.ok(isWellFormedToken('fixture-token-for-ci-000000000000'));
    assert.equal(isWellFormedToken('too-short'), false);
    assert.equal(isWellFormedToken('has space in the middle 000000000000'), false);
  });

  it('are stored as a SHA-256 hash and shown only as hints', () => {
    const token = generateToken();
    assert.match(hashToken(token), /^[0-9a-f]{64}$/);
    assert.deepEqual(tokenHints(token), { prefix: token.slice(0, 9), lastFour: token.slice(-4) });
  });
});
