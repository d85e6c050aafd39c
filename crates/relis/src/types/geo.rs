//! Redis's geo math: the 52-bit interleaved geohash that a geo member's sorted-set score holds,
//! its decoding, the haversine distance, and the cells a radius or box search scans.
//!
//! Everything here follows Redis 7.0's `geohash.c` and `geohash_helper.c` operation for
//! operation (the same expressions in the same order, the same C conversions), because the
//! replies show the results to 17 decimal places: a different but "equivalent" formula would
//! change coordinates, distances and which members a search finds. Pure functions, no storage;
//! the search over a sorted set is [`crate::Reader::geo_search`].

use bytes::Bytes;

/// Bits per coordinate in a stored score (26 + 26 = 52, what a double holds exactly).
pub const STEP_MAX: u8 = 26;
/// Westmost longitude.
pub const LON_MIN: f64 = -180.0;
/// Eastmost longitude.
pub const LON_MAX: f64 = 180.0;
/// Southmost latitude (EPSG:900913: Web Mercator stops short of the poles).
pub const LAT_MIN: f64 = -85.05112878;
/// Northmost latitude.
pub const LAT_MAX: f64 = 85.05112878;
/// The earth radius Redis uses, in metres.
pub const EARTH_RADIUS: f64 = 6372797.560856;
const MERCATOR_MAX: f64 = 20037726.37;
/// C's `M_PI / 180.0`, Redis's `D_R`.
const D_R: f64 = std::f64::consts::PI / 180.0;

/// Whether a longitude/latitude pair can be stored (Redis's `extractLongLatOrReply` check).
pub fn valid(lon: f64, lat: f64) -> bool {
    (LON_MIN..=LON_MAX).contains(&lon) && (LAT_MIN..=LAT_MAX).contains(&lat)
}

/// A geohash of `step` bits per coordinate (Redis's `GeoHashBits`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Hash {
    bits: u64,
    step: u8,
}

impl Hash {
    const ZERO: Hash = Hash { bits: 0, step: 0 };

    fn is_zero(self) -> bool {
        self.bits == 0 && self.step == 0
    }

    /// The hash aligned to 52 bits: the lowest score of its cell.
    fn align52(self) -> u64 {
        self.bits << (52 - u32::from(self.step) * 2)
    }
}

/// Spreads the 32 bits of `x` to the even positions and those of `y` to the odd ones.
fn interleave(x: u32, y: u32) -> u64 {
    const B: [u64; 5] = [
        0x5555555555555555,
        0x3333333333333333,
        0x0F0F0F0F0F0F0F0F,
        0x00FF00FF00FF00FF,
        0x0000FFFF0000FFFF,
    ];
    const S: [u32; 5] = [1, 2, 4, 8, 16];
    let (mut x, mut y) = (u64::from(x), u64::from(y));
    for i in (0..5).rev() {
        x = (x | (x << S[i])) & B[i];
        y = (y | (y << S[i])) & B[i];
    }
    x | (y << 1)
}

/// The inverse of [`interleave`]: even bits in the low half, odd bits in the high half.
fn deinterleave(v: u64) -> u64 {
    const B: [u64; 6] = [
        0x5555555555555555,
        0x3333333333333333,
        0x0F0F0F0F0F0F0F0F,
        0x00FF00FF00FF00FF,
        0x0000FFFF0000FFFF,
        0x00000000FFFFFFFF,
    ];
    const S: [u32; 6] = [0, 1, 2, 4, 8, 16];
    let (mut x, mut y) = (v, v >> 1);
    for i in 0..6 {
        x = (x | (x >> S[i])) & B[i];
        y = (y | (y >> S[i])) & B[i];
    }
    x | (y << 32)
}

/// The ranges a hash divides: (lon min, lon max, lat min, lat max).
type Ranges = (f64, f64, f64, f64);
const WGS84: Ranges = (LON_MIN, LON_MAX, LAT_MIN, LAT_MAX);
/// The standard geohash ranges GEOHASH re-encodes with.
const STANDARD: Ranges = (-180.0, 180.0, -90.0, 90.0);

