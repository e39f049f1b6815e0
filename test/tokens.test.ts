/** Token format, checksum and hashing (contract §5). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { crc32 } from 'node:zlib';
import {
  TOKEN_NAME_MAX,
  TOKEN_PREFIX,
  generateToken,
  hashToken,
  isWellFormedToken,
  maskTokens,
  tokenHints,
  tokenNameProblem,
} from '../src/domain/tokens.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** `value` in base62, most significant digit first, left-padded with '0' to 6 characters. */
const base62Of = (value: number) => {
  let out = '';
  for (let i = 0; i < 6; i++, value = Math.floor(value / 62)) out = BASE62[value % 62] + out;
  return out;
};
/** The random part of one of our tokens (43 characters after `oapi_`). */
const randomOf = (token: string) => token.slice(TOKEN_PREFIX.length, TOKEN_PREFIX.length + 43);

describe('tokens', () => {
  it('have the oapi_ prefix, 256 random bits in base62 and a checksum', () => {
    const token = generateToken();
    assert.match(token, /^oapi_[0-9A-Za-z]{49}$/);
    assert.ok(isWellFormedToken(token));
    assert.notEqual(generateToken(), token);
  });

  it('spread their randomness over every character of the random part', () => {
    const tokens = Array.from({ length: 32 }, generateToken);
    for (let i = 0; i < 43; i++) {
      const seen = new Set(tokens.map((token) => randomOf(token)[i]));
      // 32 tokens all alike at one position: a chance of 62^-31 for random characters.
      assert.ok(seen.size > 1, `position ${i} of the random part never changes`);
    }
    for (const token of tokens) assert.ok(BigInt(`0x${'f'.repeat(64)}`) >= decodeBase62(randomOf(token)));
  });

  it('carry base62 of the CRC-32 of their random part: a known answer, and zlib on generated tokens', () => {
    // CRC-32 (ISO-HDLC, zlib's) of the 43 characters below is 0xaa866f5c; in 6 base62 digits, 37cCQ0.
    const random = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefg';
    assert.equal(crc32(random), 0xaa866f5c);
    assert.equal(base62Of(0xaa866f5c), '37cCQ0');
    assert.ok(isWellFormedToken(`oapi_${random}37cCQ0`));
    assert.equal(isWellFormedToken(`oapi_${random}37cCQ1`), false);
    assert.ok(isWellFormedToken(`oapi_${'z'.repeat(43)}${base62Of(crc32('z'.repeat(43)))}`));
    for (let i = 0; i < 20; i++) {
      const token = generateToken();
      assert.equal(token.slice(-6), base62Of(crc32(randomOf(token))), token);
    }
  });

  it('refuse a token whose checksum does not match', () => {
    const token = generateToken();
    const last = token.at(-1) === 'a' ? 'b' : 'a';
    assert.equal(isWellFormedToken(token.slice(0, -1) + last), false);
  });

  it('refuse a token with any one character of its random part changed', () => {
    const token = generateToken();
    const random = randomOf(token);
    for (let i = 0; i < random.length; i++) {
      const at = BASE62.indexOf(random[i]!);
      for (const other of [BASE62[(at + 1) % 62], BASE62[(at + 31) % 62]]) {
        const changed = `${TOKEN_PREFIX}${random.slice(0, i)}${other}${random.slice(i + 1)}${token.slice(-6)}`;
        assert.equal(isWellFormedToken(changed), false, `position ${i} changed to ${other}`);
      }
    }
  });

  it('accept imported fixture tokens of 32 to 512 printable characters, and nothing shorter or longer', () => {
    assert.ok(isWellFormedToken('fixture-token-for-ci-000000000000'));
    assert.ok(isWellFormedToken('x'.repeat(32)));
    assert.ok(isWellFormedToken('~'.repeat(512)));
    assert.equal(isWellFormedToken('x'.repeat(31)), false);
    assert.equal(isWellFormedToken('x'.repeat(513)), false);
    assert.equal(isWellFormedToken(`oapi_${'x'.repeat(508)}`), false);
    assert.equal(isWellFormedToken('too-short'), false);
    assert.equal(isWellFormedToken('has space in the middle 000000000000'), false);
  });

  it('refuse a token whose first or last character is not printable ASCII', () => {
    const middle = 'x'.repeat(40);
    for (const bad of [' ', '\t', '\n', '\x7f', '\x00', 'é', '€']) {
      assert.equal(isWellFormedToken(`${bad}${middle}`), false, `first ${JSON.stringify(bad)}`);
      assert.equal(isWellFormedToken(`${middle}${bad}`), false, `last ${JSON.stringify(bad)}`);
    }
    const ours = generateToken();
    assert.equal(isWellFormedToken(`${ours}\n`), false);
    assert.equal(isWellFormedToken(` ${ours}`), false);
  });

  it('take a token with the oapi_ prefix but another length, or our length without the prefix, as an imported one', () => {
    // Only a token of exactly our shape (prefix and 54 characters) must carry our checksum.
    assert.ok(isWellFormedToken(`oapi_${'x'.repeat(43)}`));
    assert.ok(isWellFormedToken(`oapi_${'x'.repeat(50)}`));
    assert.ok(isWellFormedToken(`oapx_${'x'.repeat(49)}`));
    assert.equal(isWellFormedToken(`oapi_${'x'.repeat(49)}`), false);
  });

  it('are stored as a SHA-256 hash and shown only as hints', () => {
    const token = generateToken();
    assert.match(hashToken(token), /^[0-9a-f]{64}$/);
    assert.equal(hashToken('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    assert.deepEqual(tokenHints(token), { prefix: token.slice(0, 9), lastFour: token.slice(-4) });
    assert.deepEqual(tokenHints('fixture-token-for-ci-000000000123'), { prefix: 'fixt', lastFour: '0123' });
  });
});

describe('maskTokens', () => {
  it('masks every token in the text, each up to its last letter, digit or underscore', () => {
    const [a, b] = [generateToken(), generateToken()];
    assert.equal(maskTokens(`${a} and ${b}/x`), 'oapi_[masked] and oapi_[masked]/x');
    assert.equal(maskTokens(`?t=oapi_a_B9-rest`), '?t=oapi_[masked]-rest');
  });

  it('decodes a percent-encoded letter, digit or underscore (either case of hex) and no other character', () => {
    for (let byte = 0; byte < 256; byte++) {
      const char = String.fromCharCode(byte);
      const tokenChar = /^[0-9A-Za-z_]$/.test(char);
      for (const hex of [byte.toString(16).padStart(2, '0').toUpperCase(), byte.toString(16).padStart(2, '0')]) {
        // The token after it makes the text one to mask, so the decoded form is what comes back.
        const expected = `x${tokenChar ? char : `%${hex}`} oapi_[masked]`;
        assert.equal(maskTokens(`x%${hex} oapi_abc`), expected, `%${hex}`);
      }
    }
    assert.equal(maskTokens('oapi%5F%41b%63'), 'oapi_[masked]', 'a token spelt in percent-encoded characters');
  });
});

describe('tokenNameProblem', () => {
  it('accepts 1 to 100 characters, counted in code points, without control characters', () => {
    for (const name of ['x', ' ci ', 'x'.repeat(100), '😀'.repeat(100), 'tab-free name', 'é€ñ'])
      assert.equal(tokenNameProblem(name), undefined, name);
  });

  it('asks for a name when it is empty or only spaces', () => {
    for (const name of ['', ' ', ' \u00a0 '])
      assert.equal(tokenNameProblem(name), 'Give the token a name (1–100 characters).', JSON.stringify(name));
  });

  it('refuses more than 100 characters, saying how many there are', () => {
    assert.equal(TOKEN_NAME_MAX, 100);
    assert.equal(tokenNameProblem('x'.repeat(101)), 'A token name has at most 100 characters (this one has 101).');
    assert.equal(tokenNameProblem('😀'.repeat(101)), 'A token name has at most 100 characters (this one has 101).');
  });

  it('refuses control and format characters (Unicode Cc, Cf) anywhere in it', () => {
    const controls = [
      ...['\n', '\r', '\t', '\u0000', '\u001f', '\u007f'], // C0 and DEL
      ...['\u0080', '\u009b', '\u009d', '\u009f'], // C1: CSI and OSC start terminal sequences
      ...['\u202e', '\u202d', '\u2066', '\u2069', '\u200e', '\u061c'], // direction overrides, isolates, marks
      ...['\u200b', '\u200d', '\u2060', '\ufeff', '\u00ad', '\u{e0001}', '\u{e007f}'], // zero-width, BOM, soft hyphen, tags
    ];
    for (const control of controls)
      for (const name of [`${control}ci`, `c${control}i`, `ci${control}`])
        assert.equal(
          tokenNameProblem(name),
          'A token name cannot contain control or format characters (such as a line break or a direction override).',
          JSON.stringify(name),
        );
    // Letters and marks of any script, and emoji with a variation selector (a mark, not a format character).
    for (const name of ['ci \u05e9\u05dc\u05d5\u05dd', 'e\u0301t\u00e9', '\u2764\ufe0f deploy', 'Ω≈ç√'])
      assert.equal(tokenNameProblem(name), undefined, JSON.stringify(name));
  });
});

/** The value of a base62 string. */
function decodeBase62(text: string): bigint {
  let value = 0n;
  for (const c of text) value = value * 62n + BigInt(BASE62.indexOf(c));
  return value;
}
