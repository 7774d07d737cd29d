-- Websocket tickets live a minute and are spent once; kept past that they only grow the table.
-- Minting prunes its tenant's tickets that lapsed more than a day ago (a day leaves room to look
-- into a failed handshake), so the table holds about a day of use.
GRANT DELETE ON ws_tickets TO dialer_app;
CREATE INDEX ws_tickets_tenant_expiry_idx ON ws_tickets (tenant_id, expires_at);