/// Redis's `geohashEncode`: `None` outside the ranges.
fn encode_in(r: Ranges, lon: f64, lat: f64, step: u8) -> Option<Hash> {
    if !valid(lon, lat) || lat < r.2 || lat > r.3 || lon < r.0 || lon > r.1 {
        return None;
    }
    let mut lat_offset = (lat - r.2) / (r.3 - r.2);
    let mut lon_offset = (lon - r.0) / (r.1 - r.0);
    let scale = (1u64 << step) as f64;
    lat_offset *= scale;
    lon_offset *= scale;
    // C converts the doubles (in [0, 2^step]) to uint32_t by truncation.
    Some(Hash {
        bits: interleave(lat_offset as u32, lon_offset as u32),
        step,
    })
}

/// A cell: its longitude and latitude bounds (Redis's `GeoHashArea`).
#[derive(Clone, Copy, Debug, Default)]
struct Cell {
    lon_min: f64,
    lon_max: f64,
    lat_min: f64,
    lat_max: f64,
}

/// Redis's `geohashDecode` over the WGS84 ranges.
fn decode_cell(h: Hash) -> Cell {
    let sep = deinterleave(h.bits);
    let (lat_scale, lon_scale) = (LAT_MAX - LAT_MIN, LON_MAX - LON_MIN);
    let ilat = sep as u32;
    let ilon = (sep >> 32) as u32;
    let div = (1u64 << h.step) as f64;
    // `ilato + 1` is unsigned arithmetic in C: it wraps.
    Cell {
        lat_min: LAT_MIN + (f64::from(ilat) * 1.0 / div) * lat_scale,
        lat_max: LAT_MIN + (f64::from(ilat.wrapping_add(1)) * 1.0 / div) * lat_scale,
        lon_min: LON_MIN + (f64::from(ilon) * 1.0 / div) * lon_scale,
        lon_max: LON_MIN + (f64::from(ilon.wrapping_add(1)) * 1.0 / div) * lon_scale,
    }
}

/// C's `(uint64_t)d` as gcc compiles it on x86-64 (`cvttsd2si`, with the 2^63 split), which is
/// what Redis's `decodeGeohash` applies to any score, geo or not.
fn c_to_u64(d: f64) -> u64 {
    const TWO63: f64 = 9223372036854775808.0;
    let cvt = |x: f64| -> u64 {
        if x.is_nan() || !(-TWO63..TWO63).contains(&x) {
            0x8000_0000_0000_0000
        } else {
            (x as i64) as u64
        }
    };
    if d < TWO63 {
        cvt(d)
    } else {
        cvt(d - TWO63) ^ 0x8000_0000_0000_0000
    }
}

/// The 52-bit score a member at `lon`, `lat` gets (GEOADD); `None` for an invalid pair.
pub fn encode(lon: f64, lat: f64) -> Option<f64> {
    encode_in(WGS84, lon, lat, STEP_MAX).map(|h| h.align52() as f64)
}

/// The longitude and latitude a score stands for (the centre of its cell, clamped to the
/// valid ranges), as GEOPOS reports it. Any score decodes, as in Redis.
pub fn decode(score: f64) -> (f64, f64) {
    let c = decode_cell(Hash {
        bits: c_to_u64(score),
        step: STEP_MAX,
    });
    let lon = ((c.lon_min + c.lon_max) / 2.0).clamp(LON_MIN, LON_MAX);
    let lat = ((c.lat_min + c.lat_max) / 2.0).clamp(LAT_MIN, LAT_MAX);
    (lon, lat)
}

/// The great-circle (haversine) distance in metres.
pub fn distance(lon1: f64, lat1: f64, lon2: f64, lat2: f64) -> f64 {
    let (lat1r, lon1r) = (lat1 * D_R, lon1 * D_R);
    let (lat2r, lon2r) = (lat2 * D_R, lon2 * D_R);
    let u = ((lat2r - lat1r) / 2.0).sin();
    let v = ((lon2r - lon1r) / 2.0).sin();
    2.0 * EARTH_RADIUS * (u * u + lat1r.cos() * lat2r.cos() * v * v).sqrt().asin()
}

/// The standard 11-character geohash of a score (GEOHASH): decoded, re-encoded over ±90°
/// latitude, the eleventh character always `0`.
pub fn geohash_string(score: f64) -> [u8; 11] {
    const ALPHABET: &[u8; 32] = b"0123456789bcdefghjkmnpqrstuvwxyz";
    let (lon, lat) = decode(score);
    let bits = encode_in(STANDARD, lon, lat, 26).map_or(0, |h| h.bits);
    let mut out = [b'0'; 11];
    for (i, c) in out.iter_mut().enumerate().take(10) {
        *c = ALPHABET[((bits >> (52 - (i + 1) * 5)) & 0x1f) as usize];
    }
    out
}

