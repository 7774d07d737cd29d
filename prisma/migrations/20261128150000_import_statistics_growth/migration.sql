-- The refresh after an import compared the rows of that one import with what the statistics knew,
-- so once a tenant's debts were past 100,000 an import of 10,000 never refreshed them again: on a
-- server without autovacuum (this machine's runs with `autovacuum = off`) the planner believed a
-- million-debt table held 110,000 rows. What counts is how far the tables have grown since the
-- statistics were taken, summed over every import since: the pages of debts now against the pages
-- the last ANALYZE saw, besides the rows of the import at hand (which covers a first import into
-- an empty table and one that rewrites rows in place).
CREATE OR REPLACE FUNCTION refresh_import_statistics(p_rows_written integer)
  RETURNS boolean
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp
  AS $$
  DECLARE
    known_rows real;
    known_pages integer;
    pages bigint := pg_relation_size('public.debts') / current_setting('block_size')::integer;
  BEGIN
    SELECT reltuples, relpages INTO known_rows, known_pages FROM pg_class WHERE oid = 'public.debts'::regclass;
    IF known_rows >= 0 AND p_rows_written < known_rows * 0.1 AND pages < known_pages * 1.1 THEN
      RETURN false;
    END IF;
    ANALYZE debts, debt_contacts, consents;
    RETURN true;
  END
  $$;
REVOKE ALL ON FUNCTION refresh_import_statistics(integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION refresh_import_statistics(integer) TO dialer_app;
