//! The search shared by GEORADIUS, GEORADIUS_RO, GEORADIUSBYMEMBER, GEORADIUSBYMEMBER_RO,
//! GEOSEARCH and GEOSEARCHSTORE: Redis's `georadiusGeneric`.
//!
//! Redis checks arguments as it reads them, and looks the key up first: a wrong type beats
//! every argument error, a FROMMEMBER member missing from the set beats the errors of the
//! arguments after it, and with no key at all GEORADIUSBYMEMBER never reads its radius. So
//! parsing here is pure and keeps each error where Redis would meet it; `exec` replays them in
//! Redis's order against the key.

use super::{coords, distance, member_error, parse_lonlat, parse_unit};
use crate::args::Args;
use crate::cmd::{Cx, Parsed};
use crate::error::CmdError;
use bytes::Bytes;
use relis::geo::{Area, GeoPoint, Shape};
use resp::Frame;

/// Which command is searching.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// GEORADIUS (`ro`: GEORADIUS_RO, no STORE).
    Radius {
        /// The read-only variant.
        ro: bool,
    },
    /// GEORADIUSBYMEMBER (`ro`: GEORADIUSBYMEMBER_RO).
    RadiusByMember {
        /// The read-only variant.
        ro: bool,
    },
    /// GEOSEARCH.
    Search,
    /// GEOSEARCHSTORE.
    SearchStore,
}

impl Form {
    fn is_search(self) -> bool {
        matches!(self, Form::Search | Form::SearchStore)
    }

    fn no_store(self) -> bool {
        matches!(
            self,
            Form::Radius { ro: true } | Form::RadiusByMember { ro: true }
        )
    }
}

/// Result ordering.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sort {
    None,
    Asc,
    Desc,
}

/// One step of the option loop that `exec` replays: a FROMMEMBER to look up, or the error
/// that stopped the loop.
#[derive(Debug)]
enum Step {
    Member(Bytes),
    Fail(CmdError),
}

/// A parsed search.
#[derive(Debug)]
pub struct Search {
    form: Form,
    key: Bytes,
    /// STORE / STOREDIST key, or GEOSEARCHSTORE's destination.
    dst: Option<Bytes>,
    storedist: bool,
    /// GEORADIUSBYMEMBER's member.
    by_member: Option<Bytes>,
    /// The centre and radius arguments' error (GEORADIUS, GEORADIUSBYMEMBER).
    base_err: Option<CmdError>,
    steps: Vec<Step>,
    center: Option<(f64, f64)>,
    shape: Option<Shape>,
    unit: f64,
    withdist: bool,
    withhash: bool,
    withcoord: bool,
    any: bool,
    count: i64,
    sort: Sort,
    /// `argv[0]` as sent (Redis quotes it in two errors).
    sent_name: String,
}

/// `<number> <unit>`: Redis's `extractDistanceOrReply`.
fn radius(n: &[u8], u: &[u8]) -> Result<(f64, f64), CmdError> {
    let r = crate::cmd::zset::parse_double(n).ok_or(CmdError::GEO_NEED_RADIUS)?;
    if r < 0.0 {
        return Err(CmdError::GEO_RADIUS_NEGATIVE);
    }
    Ok((r, parse_unit(u)?))
}

/// `<width> <height> <unit>`: Redis's `extractBoxOrReply`.
fn bbox(w: &[u8], h: &[u8], u: &[u8]) -> Result<(f64, f64, f64), CmdError> {
    let w = crate::cmd::zset::parse_double(w).ok_or(CmdError::GEO_NEED_WIDTH)?;
    let h = crate::cmd::zset::parse_double(h).ok_or(CmdError::GEO_NEED_HEIGHT)?;
    if h < 0.0 || w < 0.0 {
        return Err(CmdError::GEO_BOX_NEGATIVE);
    }
    Ok((w, h, parse_unit(u)?))
}