/// A unit's factor to metres (GEODIST, the searches): `m`, `km`, `ft`, `mi` in any case.
pub fn unit(name: &[u8]) -> Option<f64> {
    let n = name.to_ascii_lowercase();
    match &n[..] {
        b"m" => Some(1.0),
        b"km" => Some(1000.0),
        b"ft" => Some(0.3048),
        b"mi" => Some(1609.34),
        _ => None,
    }
}

/// What a search covers, in the search's unit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Shape {
    /// BYRADIUS: a radius.
    Radius(f64),
    /// BYBOX: width and height.
    Box(f64, f64),
}

/// A search area: a centre, a shape, and the unit's factor to metres.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Area {
    /// Centre longitude.
    pub lon: f64,
    /// Centre latitude.
    pub lat: f64,
    /// Radius or box.
    pub shape: Shape,
    /// Metres per unit.
    pub unit: f64,
}

/// A member a search found.
#[derive(Clone, Debug, PartialEq)]
pub struct GeoPoint {
    /// The member.
    pub member: Bytes,
    /// Its score (the 52-bit hash).
    pub score: f64,
    /// Its decoded longitude.
    pub lon: f64,
    /// Its decoded latitude.
    pub lat: f64,
    /// Its distance from the centre, in metres.
    pub dist: f64,
}

/// What [`crate::Reader::geo_search`] found.
#[derive(Clone, Debug, PartialEq)]
pub enum Found {
    /// The key does not exist.
    NoKey,
    /// The members inside the area, in scan order.
    Points(Vec<GeoPoint>),
    /// Run inline, the search scanned more than [`INLINE_ROWS`] members and stopped, having
    /// done nothing: run it again on a reader.
    Deferred,
}

/// Most members a search run inline on the network thread may scan (a 10 km radius scans a
/// handful in a set of a million spread over the globe; a city-wide one in a dense set may
/// scan thousands, and goes to a reader).
pub const INLINE_ROWS: usize = 512;

/// Redis's `geohashEstimateStepsByRadius`.
fn steps_by_radius(mut range: f64, lat: f64) -> u8 {
    if range == 0.0 {
        return 26;
    }
    let mut step: i32 = 1;
    while range < MERCATOR_MAX {
        range *= 2.0;
        step += 1;
    }
    step -= 2;
    if !(-66.0..=66.0).contains(&lat) {
        step -= 1;
        if !(-80.0..=80.0).contains(&lat) {
            step -= 1;
        }
    }
    step.clamp(1, 26) as u8
}

/// Moves a hash one cell east/west (`d` > 0 / < 0), wrapping (`geohash_move_x`).
fn move_x(h: &mut Hash, d: i8) {
    if d == 0 {
        return;
    }
    let mut x = h.bits & 0xaaaaaaaaaaaaaaaa;
    let y = h.bits & 0x5555555555555555;
    let zz = 0x5555555555555555u64 >> (64 - u32::from(h.step) * 2);
    if d > 0 {
        x = x.wrapping_add(zz + 1);
    } else {
        x |= zz;
        x = x.wrapping_sub(zz + 1);
    }
    x &= 0xaaaaaaaaaaaaaaaau64 >> (64 - u32::from(h.step) * 2);
    h.bits = x | y;
}

/// Moves a hash one cell north/south (`geohash_move_y`).
fn move_y(h: &mut Hash, d: i8) {
    if d == 0 {
        return;
    }
    let x = h.bits & 0xaaaaaaaaaaaaaaaa;
    let mut y = h.bits & 0x5555555555555555;
    let zz = 0xaaaaaaaaaaaaaaaau64 >> (64 - u32::from(h.step) * 2);
    if d > 0 {
        y = y.wrapping_add(zz + 1);
    } else {
        y |= zz;
        y = y.wrapping_sub(zz + 1);
    }
    y &= 0x5555555555555555u64 >> (64 - u32::from(h.step) * 2);
    h.bits = x | y;
}

impl Area {
    /// The radius in metres, or for a box the distance from its centre to a corner.
    fn radius_m(&self) -> f64 {
        let r = match self.shape {
            Shape::Radius(r) => r,
            Shape::Box(w, h) => ((w / 2.0) * (w / 2.0) + (h / 2.0) * (h / 2.0)).sqrt(),
        };
        r * self.unit
    }

