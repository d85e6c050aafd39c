-- SQL.* over the PostgreSQL backend (`sql.rs`): the sandbox role a node provisions at first use
-- (readable by the backend's user only), the prepared statements every node shares, and the
-- views of Redis data.
CREATE TABLE relis_sql_role (name text NOT NULL, password text NOT NULL);
CREATE TABLE relis_sql_statements (
    name text PRIMARY KEY,
    sql text NOT NULL,
    params integer NOT NULL,
    readonly boolean NOT NULL
);

-- The redis_* views of Redis data over the PostgreSQL backend (SQL.*, ARCHITECTURE.md 10.1).
--
-- relis_keys.value holds each key's value as Redis's DUMP payload (the RDB object: a type
-- byte, the encoded value, then the RDB version and a CRC-64). These functions decode the
-- encodings Relis's DUMP writes (those redis-server 7.0 writes): strings (raw, integer, LZF),
-- QUICKLIST_2 lists of listpack nodes, intset and plain sets, listpack and plain hashes,
-- listpack and ZSET_2 sorted sets; streams in `streams.sql` (migration 7).
-- Everything is IMMUTABLE and PARALLEL SAFE: a payload's contents are a function of its bytes.
--
-- The views show what the SQLite backend's show, with the same columns: live keys only (expiry
-- against the statement's clock), keys, fields, members and values as text (bytes that are not
-- UTF-8 appear in bytea's escape format).

-- An RDB length at byte `pos` (0-based): the length, or for the special encodings (the top two
-- bits set) `enc` 0-3 (int8, int16, int32, LZF) and no length; `next` is the byte after it.
CREATE FUNCTION relis_rdb_len(b bytea, pos integer, OUT len bigint, OUT enc integer,
                              OUT next integer)
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    t integer := get_byte(b, pos);
BEGIN
    enc := -1;
    CASE t >> 6
    WHEN 0 THEN
        len := t & 63; next := pos + 1;
    WHEN 1 THEN
        len := ((t & 63) << 8) | get_byte(b, pos + 1); next := pos + 2;
    WHEN 2 THEN
        len := 0;
        FOR i IN 1 .. CASE WHEN t = 128 THEN 4 ELSE 8 END LOOP
            len := (len << 8) | get_byte(b, pos + i);
        END LOOP;
        next := pos + CASE WHEN t = 128 THEN 5 ELSE 9 END;
    ELSE
        enc := t & 63; next := pos + 1;
    END CASE;
END $$;

-- A little-endian two's-complement integer of `n` bytes at `pos`.
CREATE FUNCTION relis_le_int(b bytea, pos integer, n integer) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    v numeric := 0;
BEGIN
    FOR i IN REVERSE n - 1 .. 0 LOOP
        v := v * 256 + get_byte(b, pos + i);
    END LOOP;
    IF v >= 2::numeric ^ (8 * n - 1) THEN
        v := v - 2::numeric ^ (8 * n);
    END IF;
    RETURN v::bigint;
END $$;

-- LZF decompression (liblzf's format, which RDB uses) of `src` into `ulen` bytes. The output
-- is built in an integer array (updated in place) and turned into bytes once.
CREATE FUNCTION relis_lzf(src bytea, ulen integer) RETURNS bytea
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    o integer[] := array_fill(0, ARRAY[ulen]);
    ip integer := 0;
    op integer := 0;
    n integer := length(src);
    ctrl integer;
    len integer;
    ref integer;
BEGIN
    WHILE ip < n LOOP
        ctrl := get_byte(src, ip);
        ip := ip + 1;
        IF ctrl < 32 THEN
            FOR i IN 0 .. ctrl LOOP
                o[op + 1] := get_byte(src, ip);
                op := op + 1;
                ip := ip + 1;
            END LOOP;
        ELSE
            len := ctrl >> 5;
            IF len = 7 THEN
                len := len + get_byte(src, ip);
                ip := ip + 1;
            END IF;
            ref := op - ((ctrl & 31) << 8) - get_byte(src, ip) - 1;
            ip := ip + 1;
            IF ref < 0 OR op + len + 2 > ulen THEN
                RAISE EXCEPTION 'relis: bad LZF data';
            END IF;
            FOR i IN 0 .. len + 1 LOOP
                o[op + 1] := o[ref + 1];
                op := op + 1;
                ref := ref + 1;
            END LOOP;
        END IF;
    END LOOP;
    RETURN (SELECT coalesce(decode(string_agg(lpad(to_hex(x), 2, '0'), '' ORDER BY i), 'hex'),
                            ''::bytea)
            FROM unnest(o) WITH ORDINALITY AS t(x, i));
END $$;

-- An RDB string at `pos`: its bytes (integers as their decimal text) and the byte after it.
CREATE FUNCTION relis_rdb_string(b bytea, pos integer, OUT val bytea, OUT next integer)
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    l record;
    c record;
    u record;
BEGIN
    l := relis_rdb_len(b, pos);
    CASE l.enc
    WHEN -1 THEN
        val := substring(b FROM l.next + 1 FOR l.len::integer);
        next := l.next + l.len::integer;
    WHEN 0, 1, 2 THEN
        val := convert_to(relis_le_int(b, l.next, 1 << l.enc)::text, 'UTF8');
        next := l.next + (1 << l.enc);
    ELSE
        c := relis_rdb_len(b, l.next);
        u := relis_rdb_len(b, c.next);
        val := relis_lzf(substring(b FROM u.next + 1 FOR c.len::integer), u.len::integer);
        next := u.next + c.len::integer;
    END CASE;
END $$;

-- The entries of a listpack, in order, from 0; integers as their decimal text.
CREATE FUNCTION relis_listpack(lp bytea) RETURNS TABLE (i integer, v bytea)
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    p integer := 6;
    e integer;
    n integer;
    l integer;
BEGIN
    i := 0;
    LOOP
        e := get_byte(lp, p);
        EXIT WHEN e = 255;
        IF e < 128 THEN
            v := convert_to(e::text, 'UTF8'); l := 1;
        ELSIF e < 192 THEN
            n := e & 63; v := substring(lp FROM p + 2 FOR n); l := n + 1;
        ELSIF e < 224 THEN
            n := ((e & 31) << 8) | get_byte(lp, p + 1);
            v := convert_to((CASE WHEN n >= 4096 THEN n - 8192 ELSE n END)::text, 'UTF8');
            l := 2;
        ELSIF e < 240 THEN
            n := ((e & 15) << 8) | get_byte(lp, p + 1);
            v := substring(lp FROM p + 3 FOR n); l := n + 2;
        ELSIF e = 240 THEN
            n := relis_le_int(lp, p + 1, 4)::integer;
            v := substring(lp FROM p + 6 FOR n); l := n + 5;
        ELSE
            n := CASE e WHEN 241 THEN 2 WHEN 242 THEN 3 WHEN 243 THEN 4 ELSE 8 END;
            v := convert_to(relis_le_int(lp, p + 1, n)::text, 'UTF8'); l := n + 1;
        END IF;
        p := p + l + CASE WHEN l < 128 THEN 1 WHEN l < 16384 THEN 2 WHEN l < 2097152 THEN 3
                          WHEN l < 268435456 THEN 4 ELSE 5 END;
        RETURN NEXT;
        i := i + 1;
    END LOOP;
END $$;

-- An IEEE 754 double stored little-endian at `pos` (ZSET_2's binary scores).
CREATE FUNCTION relis_le_double(b bytea, pos integer) RETURNS double precision
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    bits bigint := relis_le_int(b, pos, 8);
    e integer := ((bits >> 52) & 2047)::integer;
    m double precision := (bits & 4503599627370495)::double precision;
    sign double precision := CASE WHEN bits < 0 THEN -1 ELSE 1 END;
BEGIN
    IF e = 2047 THEN
        RETURN CASE WHEN m <> 0 THEN 'NaN'::double precision ELSE sign * 'Infinity' END;
    ELSIF e = 0 THEN
        RETURN sign * m * power(2::double precision, -1074);
    END IF;
    RETURN sign * (m + 4503599627370496) * power(2::double precision, e - 1075);
END $$;

-- The elements of a collection's payload: (position, field or member or list value, a hash
-- field's value, a member's score). A string gives one row with its bytes in `field`.
CREATE FUNCTION relis_elements(payload bytea)
RETURNS TABLE (idx bigint, field bytea, val bytea, score double precision)
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    t integer := get_byte(payload, 0);
    l record;
    s record;
    x record;
    p integer;
    n bigint;
    w integer;
    blob bytea;
BEGIN
    idx := 0;
    IF t = 0 THEN
        field := (relis_rdb_string(payload, 1)).val;
        RETURN NEXT;
        RETURN;
    END IF;
    l := relis_rdb_len(payload, 1);
    n := l.len;
    p := l.next;
    IF t IN (2, 4, 5) THEN
        -- SET, HASH, ZSET_2: n members (with a value or a binary score).
        FOR k IN 1 .. n LOOP
            s := relis_rdb_string(payload, p);
            field := s.val; p := s.next;
            IF t = 4 THEN
                s := relis_rdb_string(payload, p);
                val := s.val; p := s.next;
            ELSIF t = 5 THEN
                score := relis_le_double(payload, p); p := p + 8;
            END IF;
            RETURN NEXT;
            idx := idx + 1;
        END LOOP;
    ELSIF t = 11 THEN
        -- SET_INTSET: one string holding the intset (encoding, length, integers).
        blob := (relis_rdb_string(payload, 1)).val;
        w := relis_le_int(blob, 0, 4)::integer;
        FOR k IN 0 .. relis_le_int(blob, 4, 4) - 1 LOOP
            field := convert_to(relis_le_int(blob, 8 + k::integer * w, w)::text, 'UTF8');
            RETURN NEXT;
            idx := idx + 1;
        END LOOP;
    ELSIF t IN (16, 17) THEN
        -- HASH_LISTPACK, ZSET_LISTPACK: one listpack of field, value (or member, score) pairs.
        blob := (relis_rdb_string(payload, 1)).val;
        FOR x IN SELECT a.v AS f, b.v AS g FROM relis_listpack(blob) a
                 JOIN relis_listpack(blob) b ON b.i = a.i + 1
                 WHERE a.i % 2 = 0 ORDER BY a.i LOOP
            field := x.f;
            IF t = 16 THEN
                val := x.g;
            ELSE
                score := convert_from(x.g, 'UTF8')::double precision;
            END IF;
            RETURN NEXT;
            idx := idx + 1;
        END LOOP;
    ELSIF t = 18 THEN
        -- LIST_QUICKLIST_2: n nodes, each a container kind (1 plain, 2 packed) and a string.
        FOR k IN 1 .. n LOOP
            l := relis_rdb_len(payload, p);
            s := relis_rdb_string(payload, l.next);
            p := s.next;
            IF l.len = 1 THEN
                field := s.val;
                RETURN NEXT;
                idx := idx + 1;
            ELSE
                FOR x IN SELECT v FROM relis_listpack(s.val) ORDER BY i LOOP
                    field := x.v;
                    RETURN NEXT;
                    idx := idx + 1;
                END LOOP;
            END IF;
        END LOOP;
    END IF;
END $$;

-- Bytes as text: UTF-8 as it is, anything else in bytea's escape format.
CREATE FUNCTION relis_text(b bytea) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
    RETURN convert_from(b, 'UTF8');
EXCEPTION WHEN character_not_in_repertoire OR untranslatable_character THEN
    RETURN encode(b, 'escape');
END $$;

-- The Redis type of a payload.
CREATE FUNCTION relis_type(payload bytea) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT CASE get_byte(payload, 0)
        WHEN 0 THEN 'string' WHEN 2 THEN 'set' WHEN 11 THEN 'set' WHEN 4 THEN 'hash'
        WHEN 16 THEN 'hash' WHEN 5 THEN 'zset' WHEN 17 THEN 'zset' WHEN 18 THEN 'list'
        WHEN 19 THEN 'stream' WHEN 15 THEN 'stream' WHEN 21 THEN 'stream' END
$$;

-- The number of elements of a payload (1 for a string, NULL for a stream).
CREATE FUNCTION relis_count(payload bytea) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
    CASE get_byte(payload, 0)
    WHEN 0 THEN RETURN 1;
    WHEN 2, 4, 5 THEN RETURN (relis_rdb_len(payload, 1)).len;
    WHEN 11, 16, 17, 18 THEN RETURN (SELECT count(*) FROM relis_elements(payload));
    ELSE RETURN NULL;
    END CASE;
END $$;

-- A geohash score's position, as GEOPOS decodes it: the centre of its 26-bit cell (longitude
-- in the odd bits, latitude in the even ones).
CREATE FUNCTION relis_geo(score double precision, OUT longitude double precision,
                          OUT latitude double precision)
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    s bigint := score::bigint;
    lon bigint := 0;
    lat bigint := 0;
BEGIN
    FOR i IN 0 .. 25 LOOP
        lat := lat | (((s >> (2 * i)) & 1) << i);
        lon := lon | (((s >> (2 * i + 1)) & 1) << i);
    END LOOP;
    longitude := least(180, greatest(-180,
        -180 + (lon + 0.5) * 360 / 67108864.0));
    latitude := least(85.05112878, greatest(-85.05112878,
        -85.05112878 + (lat + 0.5) * (2 * 85.05112878) / 67108864.0));
END $$;

-- The views' notion of now, in Unix milliseconds.
CREATE FUNCTION relis_now() RETURNS bigint
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT (extract(epoch FROM statement_timestamp()) * 1000)::bigint
$$;

CREATE VIEW redis_keys AS
SELECT db, relis_text(key) AS key, relis_type(value) AS type, expire_at,
       relis_count(value) AS count
FROM relis_keys
WHERE expire_at IS NULL OR expire_at > relis_now();

CREATE VIEW redis_strings AS
SELECT db, relis_text(key) AS key, relis_text((relis_rdb_string(value, 1)).val) AS value,
       expire_at
FROM relis_keys
WHERE get_byte(value, 0) = 0 AND (expire_at IS NULL OR expire_at > relis_now());

CREATE VIEW redis_hashes AS
SELECT k.db, relis_text(k.key) AS key, relis_text(e.field) AS field,
       relis_text(e.val) AS value
FROM relis_keys k, relis_elements(k.value) e
WHERE get_byte(k.value, 0) IN (4, 16) AND (k.expire_at IS NULL OR k.expire_at > relis_now());

CREATE VIEW redis_lists AS
SELECT k.db, relis_text(k.key) AS key, e.idx, relis_text(e.field) AS value
FROM relis_keys k, relis_elements(k.value) e
WHERE get_byte(k.value, 0) = 18 AND (k.expire_at IS NULL OR k.expire_at > relis_now());

CREATE VIEW redis_sets AS
SELECT k.db, relis_text(k.key) AS key, relis_text(e.field) AS member
FROM relis_keys k, relis_elements(k.value) e
WHERE get_byte(k.value, 0) IN (2, 11) AND (k.expire_at IS NULL OR k.expire_at > relis_now());

CREATE VIEW redis_zsets AS
SELECT k.db, relis_text(k.key) AS key, relis_text(e.field) AS member, e.score
FROM relis_keys k, relis_elements(k.value) e
WHERE get_byte(k.value, 0) IN (5, 17) AND (k.expire_at IS NULL OR k.expire_at > relis_now());

CREATE VIEW redis_geo AS
SELECT z.db, z.key, z.member, (relis_geo(z.score)).longitude,
       (relis_geo(z.score)).latitude
FROM redis_zsets z
WHERE z.score >= 0 AND z.score < 4503599627370496 AND z.score = trunc(z.score);