impl Search {
    /// Parses a search of `form`.
    ///
    /// # Errors
    /// None of its own: argument errors are kept for `exec` (see the module doc); a missing
    /// argument is the dispatcher's arity error.
    pub fn from_args(args: &mut Args, form: Form) -> Result<Search, CmdError> {
        let sent_name = args.sent_name();
        let argv = args.rest();
        args.finish()?;
        let mut s = Search {
            form,
            key: Bytes::new(),
            dst: None,
            storedist: false,
            by_member: None,
            base_err: None,
            steps: Vec::new(),
            center: None,
            shape: None,
            unit: 1.0,
            withdist: false,
            withhash: false,
            withcoord: false,
            any: false,
            count: 0,
            sort: Sort::None,
            sent_name,
        };
        let arg = |i: usize| -> Result<&Bytes, CmdError> { argv.get(i).ok_or(CmdError::Syntax) };
        // `base` is the index of the first option (in `argv`, which starts after the name).
        let base = match form {
            Form::Radius { .. } => {
                s.key = arg(0)?.clone();
                let r = parse_lonlat(arg(1)?, arg(2)?)
                    .and_then(|c| radius(arg(3)?, arg(4)?).map(|r| (c, r)));
                match r {
                    Ok((c, (r, unit))) => {
                        s.center = Some(c);
                        s.shape = Some(Shape::Radius(r));
                        s.unit = unit;
                    }
                    Err(e) => s.base_err = Some(e),
                }
                5
            }
            Form::RadiusByMember { .. } => {
                s.key = arg(0)?.clone();
                s.by_member = Some(arg(1)?.clone());
                match radius(arg(2)?, arg(3)?) {
                    Ok((r, unit)) => {
                        s.shape = Some(Shape::Radius(r));
                        s.unit = unit;
                    }
                    Err(e) => s.base_err = Some(e),
                }
                4
            }
            Form::Search => {
                s.key = arg(0)?.clone();
                1
            }
            Form::SearchStore => {
                s.dst = Some(arg(0)?.clone());
                s.key = arg(1)?.clone();
                2
            }
        };
        if let Err(e) = s.options(&argv[base.min(argv.len())..]) {
            s.steps.push(Step::Fail(e));
        }
        Ok(s)
    }

    /// The option loop, up to its first error.
    fn options(&mut self, opts: &[Bytes]) -> Result<(), CmdError> {
        let form = self.form;
        let (mut frommember, mut fromloc, mut byradius, mut bybox) = (false, false, false, false);
        let remaining = opts.len();
        let mut i = 0;
        while i < remaining {
            let a = opts[i].to_ascii_lowercase();
            let has = |n: usize| i + n < remaining;
            match &a[..] {
                b"withdist" => self.withdist = true,
                b"withhash" => self.withhash = true,
                b"withcoord" => self.withcoord = true,
                b"any" => self.any = true,
                b"asc" => self.sort = Sort::Asc,
                b"desc" => self.sort = Sort::Desc,
                b"count" if has(1) => {
                    let n = crate::args::parse_i64(&opts[i + 1])?;
                    if n <= 0 {
                        return Err(CmdError::COUNT_NOT_ABOVE_ZERO);
                    }
                    self.count = n;
                    i += 1;
                }
                b"store" | b"storedist" if has(1) && !form.no_store() && !form.is_search() => {
                    self.dst = Some(opts[i + 1].clone());
                    self.storedist = &a[..] == b"storedist";
                    i += 1;
                }
                b"storedist" if form == Form::SearchStore => self.storedist = true,
                b"frommember" if has(1) && form.is_search() && !fromloc => {
                    self.steps.push(Step::Member(opts[i + 1].clone()));
                    frommember = true;
                    i += 1;
                }
                b"fromlonlat" if has(2) && form.is_search() && !frommember => {
                    self.center = Some(parse_lonlat(&opts[i + 1], &opts[i + 2])?);
                    fromloc = true;
                    i += 2;
                }
                b"byradius" if has(2) && form.is_search() && !bybox => {
                    let (r, unit) = radius(&opts[i + 1], &opts[i + 2])?;
                    self.shape = Some(Shape::Radius(r));
                    self.unit = unit;
                    byradius = true;
                    i += 2;
                }
                b"bybox" if has(3) && form.is_search() && !byradius => {
                    let (w, h, unit) = bbox(&opts[i + 1], &opts[i + 2], &opts[i + 3])?;
                    self.shape = Some(Shape::Box(w, h));
                    self.unit = unit;
                    bybox = true;
                    i += 3;
                }
                _ => return Err(CmdError::Syntax),
            }
            i += 1;
        }
        // The checks after the loop, in Redis's order.
        if self.dst.is_some() && (self.withdist || self.withhash || self.withcoord) {
            return Err(if form == Form::SearchStore {
                CmdError::GEOSEARCHSTORE_WITH
            } else {
                CmdError::GEORADIUS_STORE_WITH
            });
        }
        if form.is_search() && !(frommember || fromloc) {
            return Err(CmdError::geo_one_from(&self.sent_name));
        }
        if form.is_search() && !(byradius || bybox) {
            return Err(CmdError::geo_one_by(&self.sent_name));
        }
        if self.any && self.count == 0 {
            return Err(CmdError::GEO_ANY_NEEDS_COUNT);
        }
        Ok(())
    }