    /// Redis's `geohashBoundingBox`: (lon min, lat min, lon max, lat max).
    fn bounds(&self) -> [f64; 4] {
        let (height, width) = match self.shape {
            Shape::Radius(r) => (self.unit * r, self.unit * r),
            Shape::Box(w, h) => (self.unit * (h / 2.0), self.unit * (w / 2.0)),
        };
        let lat_delta = (height / EARTH_RADIUS) / D_R;
        let lon_delta_top = (width / EARTH_RADIUS / ((self.lat + lat_delta) * D_R).cos()) / D_R;
        let lon_delta_bottom = (width / EARTH_RADIUS / ((self.lat - lat_delta) * D_R).cos()) / D_R;
        let southern = self.lat < 0.0;
        let delta = if southern {
            lon_delta_bottom
        } else {
            lon_delta_top
        };
        [
            self.lon - delta,
            self.lat - lat_delta,
            self.lon + delta,
            self.lat + lat_delta,
        ]
    }

    /// The score ranges `[min, max)` to scan, in Redis's order (the centre cell, then north,
    /// south, east, west, north-east, north-west, south-east, south-west), without the cells
    /// `geohashCalculateAreasByShapeWGS84` excludes and without a cell equal to the one scanned
    /// just before it (huge radii make neighbours coincide).
    pub fn cells(&self) -> Vec<(f64, f64)> {
        let [min_lon, min_lat, max_lon, max_lat] = self.bounds();
        let mut steps = steps_by_radius(self.radius_m(), self.lat);
        let center = |steps: u8| {
            encode_in(WGS84, self.lon, self.lat, steps).unwrap_or(Hash {
                bits: 0,
                step: steps,
            })
        };
        // north, south, east, west, north-east, north-west, south-east, south-west
        let neighbours = |h: Hash| -> [Hash; 8] {
            let m = |dx: i8, dy: i8| {
                let mut n = h;
                move_x(&mut n, dx);
                move_y(&mut n, dy);
                n
            };
            [
                m(0, 1),
                m(0, -1),
                m(1, 0),
                m(-1, 0),
                m(1, 1),
                m(-1, 1),
                m(1, -1),
                m(-1, -1),
            ]
        };
        let mut hash = center(steps);
        let mut nb = neighbours(hash);
        let mut area = decode_cell(hash);
        let decrease = decode_cell(nb[0]).lat_max < max_lat
            || decode_cell(nb[1]).lat_min > min_lat
            || decode_cell(nb[2]).lon_max < max_lon
            || decode_cell(nb[3]).lon_min > min_lon;
        if steps > 1 && decrease {
            steps -= 1;
            hash = center(steps);
            nb = neighbours(hash);
            area = decode_cell(hash);
        }
        if steps >= 2 {
            let [n, s, e, w, ne, nw, se, sw] = &mut nb;
            if area.lat_min < min_lat {
                *s = Hash::ZERO;
                *sw = Hash::ZERO;
                *se = Hash::ZERO;
            }
            if area.lat_max > max_lat {
                *n = Hash::ZERO;
                *ne = Hash::ZERO;
                *nw = Hash::ZERO;
            }
            if area.lon_min < min_lon {
                *w = Hash::ZERO;
                *sw = Hash::ZERO;
                *nw = Hash::ZERO;
            }
            if area.lon_max > max_lon {
                *e = Hash::ZERO;
                *se = Hash::ZERO;
                *ne = Hash::ZERO;
            }
        }
        let all = std::iter::once(hash).chain(nb);
        let mut out = Vec::with_capacity(9);
        // Redis compares with the last cell scanned, but never with the centre (its
        // `last_processed` index 0 reads as "none").
        let mut last: Option<Hash> = None;
        for (i, h) in all.enumerate() {
            if h.is_zero() || last == Some(h) {
                continue;
            }
            last = (i > 0).then_some(h);
            let min = h.align52();
            let max = Hash {
                bits: h.bits + 1,
                step: h.step,
            }
            .align52();
            out.push((min as f64, max as f64));
        }
        out
    }

