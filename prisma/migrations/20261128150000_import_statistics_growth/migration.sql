-- The refresh after an import compared the rows of that one import with what the statistics knew
-- of the whole table, which missed two cases:
--
-- 1. Growth over many imports. Once a tenant's debts were past 100,000 an import of 10,000 never
--    refreshed them again: on a server without autovacuum (this machine's runs with
--    `autovacuum = off`) the planner believed a million-debt table held 110,000 rows. Now the pages
--    of debts are compared with the pages the last ANALYZE saw, so every import since counts.
-- 2. A tenant the statistics have never seen. The planner estimates a tenant's rows from the
--    tenant_id column's most common values (it evaluates app.tenant_id while planning); a tenant
--    absent from them, beside one that fills the table, is estimated at one row in every table, and
--    plans built on that were quadratic: the dial loop's lead query for a 2,000-debt campaign in a
--    database holding one million-debt tenant scanned the new tenant's debts once per contact,
--    3 s a tick under the tenant's communications lock. Now an import refreshes the statistics
--    when its rows are a tenth or more of what they estimate for its tenant and the tenant holds
--    at least 100 debts (counted no further): below that a misplanned query costs little, and a
--    platform of many small tenants would otherwise analyze on nearly every import.
DROP FUNCTION refresh_import_statistics(integer);

CREATE FUNCTION refresh_import_statistics(p_rows_written integer, p_tenant_id uuid)
  RETURNS boolean
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp
  AS $$
  DECLARE
    known_rows real;
    known_pages integer;
    pages bigint := pg_relation_size('public.debts') / current_setting('block_size')::integer;
    vals uuid[];
    freqs real[];
    distinct_values real;
    null_frac real;
    tenant_rows real;
    tenant_debts integer;
    at integer;
  BEGIN
    SELECT reltuples, relpages INTO known_rows, known_pages FROM pg_class WHERE oid = 'public.debts'::regclass;
    SELECT s.most_common_vals::text::uuid[], s.most_common_freqs, s.n_distinct, s.null_frac
      INTO vals, freqs, distinct_values, null_frac
      FROM pg_stats s WHERE s.schemaname = 'public' AND s.tablename = 'debts' AND s.attname = 'tenant_id';
    IF known_rows > 0 AND distinct_values IS NOT NULL THEN
      at := array_position(vals, p_tenant_id);
      IF at IS NOT NULL THEN
        tenant_rows := freqs[at] * known_rows;
      ELSE
        -- What the planner assumes for a value outside the common ones: the rest of the rows
        -- shared evenly by the rest of the distinct values (n_distinct < 0 is a fraction of rows).
        tenant_rows := greatest(1 - coalesce((SELECT sum(f) FROM unnest(freqs) f), 0) - null_frac, 0) * known_rows
          / greatest(CASE WHEN distinct_values < 0 THEN -distinct_values * known_rows ELSE distinct_values END - coalesce(cardinality(vals), 0), 1);
      END IF;
    END IF;
    IF known_rows >= 0 AND p_rows_written < known_rows * 0.1 AND pages < known_pages * 1.1 THEN
      IF tenant_rows IS NOT NULL AND p_rows_written < tenant_rows * 0.1 THEN
        RETURN false;
      END IF;
      SELECT count(*) INTO tenant_debts FROM (SELECT 1 FROM debts WHERE tenant_id = p_tenant_id LIMIT 100) t;
      IF tenant_debts < 100 THEN
        RETURN false;
      END IF;
    END IF;
    ANALYZE debts, debt_contacts, consents;
    RETURN true;
  END
  $$;
REVOKE ALL ON FUNCTION refresh_import_statistics(integer, uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION refresh_import_statistics(integer, uuid) TO dialer_app;