    /// Runs the checks that need the key, in Redis's order, and the search: `None` when the
    /// key does not exist.
    fn find(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Option<Vec<GeoPoint>>, CmdError> {
        // The lookup counts as a hit or a miss once, not again when an inline run defers.
        let exists = match r.zcard(cx.db, &self.key) {
            Ok(n) => n.is_some(),
            Err(relis::Error::WrongType) => {
                cx.hit(&self.key, true);
                return Err(CmdError::WrongType);
            }
            Err(e) => return Err(e.into()),
        };
        let res = self.search(r, cx, exists);
        if !matches!(res, Err(CmdError::Deferred)) {
            cx.hit(&self.key, exists);
        }
        res
    }

    /// [`Search::find`] after the key lookup.
    fn search(
        &self,
        r: &relis::Reader<'_>,
        cx: &Cx,
        exists: bool,
    ) -> Result<Option<Vec<GeoPoint>>, CmdError> {
        let mut center = self.center;
        let lookup = |m: &[u8]| -> Result<(f64, f64), CmdError> {
            match r.zscore(cx.db, &self.key, m)?.flatten() {
                Some(score) => Ok(relis::geo::decode(score)),
                None => Err(member_error()),
            }
        };
        match self.form {
            Form::Radius { .. } => {
                if let Some(e) = &self.base_err {
                    return Err(e.clone());
                }
            }
            Form::RadiusByMember { .. } if exists => {
                center = Some(lookup(self.by_member.as_deref().unwrap_or_default())?);
                if let Some(e) = &self.base_err {
                    return Err(e.clone());
                }
            }
            _ => {}
        }
        for step in &self.steps {
            match step {
                Step::Member(m) if exists => center = Some(lookup(m)?),
                Step::Member(_) => {}
                Step::Fail(e) => return Err(e.clone()),
            }
        }
        if !exists {
            return Ok(None);
        }
        let (Some((lon, lat)), Some(shape)) = (center, self.shape) else {
            return Err(CmdError::Internal(
                "geo search without centre or shape".into(),
            ));
        };
        let area = Area {
            lon,
            lat,
            shape,
            unit: self.unit,
        };
        let any = if self.any { self.count as usize } else { 0 };
        let mut found = match r.geo_search(cx.db, &self.key, &area, any)? {
            relis::geo::Found::Points(v) => v,
            relis::geo::Found::NoKey => Vec::new(),
            relis::geo::Found::Deferred => return Err(CmdError::Deferred),
        };
        let sort = if self.count != 0 && self.sort == Sort::None && !self.any {
            Sort::Asc
        } else {
            self.sort
        };
        let keep = if self.count > 0 {
            (self.count as usize).min(found.len())
        } else {
            found.len()
        };
        if sort != Sort::None {
            relis::geo::sort_points(&mut found, sort == Sort::Desc, keep);
        }
        found.truncate(keep);
        for p in &mut found {
            p.dist /= self.unit;
        }
        Ok(Some(found))
    }

    /// The reply without STORE.
    fn reply(&self, found: Vec<GeoPoint>) -> Frame {
        let with = self.withdist || self.withhash || self.withcoord;
        Frame::Array(
            found
                .into_iter()
                .map(|p| {
                    if !with {
                        return Frame::Bulk(p.member);
                    }
                    let mut v = vec![Frame::Bulk(p.member)];
                    if self.withdist {
                        v.push(distance(p.dist));
                    }
                    if self.withhash {
                        v.push(Frame::Integer(p.score as i64));
                    }
                    if self.withcoord {
                        v.push(coords(p.lon, p.lat));
                    }
                    Frame::Array(v)
                })
                .collect(),
        )
    }

    /// Whether this search stores its result (and so runs on the writer).
    pub fn stores(&self) -> bool {
        self.dst.is_some()
    }

    /// Wraps the search as the command its form and options make it.
    pub fn parsed(self) -> Result<Parsed, CmdError> {
        if self.stores() {
            Parsed::write(self)
        } else {
            Parsed::read(self)
        }
    }
}

impl crate::cmd::ReadCmd for Search {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        Ok(match self.find(r, cx)? {
            Some(found) => self.reply(found),
            None => Frame::Array(Vec::new()),
        })
    }

