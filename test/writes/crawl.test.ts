/**
 * Contact discovery with the `crawl` finder end to end: the request is answered `queued`, the
 * discovery worker crawls local pages (private networks allowed in this test) and completes the
 * job; a 503 is retried after the backoff (fake clock); a loopback target is refused when private
 * networks are not allowed, and the job fails at once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestServer } from '../helpers/harness.js';
import { row, startHttp, startWriteServer, type TestHttp } from './helpers.js';
import { sqlRun } from '../helpers/sql.js';

const BACKOFF = 60_000;

describe('contact discovery through the crawler', () => {
  let pages: TestHttp;
  let failuresLeft = 0;
  before(async () => {
    pages = await startHttp((req, res) => {
      if (failuresLeft > 0) {
        failuresLeft--;
        return void res.writeHead(503).end();
      }
      if (req.url === '/article')
        return void res
          .writeHead(200, { 'content-type': 'text/html' })
          .end('<h1>Best packs</h1><a href="/about">About</a>');
      if (req.url === '/team') {
        return void res
          .writeHead(200, { 'content-type': 'text/html' })
          .end(
            '<script type="application/ld+json">{"@type":"Person","name":"Pat Writer","jobTitle":"Editor in chief","email":"pat@hikingblog.example"}</script>',
          );
      }
      res.writeHead(404).end();
    });
  });
  after(() => pages.close());

  const pointProspectAt = async (t: TestServer) =>
    await sqlRun(
      t.store,
      "UPDATE prospects SET url = ?, contact_paths = ?, content_excerpt = NULL WHERE id = 'pr_text'",
      `${pages.url}/article`,
      JSON.stringify([{ label: 'Team', url: '/team' }]),
    );

  it('queues, crawls, retries a 503 after the backoff, and creates the contact', async () => {
    const t = await startWriteServer({
      config: { 'providers.contactFinder': 'crawl', 'crawl.allowPrivateNetworks': true, 'outbox.backoffMs': BACKOFF },
    });
    try {
      await pointProspectAt(t);
      const token = await t.mintToken('acct_a', ['contacts:write']);
      failuresLeft = 2; // both pages of the first attempt
      const res = await t.request('POST', '/workspaces/prj_a1/prospects/pr_text/contact-discovery', {
        token,
        body: { idempotencyKey: 'crawl-key-1' },
      });
      assert.equal(res.status, 202, JSON.stringify(res.body));
      const jobId = res.body.data.job.id;
      await t.server.workers.discovery.drain();
      let job = await row(t, 'SELECT * FROM discovery_jobs WHERE id = ?', jobId);
      assert.equal(job.status, 'queued');
      assert.equal(job.current_attempt, 1);
      assert.match(job.last_error, /503/);
      assert.equal(Date.parse(job.scheduled_at), t.clock.now() + BACKOFF);
      t.clock.advance(BACKOFF);
      await t.server.workers.discovery.drain();
      job = await row(t, 'SELECT * FROM discovery_jobs WHERE id = ?', jobId);
      assert.equal(job.status, 'completed', job.last_error);
      assert.equal(job.current_attempt, 2);
      const contact = await row(
        t,
        "SELECT * FROM contacts WHERE prospect_id = 'pr_text' AND source_provider = 'crawl'",
      );
      assert.equal(contact.email, 'pat@hikingblog.example');
      assert.equal(contact.full_name, 'Pat Writer');
      assert.equal(contact.role, 'Editor in chief');
      assert.equal(contact.source_url, `${pages.url}/team`);
      assert.equal(contact.source_reference, 'json-ld');
    } finally {
      await t.close();
    }
  });

  it('refuses a loopback target when private networks are not allowed: the job fails without retrying', async () => {
    const t = await startWriteServer({
      config: { 'providers.contactFinder': 'crawl', 'crawl.allowPrivateNetworks': false },
    });
    try {
      await pointProspectAt(t);
      const before = pages.requests.length;
      const token = await t.mintToken('acct_a', ['contacts:write']);
      const res = await t.request('POST', '/projects/prj_a1/prospects/pr_text/contact-discovery', {
        token,
        body: { idempotencyKey: 'crawl-key-2' },
      });
      assert.equal(res.status, 202);
      await t.server.workers.discovery.drain();
      const job = await row(t, 'SELECT * FROM discovery_jobs WHERE id = ?', res.body.data.job.id);
      assert.equal(job.status, 'failed');
      assert.equal(job.current_attempt, 1);
      assert.match(job.last_error, /refused to fetch 127\.0\.0\.1/);
      assert.equal(pages.requests.length, before, 'no request reached the loopback server');
    } finally {
      await t.close();
    }
  });
});
