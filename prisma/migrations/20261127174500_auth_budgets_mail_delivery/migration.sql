-- Reset mail is queued in mail_outbox inside the transaction that issues the link and delivered
-- after commit by the password-reset workflow, which marks it sent. A row without sent_at is a mail
-- nobody has delivered (SMTP_URL unset, or SMTP refused it): the operator's queue.
ALTER TABLE mail_outbox ADD COLUMN sent_at timestamptz(3);
GRANT UPDATE (sent_at) ON mail_outbox TO dialer_app;
CREATE INDEX mail_outbox_undelivered_idx ON mail_outbox (created_at) WHERE sent_at IS NULL;

-- The prune loop (rate-limit-prune:<queue>) deletes expired windows oldest first.
CREATE INDEX rate_limits_expire_idx ON rate_limits (expire);
