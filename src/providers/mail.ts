/** Mail transports of the outbox: `log` (offline: records, never delivers) and `smtp` (nodemailer). */
import nodemailer from 'nodemailer';
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
 * by `smtp.passwordEnv` when a user is set. A 5xx reply is permanent (not retried); everything
 * else (connection refused, timeouts, 4xx) is retryable.
 */
export function createSmtpTransport(
  options: Config['smtp'],
  env: Record<string, string | undefined> = process.env,
): MailTransport {
  const transporter = nodemailer.createTransport({
    host: options.host,
    port: options.port,
    secure: options.secure,
    auth: options.user ? { user: options.user, pass: env[options.passwordEnv] ?? '' } : undefined,
    connectionTimeout: options.timeoutMs,
    greetingTimeout: options.timeoutMs,
    socketTimeout: options.timeoutMs,
  });
  return {
    name: 'smtp',
    async send(mail) {
      try {
        await transporter.sendMail({
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
        const permanent = typeof responseCode === 'number' && responseCode >= 500 && responseCode < 600;
        const detail = responseCode ? (response ?? String(responseCode)) : (code ?? 'connection failure');
        throw new ProviderError(`SMTP: ${detail.replace(/\s+/g, ' ').slice(0, 200)}`, !permanent);
      }
    },
    close() {
      transporter.close();
    },
  };
}