    /// Whether the member with `score` is inside the area; if so its coordinates and distance
    /// from the centre in metres (`geoAppendIfWithinShape`).
    pub fn test(&self, score: f64) -> Option<(f64, f64, f64)> {
        let (lon, lat) = decode(score);
        match self.shape {
            Shape::Radius(r) => {
                let d = distance(self.lon, self.lat, lon, lat);
                (d <= r * self.unit).then_some((lon, lat, d))
            }
            Shape::Box(w, h) => {
                let lon_d = distance(lon, lat, self.lon, lat);
                let lat_d = distance(lon, lat, lon, self.lat);
                let (w, h) = (w * self.unit, h * self.unit);
                if lon_d > w / 2.0 || lat_d > h / 2.0 {
                    return None;
                }
                Some((lon, lat, distance(self.lon, self.lat, lon, lat)))
            }
        }
    }
}

/// Orders search results by distance (`desc`: farthest first) as Redis does: when all of
/// them are returned, with glibc's `qsort` (a stable merge sort here: equal distances keep
/// the scan order); when only the first `keep` are, with Redis's `pqsort` (NetBSD's quicksort
/// that skips the partitions outside the kept range), whose order of equal distances this
/// reproduces step for step.
pub fn sort_points(points: &mut [GeoPoint], desc: bool, keep: usize) {
    let cmp = |a: &GeoPoint, b: &GeoPoint| -> i32 {
        let c = if a.dist > b.dist {
            1
        } else if a.dist == b.dist {
            0
        } else {
            -1
        };
        if desc {
            -c
        } else {
            c
        }
    };
    if keep >= points.len() {
        points.sort_by(|a, b| cmp(a, b).cmp(&0));
        return;
    }
    if keep == 0 {
        return;
    }
    pqsort(points, 0, points.len(), &cmp, 0, keep - 1);
}

/// Redis's `_pqsort` over `v[a..a + n]`, with pointers as indices; `lo..=hi` is the range
/// that must end up sorted.
fn pqsort<T>(
    v: &mut [T],
    mut a: usize,
    mut n: usize,
    cmp: &dyn Fn(&T, &T) -> i32,
    lo: usize,
    hi: usize,
) {
    let med3 = |v: &[T], x: usize, y: usize, z: usize| -> usize {
        if cmp(&v[x], &v[y]) < 0 {
            if cmp(&v[y], &v[z]) < 0 {
                y
            } else if cmp(&v[x], &v[z]) < 0 {
                z
            } else {
                x
            }
        } else if cmp(&v[y], &v[z]) > 0 {
            y
        } else if cmp(&v[x], &v[z]) < 0 {
            x
        } else {
            z
        }
    };
    let vecswap = |v: &mut [T], x: usize, y: usize, k: usize| {
        for i in 0..k {
            v.swap(x + i, y + i);
        }
    };
    // Whether the kept range misses `[start, start + len)`.
    let outside = |start: usize, len: usize| {
        (lo < start && hi < start) || (lo >= start + len && hi >= start + len)
    };
    loop {
        if n < 7 {
            for pm in a + 1..a + n {
                let mut pl = pm;
                while pl > a && cmp(&v[pl - 1], &v[pl]) > 0 {
                    v.swap(pl, pl - 1);
                    pl -= 1;
                }
            }
            return;
        }
        let mut pm = a + n / 2;
        if n > 7 {
            let mut pl = a;
            let mut pn = a + n - 1;
            if n > 40 {
                let d = n / 8;
                pl = med3(v, pl, pl + d, pl + 2 * d);
                pm = med3(v, pm - d, pm, pm + d);
                pn = med3(v, pn - 2 * d, pn - d, pn);
            }
            pm = med3(v, pl, pm, pn);
        }
        v.swap(a, pm);
        let (mut pa, mut pb) = (a + 1, a + 1);
        // `pc` and `pd` may step to just below `a + 1`: signed.
        let (mut pc, mut pd) = ((a + n - 1) as isize, (a + n - 1) as isize);
        loop {
            while pb as isize <= pc {
                let c = cmp(&v[pb], &v[a]);
                if c > 0 {
                    break;
                }
                if c == 0 {
                    v.swap(pa, pb);
                    pa += 1;
                }
                pb += 1;
            }
            while pb as isize <= pc {
                let c = cmp(&v[pc as usize], &v[a]);
                if c < 0 {
                    break;
                }
                if c == 0 {
                    v.swap(pc as usize, pd as usize);
                    pd -= 1;
                }
                pc -= 1;
            }
            if pb as isize > pc {
                break;
            }
            v.swap(pb, pc as usize);
            pb += 1;
            pc -= 1;
        }
        let pn = a + n;
        let r = (pa - a).min(pb - pa);
        vecswap(v, a, pb - r, r);
        let r = ((pd - pc) as usize).min(pn - pd as usize - 1);
        vecswap(v, pb, pn - r, r);
        let r = pb - pa;
        if r > 1 && !outside(a, r) {
            pqsort(v, a, r, cmp, lo, hi);
        }
        let r = (pd - pc) as usize;
        if r > 1 {
            a = pn - r;
            n = r;
            if !outside(a, r) {
                continue;
            }
        }
        return;
    }
}

