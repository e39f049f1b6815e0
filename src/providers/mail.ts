/** Mail transports of the outbox: `log` (offline: records, never delivers) and `smtp` (nodemailer). */
import type { Transporter } from 'nodemailer';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { ProviderError, type MailTransport } from './types.js';

/** Accepts every message without delivering it; the outbox then marks it `sent`. */
export function createLogTransport(logger: Logger): MailTransport {
  return {
    name: 'log',
    async send(mail) {
      logger.log('info', 'mail recorded by the log transport (not delivered)', {
        messageId: mail.messageId,
        recipients: mail.to.length + mail.cc.length,
      });
    },
    close() {},
  };
}

/**
 * Delivers through one SMTP relay (`smtp.host`, `port`, `secure`; STARTTLS when offered and not
 * `secure`), authenticating as `smtp.user` with the password in the environment variable named
 * by `smtp.passwordEnv` when a user is set.
 *
 * With `smtp.requireTLS` (unset: true when a user or a password is set) the connection must be
 * upgraded with STARTTLS before anything else is sent: a relay that offers no STARTTLS (or
 * someone on the path who strips it) gets no `AUTH`, no password and no message, and the send
 * fails with a `ProviderError` that says so (retryable: the outbox tries again, then marks the
 * message failed). A local relay without authentication keeps working without TLS.
 *
 * A 5xx reply is permanent (not retried); everything else (connection refused, timeouts, 4xx,
 * no TLS) is retryable.
 */
export function createSmtpTransport(
  options: Config['smtp'],
  env: Record<string, string | undefined> = process.env,
): MailTransport {
  const password = env[options.passwordEnv] ?? '';
  const requireTLS = options.requireTLS ?? (options.user !== '' || password !== '');
  // nodemailer is loaded at the first send, not at every start: most starts never send (the
  // default transport is `log`), and loading it is part of every start's module evaluation
  // (docs/performance.md, "Cold start and the environment").
  let transporter: Promise<Transporter> | null = null;
  const transport = () =>
    (transporter ??= import('nodemailer').then(({ default: nodemailer }) =>
      nodemailer.createTransport({
        host: options.host,
        port: options.port,
        secure: options.secure,
        requireTLS,
        auth: options.user ? { user: options.user, pass: password } : undefined,
        connectionTimeout: options.timeoutMs,
        greetingTimeout: options.timeoutMs,
        socketTimeout: options.timeoutMs,
      }),
    ));
  return {
    name: 'smtp',
    async send(mail) {
      const smtp = await transport();
      try {
        await smtp.sendMail({
          messageId: mail.messageId,
          from: mail.from.name ? { name: mail.from.name, address: mail.from.address } : mail.from.address,
          replyTo: mail.replyTo ?? undefined,
          to: mail.to,
          cc: mail.cc.length ? mail.cc : undefined,
          subject: mail.subject,
          text: mail.text,
        });
      } catch (error) {
        const { responseCode, response, code } = error as { responseCode?: number; response?: string; code?: string };
        if (code === 'ETLS' && requireTLS && !options.secure) {
          const why = (response ?? (error as Error).message).replace(/\s+/g, ' ').slice(0, 200);
          throw new ProviderError(
            `SMTP: the relay ${options.host}:${options.port} did not switch to TLS (STARTTLS: ${why}); smtp.requireTLS is on, so nothing was sent, credentials included`,
          );
        }
        const permanent = typeof responseCode === 'number' && responseCode >= 500 && responseCode < 600;
        const detail = responseCode ? (response ?? String(responseCode)) : (code ?? 'connection failure');
        throw new ProviderError(`SMTP: ${detail.replace(/\s+/g, ' ').slice(0, 200)}`, !permanent);
      }
    },
    close() {
      void transporter?.then((smtp) => smtp.close());
    },
  };
}
