/**
 * The inbox's reading and classification rules on their own (decisions.md §17): what mailparser
 * hands over from real message sources (MIME, encoded words, charsets, quoted-printable and
 * base64, HTML to text, delivery status notifications), the headers that make a message
 * automatic, the phrases of each classification, the reply's own text, and what each
 * classification changes. The end-to-end tests are sync.test.ts (Dovecot) and fixture.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { THREAD_CLASSIFICATIONS } from '../../src/domain/enums.js';
import {
  headerGroups,
  inboundIdentity,
  MAX_BODY_CHARS,
  MAX_PARTS,
  parseMessage,
  messageIds,
  messageOfFields,
  UnreadableMessage,
} from '../../src/workers/inbox/message.js';
import { localPart } from '../../src/workers/inbox/record.js';
import {
  asksToStop,
  classifyByHeaders,
  classifyByPhrases,
  deliveryOutcome,
  isAutomatic,
  ownText,
  threadChanges,
  wordsOf,
} from '../../src/workers/inbox/rules.js';
import { MAX_HTML_CHARS } from '../../src/workers/inbox/html.js';
import { boundaryMaze, dsn, mail, outboxId, read } from './helpers.js';

describe('reading a message', () => {
  it('takes the ids, addresses, decoded subject, text and Date of a plain reply', async () => {
    const message = await read(
      mail({
        from: '"Ana Author" <Ana@Blog.example>',
        to: 'Mia <me@trailgear.example>, team@trailgear.example',
        subject: '=?iso-8859-1?Q?R=E9ponse_=E0_votre_id=E9e?=',
        messageId: '<abc@blog.example>',
        inReplyTo: outboxId('msg_1'),
        references: `<a@x.example>\r\n ${outboxId('msg_0')} ${outboxId('msg_1')}`,
        date: '2026-10-31T23:30:00.000Z',
        body: 'Sounds good.',
      }),
    );
    assert.equal(message.messageId, '<abc@blog.example>');
    assert.deepEqual(message.inReplyTo, ['<msg_1@trailgear.example>']);
    assert.deepEqual(message.references, ['<a@x.example>', '<msg_0@trailgear.example>', '<msg_1@trailgear.example>']);
    assert.equal(message.from, 'Ana@Blog.example');
    assert.deepEqual(message.to, ['me@trailgear.example', 'team@trailgear.example']);
    assert.equal(message.subject, 'Réponse à votre idée');
    assert.equal(message.body, 'Sounds good.');
    assert.equal(message.date, Date.parse('2026-10-31T23:30:00.000Z'));
    assert.equal(message.report, null);
  });

  it('decodes base64 and quoted-printable bodies in their charsets, and turns an HTML-only message into text', async () => {
    const base64 = await read(
      mail({ transferEncoding: 'base64', body: Buffer.from('Grüße aus Köln — gern!', 'utf8').toString('base64') }),
    );
    assert.equal(base64.body, 'Grüße aus Köln — gern!');
    const latin1 = await read(
      mail({
        contentType: 'text/plain; charset=iso-8859-1',
        transferEncoding: 'quoted-printable',
        body: 'D=E9j=E0 vu=\r\n, tr=E8s bien.',
      }),
    );
    assert.equal(latin1.body, 'Déjà vu, très bien.');
    const html = await read(
      mail({
        contentType: 'text/html; charset=utf-8',
        body: '<div>Hello <i>there</i></div><ul><li>one</li><li>two</li></ul>',
      }),
    );
    assert.equal(html.body, 'Hello there\n * one\n * two');
    const alternative = await read(
      [
        'From: ana@blog.example',
        'Subject: both',
        'Content-Type: multipart/alternative; boundary=b',
        '',
        '--b',
        'Content-Type: text/plain; charset=utf-8',
        '',
        'The text part.',
        '--b',
        'Content-Type: text/html; charset=utf-8',
        '',
        '<p>The HTML part.</p>',
        '--b--',
        '',
      ].join('\r\n'),
    );
    assert.equal(alternative.body, 'The text part.');
  });

  it('reads a delivery status notification: each recipient’s action and status, and the original’s Message-ID from either part', async () => {
    const headers = await read(
      dsn({ original: outboxId('msg_9'), recipient: 'Gone@Blog.example', action: 'failed', status: '5.1.1' }),
    );
    assert.deepEqual(headers.report, {
      recipients: [{ address: 'gone@blog.example', action: 'failed', status: '5.1.1' }],
      originalMessageId: '<msg_9@trailgear.example>',
    });
    assert.equal(headers.body, 'This is the mail system. Your message to Gone@Blog.example could not be delivered.');
    const whole = await read(
      dsn({
        original: outboxId('msg_8'),
        recipient: 'x@blog.example',
        action: 'delayed',
        status: '4.4.1',
        embed: 'message',
      }),
    );
    assert.equal(whole.report!.originalMessageId, '<msg_8@trailgear.example>');
    assert.equal(deliveryOutcome(whole.report!), 'delayed');
    // A multipart/report of another kind (a read receipt) is no delivery status notification.
    const receipt = await read(
      [
        'From: ana@blog.example',
        'Subject: Read: idea',
        'Content-Type: multipart/report; report-type=disposition-notification; boundary=r',
        '',
        '--r',
        'Content-Type: text/plain',
        '',
        'Your message was read.',
        '--r--',
        '',
      ].join('\r\n'),
    );
    assert.equal(receipt.report, null);
  });

  it('refuses a message without a From address, and keeps a bad Date out', async () => {
    await assert.rejects(read('just some words\r\n'), UnreadableMessage);
    await assert.rejects(read(mail({ from: 'undisclosed-recipients:;' })), UnreadableMessage);
    const badDate = await read(mail({ date: null, headers: { Date: 'the day after tomorrow' } }));
    assert.equal(badDate.date, null);
  });

  it('identifies a message by its Message-ID, else by a hash of From, Date, Subject and body', () => {
    const fields = { from: 'Ana@Blog.example', subject: 'Hi', body: 'Hello', date: '2026-11-01T12:00:00.000Z' };
    const a = inboundIdentity(messageOfFields(fields));
    assert.match(a, /^hash:[0-9a-f]{64}$/);
    assert.equal(inboundIdentity(messageOfFields({ ...fields, from: 'ana@blog.example' })), a);
    assert.notEqual(inboundIdentity(messageOfFields({ ...fields, body: 'Hello!' })), a);
    assert.notEqual(inboundIdentity(messageOfFields({ ...fields, date: '2026-11-01T12:00:01.000Z' })), a);
    assert.equal(inboundIdentity(messageOfFields({ ...fields, headers: { 'Message-ID': '<x@y>' } })), '<x@y>');
  });

  it('turns HTML into text: paragraphs, line breaks, lists, a quoted original, nothing of head, script or style', async () => {
    const html = [
      '<html><head><title>Re: idea</title><style>p { color: red }</style></head><body>',
      '<script>var tracked = 1;</script>',
      '<div>Sounds <b>good</b>,&nbsp;thanks!<br>Two   things:</div>',
      '<ol><li>a&amp;b</li><li>c</li></ol><ul><li>d</li></ul>',
      '<table><tr><td>cell</td><td>next</td></tr></table>',
      '<pre>kept   as\n  written</pre>',
      '<div class="gmail_quote">On Mon, Mia wrote:<br>',
      '<blockquote><p>Would you be interested?</p><p>Best, Mia</p></blockquote></div>',
      '</body></html>',
    ].join('');
    const message = await read(mail({ contentType: 'text/html; charset=utf-8', body: html }));
    assert.equal(
      message.body,
      [
        'Sounds good, thanks!',
        'Two things:',
        ' 1. a&b',
        ' 2. c',
        ' * d',
        'cell next',
        '',
        'kept   as',
        '  written',
        '',
        'On Mon, Mia wrote:',
        '',
        '> Would you be interested?',
        '',
        '> Best, Mia',
      ].join('\n'),
    );
    assert.equal(
      ownText(message.body),
      'Sounds good, thanks!\nTwo things:\n 1. a&b\n 2. c\n * d\ncell next\n\nkept   as\n  written',
    );
  });

  it('reads at most 256 KiB of HTML, keeps 64 Ki characters of text and 998 of a subject, and refuses over 128 parts', async () => {
    // Numbered paragraphs, much markup and little text, past 256 KiB of HTML: the text stops where
    // the HTML read stops (and under 64 Ki characters).
    const html = Array.from({ length: 4000 }, (_, n) => `<p class="${'c'.repeat(64)}">p${n}</p>`).join('');
    const whole = html.slice(0, MAX_HTML_CHARS).lastIndexOf('</p>');
    const last = Number(/p(\d+)$/.exec(html.slice(0, whole))![1]);
    const lines = (await read(mail({ contentType: 'text/html; charset=utf-8', body: html }))).body.split('\n');
    assert.ok(lines.includes(`p${last}`) && !lines.includes(`p${last + 2}`), lines.slice(-3).join(' '));
    assert.equal(lines[0], 'p0');

    const long = await read(mail({ subject: 'S'.repeat(5000), body: 'x'.repeat(100_000) }));
    assert.equal(long.body.length, MAX_BODY_CHARS);
    assert.equal(long.subject, 'S'.repeat(998));

    const parts = (n: number) =>
      [
        'From: ana@blog.example',
        'Content-Type: multipart/mixed; boundary=b',
        '',
        ...Array.from({ length: n }, (_, i) => `--b\r\nContent-Type: text/plain\r\n\r\npart ${i}`),
        '--b--',
        '',
      ].join('\r\n');
    // The message counts as one of its parts.
    assert.equal((await read(parts(MAX_PARTS - 1))).body.split('\n').length, MAX_PARTS - 1);
    await assert.rejects(read(parts(MAX_PARTS)), UnreadableMessage);
  });

  it('reads a message within inbox.parseTimeoutMs or not at all, and spends next to nothing on it after', async () => {
    await read(mail()); // mailparser loaded: the time below is the message's
    await assert.rejects(parseMessage(boundaryMaze(126, 8_000_000), 250), {
      name: 'UnreadableMessage',
      message: 'the message was not read within inbox.parseTimeoutMs (250 ms)',
    });
    // The rest of its source never reaches the parser (seconds of CPU). The bound is the whole
    // process's CPU over a second, so it leaves room for what else the test process does meanwhile
    // (its garbage collection, other suites' timers: 155 ms seen once in CI's shard at a load
    // average of 4), far below the seconds the code before spent; nothing reaches the process as
    // an error.
    const before = process.cpuUsage();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const spent = process.cpuUsage(before);
    assert.ok(spent.user + spent.system < 400_000, `${(spent.user + spent.system) / 1000} ms of CPU after`);
  });

  it('reads ids, header blocks and words in one pass over input of any size', () => {
    assert.deepEqual(messageIds(' <a@b>  <c@d>'), ['<a@b>', '<c@d>']);
    assert.deepEqual(messageIds('bare@id.example'), ['<bare@id.example>']);
    assert.deepEqual(messageIds('<unclosed@x'), []);
    assert.equal(localPart('<msg_3q2-7wAbCdEfGh@trailgear.example>'), 'msg_3q2-7wAbCdEfGh');
    assert.deepEqual(
      headerGroups('Reporting-MTA: dns; mx\r\n\r\nFinal-Recipient: rfc822;\r\n a@b.example\r\nAction: failed\r\n'),
      [
        new Map([['reporting-mta', 'dns; mx']]),
        new Map([
          ['final-recipient', 'rfc822; a@b.example'],
          ['action', 'failed'],
        ]),
      ],
    );
    // Hostile shapes that a backtracking pattern would choke on finish, bounded.
    const hostile = `${'<'.repeat(200_000)}${'@'.repeat(200_000)}`;
    assert.deepEqual(messageIds(hostile), []);
    assert.equal(headerGroups(`x:${' '.repeat(300_000)}`).length, 1);
    assert.equal(ownText(`${'>'.repeat(100_000)}\n`.repeat(20)), '');
    assert.equal(classifyByPhrases(`${"let'".repeat(100_000)}?`), 'question');
  });
});

describe('classifying a message', () => {
  const automatic = (headers: Record<string, string>) => isAutomatic(new Map(Object.entries(headers)));

  it('calls a message automatic by Auto-Submitted (not no), X-Autoreply, X-Autorespond or Precedence: auto_reply', () => {
    assert.equal(automatic({ 'auto-submitted': 'auto-replied' }), true);
    assert.equal(automatic({ 'auto-submitted': 'auto-generated; type=vacation' }), true);
    assert.equal(automatic({ 'auto-submitted': 'No' }), false);
    assert.equal(automatic({ 'x-autoreply': 'yes' }), true);
    assert.equal(automatic({ 'x-autorespond': '' }), true);
    assert.equal(automatic({ precedence: 'auto_reply' }), true);
    assert.equal(automatic({ precedence: 'bulk' }), false);
    assert.equal(automatic({}), false);
  });

  it('tells an out-of-office from another automatic reply by its subject or first lines', async () => {
    const kind = async (parts: Parameters<typeof mail>[0]) =>
      classifyByHeaders(await read(mail({ headers: { 'Auto-Submitted': 'auto-replied' }, ...parts }))).kind;
    assert.equal(await kind({ subject: 'Out of Office: Ana' }), 'out_of_office');
    assert.equal(
      await kind({ subject: 'Automatic reply', body: 'Hello,\nI am on holiday until 12 November.' }),
      'out_of_office',
    );
    assert.equal(await kind({ subject: 'Automatic reply', body: 'I’m away from my desk.' }), 'out_of_office');
    assert.equal(await kind({ subject: 'Re: idea', body: 'Vacation mode: back soon.' }), 'out_of_office');
    assert.equal(await kind({ subject: 'Ticket #123 received', body: 'We will answer soon.' }), 'auto_reply');
    assert.equal(
      await kind({ subject: 'Takeaway menu', body: 'Our opening hours.' }),
      'auto_reply',
      'whole words only',
    );
  });

  it('classifies a notification by its recipients’ actions: failed (or 5.x.x) is a bounce; delays and successes are not stored', async () => {
    const report = (action: 'failed' | 'delayed' | 'delivered', status: string) =>
      read(dsn({ original: outboxId('m'), recipient: 'a@b.example', action, status }));
    assert.deepEqual(classifyByHeaders(await report('failed', '5.1.1')), { kind: 'bounce' });
    assert.deepEqual(classifyByHeaders(await report('delayed', '4.4.7')), {
      kind: 'notStored',
      reason: 'a delivery delay notification',
    });
    assert.equal(classifyByHeaders(await report('delivered', '2.0.0')).kind, 'notStored');
    assert.equal(
      deliveryOutcome({ originalMessageId: null, recipients: [{ address: null, action: '', status: '5.7.1' }] }),
      'failed',
    );
    assert.equal(
      deliveryOutcome({ originalMessageId: null, recipients: [{ address: null, action: '', status: '4.2.2' }] }),
      'delayed',
    );
  });

  it('classifies a human reply by the phrases of the table, in its own words only', () => {
    const cases: [string, string][] = [
      ["I'm not interested, sorry.", 'not_interested'],
      ['We would not be interested in that.', 'not_interested'],
      ['No thanks.', 'not_interested'],
      ['No thank you!', 'not_interested'],
      ['Please UNSUBSCRIBE me', 'not_interested'],
      ['Remove me from your list', 'not_interested'],
      ['Stop emailing me.', 'not_interested'],
      ['Interested — what are the terms?', 'interested'],
      ['Sounds good to me', 'interested'],
      ['Happy to have a look.', 'interested'],
      ['Yes please', 'interested'],
      ['Send it over', 'interested'],
      ['Let’s do it', 'interested'],
      ["let's talk", 'interested'],
      ['Is it paid?', 'question'],
      ['Thanks, received.', 'unclassified'],
      ['Uninterested parties aside, thanks.', 'unclassified'],
    ];
    for (const [text, expected] of cases) assert.equal(classifyByPhrases(text), expected, text);
    // The quoted original (our own question) does not count.
    const reply = ownText(
      'Thanks, noted.\r\n\r\nOn Mon, 2 Nov 2026 at 09:00, Mia <me@trailgear.example> wrote:\r\n> Would you be interested? Let us know.',
    );
    assert.equal(reply, 'Thanks, noted.');
    assert.equal(classifyByPhrases(reply), 'unclassified');
    assert.equal(
      ownText('Great!\n> Interested?\nSee above.\n-----Original Message-----\nLet me know?'),
      'Great!\nSee above.',
    );
    assert.equal(ownText('Ok\n\nFrom: Mia <me@trailgear.example>\nSent: Monday\nInterested?'), 'Ok');
    assert.equal(asksToStop('Please remove me.'), true);
    assert.equal(asksToStop('No thanks.'), false);
    assert.equal(wordsOf('Don’t STOP—emailing!'), " don't stop emailing ");
  });

  it('changes the thread as the table says, for every classification', () => {
    const table = Object.fromEntries(THREAD_CLASSIFICATIONS.map((c) => [c, threadChanges(c)]));
    assert.deepEqual(table, {
      interested: { status: 'replied', outcome: 'positive' },
      not_interested: { status: 'replied', outcome: 'negative' },
      question: { status: 'replied', outcome: 'neutral' },
      out_of_office: {},
      auto_reply: {},
      bounce: {},
      unclassified: { status: 'replied' },
    });
  });
});
