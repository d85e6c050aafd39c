-- Relis schema version 9: the geo view.
--
-- Geo members are sorted-set members whose score is a 52-bit interleaved geohash (GEOADD), so
-- they already appear in redis_zsets. This view adds their position, decoded as GEOPOS decodes
-- it, by two deterministic functions of the score registered on every connection
-- (relis_geo_lon, relis_geo_lat; sql/sandbox.rs). It lists the members whose score is an
-- integer in [0, 2^52), the scores GEOADD writes; a sorted set of other scores (a leaderboard
-- with fractional or negative scores) does not show. A search by distance is a WHERE on these
-- columns over the candidate rows: the view has no spatial index.
DROP VIEW IF EXISTS redis_geo;

CREATE VIEW redis_geo AS
SELECT k.db AS db, CAST(k.key AS TEXT) AS key, CAST(z.member AS TEXT) AS member,
       relis_geo_lon(z.score) AS longitude, relis_geo_lat(z.score) AS latitude
FROM relis_keys AS k JOIN relis_zset AS z ON z.kid = k.id
WHERE k.type = 4 AND z.score >= 0 AND z.score < 4503599627370496 AND z.score = CAST(z.score AS INTEGER)
  AND (k.expire_at IS NULL OR k.expire_at > relis_now())
  AND ((SELECT relis_sees_all()) OR relis_visible(k.key));