/// `printf("%f")`: how Redis prints an invalid longitude/latitude pair.
pub fn fmt_f(x: f64) -> String {
    format!("{x:.6}")
}

/// Redis's `addReplyHumanLongDouble` text for a coordinate: `%.17Lf` with trailing zeros (and
/// a trailing dot) removed.
pub fn human(x: f64) -> String {
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let mut s = format!("{x:.17}");
    if s.contains('.') {
        while s.ends_with('0') {
            s.pop();
        }
        if s.ends_with('.') {
            s.pop();
        }
    }
    if s == "-0" {
        s = "0".into();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_and_positions_match_redis() {
        // Pinned from redis-server 7.0.15: GEOADD k 13.361389 38.115556 Palermo ...
        assert_eq!(encode(13.361389, 38.115556), Some(3479099956230698.0));
        assert_eq!(encode(15.087269, 37.502669), Some(3479447370796909.0));
        let (lon, lat) = decode(3479099956230698.0);
        assert_eq!(human(lon), "13.36138933897018433");
        assert_eq!(human(lat), "38.11555639549629859");
        assert_eq!(&geohash_string(3479099956230698.0), b"sqc8b49rny0");
        let (a, b) = (decode(3479099956230698.0), decode(3479447370796909.0));
        assert_eq!(
            format!("{:.4}", distance(a.0, a.1, b.0, b.1)),
            "166274.1516"
        );
        assert_eq!(encode(200.0, 100.0), None);
    }

    #[test]
    fn interleave_round_trips() {
        for (x, y) in [
            (0u32, 0u32),
            (1, 0),
            (0, 1),
            (0x3ffffff, 0x1234567),
            (u32::MAX, 7),
        ] {
            let d = deinterleave(interleave(x, y));
            assert_eq!((d as u32, (d >> 32) as u32), (x, y));
        }
    }

    #[test]
    fn c_conversion_of_odd_scores() {
        assert_eq!(c_to_u64(-5.0), (-5i64) as u64);
        assert_eq!(c_to_u64(f64::INFINITY), 0);
        assert_eq!(c_to_u64(f64::NEG_INFINITY), 0x8000_0000_0000_0000);
        assert_eq!(c_to_u64(1e19), 10000000000000000000);
    }

    #[test]
    fn partial_sort_sorts_the_kept_range() {
        let mk = |d: f64, i: usize| GeoPoint {
            member: Bytes::from(i.to_string()),
            score: 0.0,
            lon: 0.0,
            lat: 0.0,
            dist: d,
        };
        let mut seed = 7u64;
        for n in [1usize, 6, 7, 8, 40, 41, 200, 1000] {
            for keep in [1usize, 3, n / 2, n.saturating_sub(1)] {
                let mut v: Vec<GeoPoint> = (0..n)
                    .map(|i| {
                        seed = seed
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        mk(((seed >> 33) % 50) as f64, i)
                    })
                    .collect();
                let mut want: Vec<f64> = v.iter().map(|p| p.dist).collect();
                want.sort_by(f64::total_cmp);
                sort_points(&mut v, false, keep);
                let got: Vec<f64> = v.iter().take(keep).map(|p| p.dist).collect();
                assert_eq!(got, want[..keep.min(n)], "n {n} keep {keep}");
            }
        }
    }

    #[test]
    fn steps() {
        assert_eq!(steps_by_radius(0.0, 0.0), 26);
        assert_eq!(steps_by_radius(10_000.0, 0.0), 10);
        assert_eq!(steps_by_radius(10_000.0, 70.0), 9);
        assert_eq!(steps_by_radius(10_000.0, -85.0), 8);
        assert_eq!(steps_by_radius(1e9, 0.0), 1);
    }
}
