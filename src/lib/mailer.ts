import nodemailer, { type Transporter } from 'nodemailer';
import type { CryptoBox } from './crypto-box';
import type { Logger } from './logger';
import type { Tx } from './tenancy';

export interface Mail {
  to: string;
  subject: string;
  text: string;
  kind: string;
}

export interface Mailer {
  /**
   * Sends through SMTP when configured; otherwise queues the mail (encrypted) in mail_outbox inside
   * the caller's transaction and logs that it did, without the body.
   */
  send(tx: Tx, tenantId: string, mail: Mail): Promise<void>;
}

export function createMailer(opts: { smtpUrl?: string; from: string; box: CryptoBox; logger: Logger }): Mailer {
  const transport: Transporter | null = opts.smtpUrl ? nodemailer.createTransport(opts.smtpUrl) : null;
  return {
    async send(tx, tenantId, mail) {
      if (transport) {
        await transport.sendMail({ from: opts.from, to: mail.to, subject: mail.subject, text: mail.text });
        opts.logger.info({ kind: mail.kind, tenant_id: tenantId }, 'mail sent through SMTP');
        return;
      }
      await tx.mailOutbox.create({
        data: {
          tenantId,
          toAddress: mail.to,
          subject: mail.subject,
          bodyCiphertext: opts.box.encrypt(mail.text),
          kind: mail.kind,
        },
      });
      opts.logger.info({ kind: mail.kind, tenant_id: tenantId }, 'SMTP_URL is not set: mail queued in mail_outbox');
    },
  };
}
