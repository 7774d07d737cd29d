-- Agent reachability (CONTRACT section 10). A browser seat is dialable only while its softphone is
-- registered on the switch: `registered` follows the switch's sofia::register, sofia::unregister
-- and sofia::expire events. registration_changed_at is the switch's time of the event last applied
-- (an older event arriving late changes nothing); registration_call_id is the SIP Call-ID of the
-- registration, the one key FreeSWITCH's unregister and expire events carry that no other tenant's
-- seat can share (extensions are unique per tenant only).
-- A human-initiated dial that names an agent reserves it for that call until reserved_until, so the
-- dial loop cannot take the seat while the consumer's phone rings.
ALTER TABLE agents
  ADD COLUMN registered               boolean NOT NULL DEFAULT false,
  ADD COLUMN registration_changed_at  timestamptz(6),
  ADD COLUMN registration_call_id     text,
  ADD COLUMN reserved_call_attempt_id uuid,
  ADD COLUMN reserved_until           timestamptz(3);

CREATE INDEX agents_registration_call_id_idx ON agents (registration_call_id) WHERE registration_call_id IS NOT NULL;

-- The switch's directory (mod_xml_curl) asks before any tenant is known. This narrow lookup answers
-- only the live ephemeral credential of a checked-in browser seat: by its username (globally unique),
-- or by the seat's extension (within one tenant when p_tenant_id is given). Revoked (checked out,
-- superseded) and expired credentials are never returned; the password stays encrypted here.
CREATE FUNCTION switch_directory_credential(p_user text, p_tenant_id uuid)
  RETURNS TABLE (tenant_id uuid, agent_id uuid, sip_extension text, username text, password_ciphertext text, expires_at timestamptz)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
  AS $$
    SELECT c.tenant_id, c.agent_id, a.sip_extension, c.username, c.password_ciphertext, c.expires_at
      FROM agent_sip_credentials c
      JOIN agents a ON a.id = c.agent_id
      JOIN tenants t ON t.id = c.tenant_id
     WHERE (c.username = p_user OR a.sip_extension = p_user)
       AND (p_tenant_id IS NULL OR c.tenant_id = p_tenant_id)
       AND c.revoked_at IS NULL AND c.expires_at > now()
       AND a.status = 'active' AND a.device_mode = 'browser' AND a.presence <> 'offline' AND a.sip_extension IS NOT NULL
       AND t.status = 'active'
     ORDER BY (c.username = p_user) DESC, c.created_at DESC
     LIMIT 2
  $$;

-- A registration event names the credential (sofia::register `username`) or only its Call-ID
-- (sofia::unregister, sofia::expire): which tenant's seat it is about.
CREATE FUNCTION switch_registration_owner(p_username text, p_call_id text)
  RETURNS TABLE (tenant_id uuid, agent_id uuid)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
  AS $$
    SELECT c.tenant_id, c.agent_id FROM agent_sip_credentials c WHERE p_username IS NOT NULL AND c.username = p_username
    UNION
    SELECT a.tenant_id, a.id FROM agents a WHERE p_call_id IS NOT NULL AND a.registration_call_id = p_call_id
  $$;

REVOKE ALL ON FUNCTION switch_directory_credential(text, uuid), switch_registration_owner(text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION switch_directory_credential(text, uuid), switch_registration_owner(text, text) TO dialer_app;
