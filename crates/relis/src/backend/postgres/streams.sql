-- The redis_streams view over the PostgreSQL backend (SQL.*, `sql.rs`): a stream's entries
-- decoded from its DUMP payload (STREAM_LISTPACKS_2, as Redis 7.0 and Relis write it), with
-- the functions of `views.sql`.
--
-- The payload holds listpack nodes, each keyed by its master id (16 bytes: ms and seq,
-- big-endian). A node's listpack starts with its master entry (live count, deleted count, the
-- master fields, a 0), then each entry: flags (1 deleted, 2 same fields as the master),
-- ms and seq as differences from the master id, the values (same fields) or a field count and
-- the pairs, and the entry's element count.

-- An unsigned big-endian 64-bit integer at `pos`.
CREATE FUNCTION relis_be_u64(b bytea, pos integer) RETURNS numeric
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    v numeric := 0;
BEGIN
    FOR i IN 0 .. 7 LOOP
        v := v * 256 + get_byte(b, pos + i);
    END LOOP;
    RETURN v;
END $$;

-- The live entries of a stream's payload, in id order: ms, seq and the fields and values as a
-- JSON array of strings [field, value, ...].
CREATE FUNCTION relis_stream_entries(payload bytea)
RETURNS TABLE (ms numeric, seq numeric, fields json)
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    l record;
    s record;
    p integer;
    master_ms numeric;
    master_seq numeric;
    e bytea[];
    i integer;
    nf integer;
    master text[];
    flags integer;
    n integer;
    pairs text[];
BEGIN
    IF get_byte(payload, 0) NOT IN (15, 19, 21) THEN
        RETURN;
    END IF;
    l := relis_rdb_len(payload, 1);
    p := l.next;
    FOR node IN 1 .. l.len LOOP
        s := relis_rdb_string(payload, p);
        p := s.next;
        master_ms := relis_be_u64(s.val, 0);
        master_seq := relis_be_u64(s.val, 8);
        s := relis_rdb_string(payload, p);
        p := s.next;
        SELECT array_agg(v ORDER BY lp.i) INTO e FROM relis_listpack(s.val) lp;
        -- Arrays from 1: e[1] count, e[2] deleted, e[3] the master field count.
        nf := convert_from(e[3], 'UTF8')::integer;
        master := ARRAY(SELECT relis_text(e[k]) FROM generate_series(4, 3 + nf) k);
        i := 5 + nf;
        WHILE i <= coalesce(array_length(e, 1), 0) LOOP
            flags := convert_from(e[i], 'UTF8')::integer;
            ms := master_ms + convert_from(e[i + 1], 'UTF8')::numeric;
            seq := master_seq + convert_from(e[i + 2], 'UTF8')::numeric;
            i := i + 3;
            pairs := ARRAY[]::text[];
            IF flags & 2 = 2 THEN
                FOR k IN 1 .. nf LOOP
                    pairs := pairs || master[k] || relis_text(e[i + k - 1]);
                END LOOP;
                i := i + nf;
            ELSE
                n := convert_from(e[i], 'UTF8')::integer;
                FOR k IN 0 .. 2 * n - 1 LOOP
                    pairs := pairs || relis_text(e[i + 1 + k]);
                END LOOP;
                i := i + 1 + 2 * n;
            END IF;
            i := i + 1;
            IF flags & 1 = 0 THEN
                fields := array_to_json(pairs);
                RETURN NEXT;
            END IF;
        END LOOP;
    END LOOP;
END $$;

-- As the SQLite backend's: one row per entry, its id as Redis writes it, ms and seq as
-- numbers (NULL past 2^63 - 1), the fields and values as a JSON array (json_array_elements).
CREATE VIEW redis_streams AS
SELECT k.db, relis_text(k.key) AS key, e.ms || '-' || e.seq AS id,
       CASE WHEN e.ms < 9223372036854775808 THEN e.ms::bigint END AS ms,
       CASE WHEN e.seq < 9223372036854775808 THEN e.seq::bigint END AS seq,
       e.fields
FROM relis_keys k, relis_stream_entries(k.value) e
WHERE get_byte(k.value, 0) IN (15, 19, 21)
  AND (k.expire_at IS NULL OR k.expire_at > relis_now());

-- redis_keys counts a stream's entries too (as on SQLite).
CREATE OR REPLACE FUNCTION relis_count(payload bytea) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
    CASE get_byte(payload, 0)
    WHEN 0 THEN RETURN 1;
    WHEN 2, 4, 5 THEN RETURN (relis_rdb_len(payload, 1)).len;
    WHEN 11, 16, 17, 18 THEN RETURN (SELECT count(*) FROM relis_elements(payload));
    WHEN 15, 19, 21 THEN RETURN (SELECT count(*) FROM relis_stream_entries(payload));
    ELSE RETURN NULL;
    END CASE;
END $$;
