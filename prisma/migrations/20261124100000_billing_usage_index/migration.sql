-- Metered usage (the billing pass, every minute per tenant, and the account, summary and invoice
-- reads) resolves only the calls answered inside its window, originals and corrections alike, and
-- sums only the charged SMS rows of the window.
CREATE INDEX call_attempts_answered_idx ON call_attempts (tenant_id, answered_at) WHERE answered_at IS NOT NULL;
CREATE INDEX sms_messages_charged_idx ON sms_messages (tenant_id, occurred_at) INCLUDE (segments, cost_usd) WHERE cost_usd IS NOT NULL;