    /// A search is tried on the network thread: a small radius reads a few index entries,
    /// less than the hop to a reader costs. One that scans more than `relis::geo::INLINE_ROWS`
    /// members stops there ([`CmdError::Deferred`]) and runs again on a reader.
    fn inline(&self) -> bool {
        true
    }
}

impl crate::cmd::WriteCmd for Search {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let found = self.find(w, cx)?;
        let dst = self.dst.as_deref().unwrap_or_default();
        let items: Vec<(Bytes, f64)> = found
            .unwrap_or_default()
            .into_iter()
            .map(|p| {
                let score = if self.storedist { p.dist } else { p.score };
                (p.member, score)
            })
            .collect();
        let existed =
            w.wants_events(relis::events::class::GENERIC) && w.meta(cx.db, dst)?.is_some();
        let n = w.zstore(cx.db, dst, &items)?;
        if n > 0 {
            let event = if self.form.is_search() {
                "geosearchstore"
            } else {
                "georadiusstore"
            };
            w.notify(relis::events::class::ZSET, event, cx.db, dst);
        } else if existed {
            w.notify(relis::events::class::GENERIC, "del", cx.db, dst);
        }
        Ok(Frame::Integer(n))
    }

    // Every check and the search come before the only write.
    fn on_error(&self) -> relis::OnError {
        relis::OnError::NothingToUndo
    }
}

/// GEORADIUS's keys: the source, then the key after the first `STORE` and the key after the
/// first `STOREDIST` from argument 6 on (a keyword in the last argument names nothing), as
/// Redis 7.0 finds them from its key specs (COMMAND GETKEYS); then, unlike Redis, the key after
/// every later `STORE`/`STOREDIST`. Redis writes to the last one but checks ACL key patterns
/// only against the first ones, so `STORE allowed STORE forbidden` writes where the user may
/// not; Relis checks every key the command may write.
pub fn georadius_keys(argv: &[Bytes]) -> Vec<usize> {
    keys_after_store(argv, 6)
}

/// GEORADIUSBYMEMBER's keys: as [`georadius_keys`], the keywords searched from argument 5.
pub fn georadiusbymember_keys(argv: &[Bytes]) -> Vec<usize> {
    keys_after_store(argv, 5)
}

