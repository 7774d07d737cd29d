-- Debt pages at a million debts (issue 20). Contacts are read by debt under row security, so every
-- lookup carries debt_id AND tenant_id. With only (debt_id) and (tenant_id, phone_e164) indexed, a
-- planner without fresh statistics ANDed the two bitmaps and walked the whole tenant's phone index
-- for each row of a page (2.4 s for 200 debts); one index on both columns answers the lookup alone.
CREATE INDEX debt_contacts_debt_tenant_idx ON debt_contacts (debt_id, tenant_id);
DROP INDEX debt_contacts_debt_idx;

-- A bulk import can multiply a tenant's debts long before autovacuum samples them again, and plans
-- chosen on the old counts stay bad until it does. The app role does not own the tables (row
-- security is forced on it), so the refresh runs as the owner, only for the tables an import
-- writes, and only when the rows just written are a tenth or more of what the statistics know.
CREATE FUNCTION refresh_import_statistics(p_rows_written integer)
  RETURNS boolean
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp
  AS $$
  DECLARE
    known real;
  BEGIN
    SELECT reltuples INTO known FROM pg_class WHERE oid = 'public.debts'::regclass;
    IF known >= 0 AND p_rows_written < known * 0.1 THEN
      RETURN false;
    END IF;
    ANALYZE debts, debt_contacts, consents;
    RETURN true;
  END
  $$;
REVOKE ALL ON FUNCTION refresh_import_statistics(integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION refresh_import_statistics(integer) TO dialer_app;
