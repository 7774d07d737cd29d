import nodemailer, { type Transporter } from 'nodemailer';
import { authMetrics } from './auth-metrics';
import type { CryptoBox } from './crypto-box';
import type { Database } from './db';
import type { Logger } from './logger';
import { withTenant, type SqlTx, type Tx } from './tenancy';

export interface Mail {
  to: string;
  subject: string;
  text: string;
  kind: string;
}

export interface Mailer {
  /** True when SMTP_URL is set: queued mail is delivered; otherwise it stays in mail_outbox. */
  readonly smtp: boolean;
  /**
   * Queues the mail (body encrypted) in mail_outbox inside the caller's transaction and returns its
   * id. Nothing leaves the process here: delivery happens after commit (deliverQueuedMail), so a
   * rolled-back transaction never sent anything and a slow SMTP server never holds a transaction open.
   */
  enqueue(tx: Tx, tenantId: string, mail: Mail): Promise<string>;
  /** The same, inside a plain-SQL tenant transaction (withTenantSql). */
  enqueueSql(sql: SqlTx, tenantId: string, mail: Mail): Promise<string>;
  /** Hands one message to SMTP; throws when SMTP is not configured or refuses it. */
  transmit(message: { to: string; subject: string; text: string }): Promise<void>;
}

export function createMailer(opts: { smtpUrl?: string; from: string; box: CryptoBox; logger: Logger }): Mailer {
  const transport: Transporter | null = opts.smtpUrl ? nodemailer.createTransport(opts.smtpUrl) : null;
  return {
    smtp: transport !== null,
    async enqueue(tx, tenantId, mail) {
      const row = await tx.mailOutbox.create({
        data: { tenantId, toAddress: mail.to, subject: mail.subject, bodyCiphertext: opts.box.encrypt(mail.text), kind: mail.kind },
        select: { id: true },
      });
      return row.id;
    },
    async enqueueSql(sql, tenantId, mail) {
      const [row] = await sql.query<{ id: string }>(
        'INSERT INTO mail_outbox (tenant_id, to_address, subject, body_ciphertext, kind) VALUES ($1, $2, $3, $4, $5) RETURNING id',
        [tenantId, mail.to, mail.subject, opts.box.encrypt(mail.text), mail.kind],
      );
      return row!.id;
    },
    async transmit(message) {
      if (!transport) throw new Error('SMTP_URL is not set');
      await transport.sendMail({ from: opts.from, to: message.to, subject: message.subject, text: message.text });
    },
  };
}

export type MailDelivery = 'sent' | 'already_sent' | 'kept' | 'gone';

/**
 * Delivers one queued mail, after the transaction that queued it committed. Sent at least once: a
 * crash between SMTP's acceptance and the sent_at write sends it again on retry. Without SMTP the
 * mail stays in mail_outbox and the operator is told (a warning and mail_outbox_deliveries_total
 * {outcome="kept"}), never with the address or the body.
 */
export async function deliverQueuedMail(
  deps: { db: Database; box: CryptoBox; mailer: Mailer; logger: Logger },
  tenantId: string,
  outboxId: string,
): Promise<MailDelivery> {
  const row = await withTenant(deps.db, tenantId, (tx) => tx.mailOutbox.findUnique({ where: { id: outboxId } }));
  if (!row) return 'gone';
  if (row.sentAt) return 'already_sent';
  const log = deps.logger.child({ tenant_id: tenantId, mail_id: outboxId, kind: row.kind });
  if (!deps.mailer.smtp) {
    authMetrics.mail(row.kind, 'kept');
    log.warn('SMTP_URL is not set: mail kept undelivered in mail_outbox');
    return 'kept';
  }
  try {
    await deps.mailer.transmit({ to: row.toAddress, subject: row.subject, text: deps.box.decrypt(row.bodyCiphertext) });
  } catch (err) {
    authMetrics.mail(row.kind, 'failed');
    // Codes only: an SMTP error message may quote the recipient.
    const { code, responseCode } = err as { code?: string; responseCode?: number };
    log.warn({ code, response_code: responseCode }, 'SMTP refused a queued mail; retrying');
    throw err;
  }
  await withTenant(deps.db, tenantId, (tx) => tx.mailOutbox.updateMany({ where: { id: outboxId, sentAt: null }, data: { sentAt: new Date() } }));
  authMetrics.mail(row.kind, 'sent');
  log.info('mail sent through SMTP');
  return 'sent';
}