fn keys_after_store(argv: &[Bytes], from: usize) -> Vec<usize> {
    let end = argv.len().saturating_sub(1);
    let is = |i: usize, word: &[u8]| argv[i].eq_ignore_ascii_case(word);
    let mut keys = vec![1];
    for word in [&b"store"[..], b"storedist"] {
        if let Some(i) = (from..end).find(|&i| is(i, word)) {
            keys.push(i + 1);
        }
    }
    for i in from..end {
        if (is(i, b"store") || is(i, b"storedist")) && !keys.contains(&(i + 1)) {
            keys.push(i + 1);
        }
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(form: Form, line: &str) -> Search {
        let name = match form {
            Form::Radius { .. } => "georadius",
            Form::RadiusByMember { .. } => "georadiusbymember",
            Form::Search => "geosearch",
            Form::SearchStore => "geosearchstore",
        };
        Search::from_args(&mut crate::cmd::zset::args_of(name, line), form).unwrap()
    }

    fn fail(s: &Search) -> Option<String> {
        s.steps.iter().find_map(|st| match st {
            Step::Fail(e) => Some(e.message()),
            Step::Member(_) => None,
        })
    }

    #[test]
    fn options_and_their_errors() {
        let s = parse(
            Form::Radius { ro: false },
            "k 15 37 200 km withdist count 3 desc",
        );
        assert_eq!(s.shape, Some(Shape::Radius(200.0)));
        assert_eq!((s.unit, s.count, s.sort), (1000.0, 3, Sort::Desc));
        assert!(s.withdist && fail(&s).is_none());
        let s = parse(Form::Radius { ro: false }, "k 15 37 -1 km");
        assert_eq!(
            s.base_err.map(|e| e.message()).as_deref(),
            Some("ERR radius cannot be negative")
        );
        let s = parse(Form::Radius { ro: true }, "k 15 37 1 km store d");
        assert_eq!(fail(&s).as_deref(), Some("ERR syntax error"));
        let s = parse(Form::Search, "k frommember a bybox 1 x m");
        assert_eq!(fail(&s).as_deref(), Some("ERR need numeric height"));
        assert!(matches!(s.steps[0], Step::Member(_)));
        let s = parse(Form::Search, "k fromlonlat 1 2 frommember a");
        assert_eq!(fail(&s).as_deref(), Some("ERR syntax error"));
        let s = parse(
            Form::SearchStore,
            "d k fromlonlat 1 2 byradius 1 m storedist",
        );
        assert!(s.storedist && fail(&s).is_none() && s.stores());
        let s = parse(
            Form::Search,
            "k fromlonlat 1 2 byradius 1 m count 1 any withhash",
        );
        assert!(s.any && fail(&s).is_none());
        let s = parse(Form::Search, "k fromlonlat 1 2 byradius 1 m any");
        assert_eq!(
            fail(&s).as_deref(),
            Some("ERR the ANY argument requires COUNT argument")
        );
        let s = parse(Form::Search, "k fromlonlat 1 2 withdist asc");
        assert_eq!(
            fail(&s).as_deref(),
            Some("ERR exactly one of BYRADIUS and BYBOX can be specified for geosearch")
        );
    }

    #[test]
    fn store_keys() {
        let v = |s: &str| {
            s.split(' ')
                .map(|a| Bytes::from(a.to_string()))
                .collect::<Vec<_>>()
        };
        assert_eq!(georadius_keys(&v("georadius k 1 2 3 m")), vec![1]);
        // Pinned from redis-server 7.0.15's COMMAND GETKEYS.
        assert_eq!(
            georadius_keys(&v("georadius k 1 2 3 m store a storedist b")),
            vec![1, 7, 9]
        );
        assert_eq!(
            georadius_keys(&v("georadius k 1 2 3 m storedist b store a")),
            vec![1, 9, 7]
        );
        assert_eq!(georadius_keys(&v("georadius k 1 2 3 m store")), vec![1]);
        // Redis gives 1, 6 (the key it writes, 8, goes unchecked by ACL there).
        assert_eq!(
            georadiusbymember_keys(&v("georadiusbymember k m 3 m store d store x")),
            vec![1, 6, 8]
        );
    }
}
