//! What an operator looks at first: the slow log (SLOWLOG), the latency monitor (LATENCY
//! LATEST / HISTORY / GRAPH / DOCTOR) and per-command latency histograms (LATENCY HISTOGRAM,
//! INFO latencystats), kept as Redis 7.0 keeps them.
//!
//! A command's time is what the command itself cost, as Redis measures it: from the moment it
//! starts running (on the connection, a reader or the writer) to its reply, without the time it
//! waited in a queue or blocked on a key. The engine's own events (`commit`, `fsync`,
//! `checkpoint`) come through [`relis::Db::on_timing`].

use crate::client::ClientInfo;
use crate::spec::{Flags, Index};
use bytes::Bytes;
use hdrhistogram::Histogram;
use parking_lot::Mutex;
use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

/// Most arguments a slow log entry keeps; the last one kept says how many more there were.
pub const SLOWLOG_ENTRY_MAX_ARGC: usize = 32;
/// Most bytes a slow log entry keeps of one argument.
pub const SLOWLOG_ENTRY_MAX_STRING: usize = 128;

/// A command line as the slow log needs it: its first [`SLOWLOG_ENTRY_MAX_ARGC`] arguments
/// (name included; shared, not copied), how many it had, and the client that sent it (none for
/// a command a script called, which Redis logs as `?:0`).
#[derive(Clone, Debug)]
pub struct Line {
    /// The first arguments, name included.
    pub argv: Vec<Bytes>,
    /// How many arguments the line had.
    pub argc: usize,
    /// The sender.
    pub client: Option<Arc<ClientInfo>>,
}

impl Line {
    /// The line `argv` sent by `client`.
    pub fn new(argv: &[Bytes], client: Option<Arc<ClientInfo>>) -> Line {
        Line {
            argv: argv.iter().take(SLOWLOG_ENTRY_MAX_ARGC).cloned().collect(),
            argc: argv.len(),
            client,
        }
    }
}

/// One slow log entry.
#[derive(Clone, Debug)]
pub struct SlowEntry {
    /// Its id (ids go on growing across SLOWLOG RESET).
    pub id: u64,
    /// Unix seconds when it was logged.
    pub time: i64,
    /// How long the command ran, in microseconds.
    pub micros: u64,
    /// The arguments, truncated and redacted as Redis does.
    pub args: Vec<Bytes>,
    /// The client's `ip:port` (`?:0` for a script's command).
    pub addr: String,
    /// The client's name then (empty for none).
    pub name: Bytes,
}

/// SLOWLOG: the latest commands that ran at least `slowlog-log-slower-than` microseconds.
#[derive(Debug)]
pub struct SlowLog {
    entries: Mutex<(u64, VecDeque<SlowEntry>)>,
    slower_than: AtomicI64,
    max_len: AtomicUsize,
}

impl Default for SlowLog {
    fn default() -> Self {
        SlowLog {
            entries: Mutex::new((0, VecDeque::new())),
            slower_than: AtomicI64::new(10_000),
            max_len: AtomicUsize::new(128),
        }
    }
}

/// The text a redacted argument shows (Redis's `shared.redacted`).
const REDACTED: &[u8] = b"(redacted)";

/// Configuration values whose CONFIG SET argument is redacted (Redis's `SENSITIVE_CONFIG`).
/// (TLS key passphrases are not among them in Redis 7.0.15: they show.)
/// Relis adds `backend`, whose URL may hold a password (a read-only setting: CONFIG SET
/// refuses it, but the line is still logged).
const SENSITIVE_CONFIG: &[&str] = &["requirepass", "masterauth", "masteruser", "backend"];

/// Which arguments of a line of the command `name` the slow log must not show (Redis's
/// `redactClientCommandArgument` calls): passwords and ACL rules.
fn redacted(name: &str, argv: &[Bytes]) -> Vec<usize> {
    let eq = |a: &Bytes, s: &str| a.eq_ignore_ascii_case(s.as_bytes());
    match name {
        "auth" => (1..argv.len()).collect(),
        "acl|setuser" => (2..argv.len()).collect(),
        "hello" => {
            let mut out = Vec::new();
            let mut j = 2;
            while j < argv.len() {
                let more = argv.len() - j - 1;
                if eq(&argv[j], "auth") && more >= 2 {
                    out.extend([j + 1, j + 2]);
                    j += 2;
                } else if eq(&argv[j], "setname") && more >= 1 {
                    j += 1;
                }
                j += 1;
            }
            out
        }
        "config|set" => (2..argv.len())
            .step_by(2)
            .filter(|&j| {
                SENSITIVE_CONFIG
                    .iter()
                    .any(|s| argv[j].eq_ignore_ascii_case(s.as_bytes()))
            })
            .map(|j| j + 1)
            .filter(|&j| j < argv.len())
            .collect(),
        "migrate" => {
            let mut out = Vec::new();
            let mut j = 6;
            while j < argv.len() {
                if eq(&argv[j], "auth") {
                    out.push(j + 1);
                    j += 1;
                } else if eq(&argv[j], "auth2") {
                    out.extend([j + 1, j + 2]);
                    j += 2;
                } else if eq(&argv[j], "keys") {
                    break;
                }
                j += 1;
            }
            out.retain(|&j| j < argv.len());
            out
        }
        _ => Vec::new(),
    }
}

/// The arguments an entry shows for `line` (Redis's `slowlogCreateEntry`): at most 32, the last
/// of them `... (N more arguments)` when there were more; each at most 128 bytes, followed by
/// `... (N more bytes)` when it was longer.
pub fn entry_args(name: &str, line: &Line) -> Vec<Bytes> {
    let hidden = redacted(name, &line.argv);
    let kept = line.argc.min(SLOWLOG_ENTRY_MAX_ARGC);
    (0..kept)
        .map(|j| {
            if kept != line.argc && j == kept - 1 {
                return Bytes::from(format!("... ({} more arguments)", line.argc - kept + 1));
            }
            if hidden.contains(&j) {
                return Bytes::from_static(REDACTED);
            }
            let a = &line.argv[j];
            if a.len() > SLOWLOG_ENTRY_MAX_STRING {
                let mut s = a[..SLOWLOG_ENTRY_MAX_STRING].to_vec();
                s.extend_from_slice(
                    format!("... ({} more bytes)", a.len() - SLOWLOG_ENTRY_MAX_STRING).as_bytes(),
                );
                Bytes::from(s)
            } else {
                // A copy: the argument may be a slice of a large input buffer, which an entry
                // must not keep alive.
                Bytes::copy_from_slice(a)
            }
        })
        .collect()
}

impl SlowLog {
    /// Whether commands are logged at all (`slowlog-log-slower-than` is not negative): only then
    /// is a command line kept until the command has run.
    pub fn enabled(&self) -> bool {
        self.slower_than.load(Ordering::Relaxed) >= 0
    }

    /// Applies `slowlog-log-slower-than` and `slowlog-max-len`.
    pub fn configure(&self, slower_than: i64, max_len: usize) {
        self.slower_than.store(slower_than, Ordering::Relaxed);
        self.max_len.store(max_len, Ordering::Relaxed);
        self.trim(&mut self.entries.lock().1);
    }

    fn trim(&self, entries: &mut VecDeque<SlowEntry>) {
        let max = self.max_len.load(Ordering::Relaxed);
        entries.truncate(max);
    }

    /// Logs `line`, a command named `command` with `flags` that ran `micros` microseconds, if that is slow enough
    /// (Redis's `slowlogPushEntryIfNeeded`; commands flagged `skip_slowlog`, EXEC, never are).
    pub fn push(&self, command: &str, flags: Flags, micros: u64, line: &Line) {
        let slower_than = self.slower_than.load(Ordering::Relaxed);
        if slower_than < 0 || micros < slower_than as u64 || flags.has(Flags::SKIP_SLOWLOG) {
            return;
        }
        let (addr, name) = match &line.client {
            Some(c) => (
                c.addr.to_string(),
                c.name.lock().clone().unwrap_or_default(),
            ),
            None => ("?:0".to_string(), Bytes::new()),
        };
        let args = entry_args(command, line);
        let mut g = self.entries.lock();
        let id = g.0;
        g.0 += 1;
        g.1.push_front(SlowEntry {
            id,
            time: crate::state::unix_ms() / 1000,
            micros,
            args,
            addr,
            name,
        });
        self.trim(&mut g.1);
    }

    /// The newest `count` entries (all with `None`), newest first.
    pub fn get(&self, count: Option<usize>) -> Vec<SlowEntry> {
        let g = self.entries.lock();
        g.1.iter()
            .take(count.unwrap_or(usize::MAX))
            .cloned()
            .collect()
    }

    /// How many entries there are.
    pub fn len(&self) -> usize {
        self.entries.lock().1.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Forgets every entry (ids keep growing).
    pub fn reset(&self) {
        self.entries.lock().1.clear();
    }
}

/// How many samples a latency event keeps (Redis's `LATENCY_TS_LEN`).
pub const LATENCY_TS_LEN: usize = 160;

/// One event's samples: at most one per second (the worst of that second), the latest
/// [`LATENCY_TS_LEN`] of them, and the worst ever.
#[derive(Clone, Debug)]
pub struct Series {
    /// (unix seconds, milliseconds); time 0 is an empty slot.
    pub samples: [(i64, u64); LATENCY_TS_LEN],
    idx: usize,
    /// The worst latency ever seen, in milliseconds.
    pub max: u64,
}

impl Series {
    fn new() -> Series {
        Series {
            samples: [(0, 0); LATENCY_TS_LEN],
            idx: 0,
            max: 0,
        }
    }

    fn add(&mut self, now: i64, ms: u64) {
        self.max = self.max.max(ms);
        let prev = (self.idx + LATENCY_TS_LEN - 1) % LATENCY_TS_LEN;
        if self.samples[prev].0 == now {
            self.samples[prev].1 = self.samples[prev].1.max(ms);
            return;
        }
        self.samples[self.idx] = (now, ms);
        self.idx = (self.idx + 1) % LATENCY_TS_LEN;
    }

    /// The samples, oldest first.
    pub fn history(&self) -> Vec<(i64, u64)> {
        (0..LATENCY_TS_LEN)
            .map(|j| self.samples[(self.idx + j) % LATENCY_TS_LEN])
            .filter(|s| s.0 != 0)
            .collect()
    }

    /// The latest sample.
    pub fn latest(&self) -> (i64, u64) {
        self.samples[(self.idx + LATENCY_TS_LEN - 1) % LATENCY_TS_LEN]
    }
}

/// The latency monitor: events that took at least `latency-monitor-threshold` milliseconds.
#[derive(Debug, Default)]
pub struct LatencyMonitor {
    threshold_ms: AtomicU64,
    /// Events in the order they were first seen.
    events: Mutex<Vec<(String, Series)>>,
}

impl LatencyMonitor {
    /// The threshold in milliseconds (0: off).
    pub fn threshold(&self) -> u64 {
        self.threshold_ms.load(Ordering::Relaxed)
    }

    /// Records `ms` for `event` if the monitor is on and it is at least the threshold (Redis's
    /// `latencyAddSampleIfNeeded`).
    pub fn add_if_needed(&self, event: &str, ms: u64) {
        let t = self.threshold();
        if t > 0 && ms >= t {
            self.add(event, ms, crate::state::unix_ms() / 1000);
        }
    }

    /// Records `ms` for `event` at unix second `now`.
    pub fn add(&self, event: &str, ms: u64, now: i64) {
        let mut g = self.events.lock();
        match g.iter_mut().find(|(e, _)| e == event) {
            Some((_, s)) => s.add(now, ms),
            None => {
                let mut s = Series::new();
                s.add(now, ms);
                g.push((event.to_string(), s));
            }
        }
    }

    /// Every event and its series.
    pub fn events(&self) -> Vec<(String, Series)> {
        self.events.lock().clone()
    }

    /// The series of `event` (exact name, as Redis looks it up).
    pub fn series(&self, event: &[u8]) -> Option<(String, Series)> {
        self.events
            .lock()
            .iter()
            .find(|(e, _)| e.as_bytes() == event)
            .cloned()
    }

    /// Forgets `event` (any case), or every event; returns how many were forgotten.
    pub fn reset(&self, event: Option<&[u8]>) -> usize {
        let mut g = self.events.lock();
        let before = g.len();
        g.retain(|(e, _)| event.is_some_and(|ev| !e.as_bytes().eq_ignore_ascii_case(ev)));
        before - g.len()
    }
}

/// Smallest and largest nanoseconds a histogram holds (Redis's `LATENCY_HISTOGRAM_MIN_VALUE`
/// and `_MAX_VALUE`); 2 significant figures, as Redis's.
const HIST_MIN: u64 = 1;
const HIST_MAX: u64 = 1_000_000_000;

/// Per-command latency histograms, in nanoseconds as Redis keeps them (from microsecond
/// timings), each made when its command first runs.
pub struct Histograms {
    tracking: AtomicBool,
    /// Whether the command at each index is flagged `fast` (looked up once, not per run).
    fast: Vec<bool>,
    per_cmd: Vec<Mutex<Option<Histogram<u64>>>>,
    percentiles: Mutex<Vec<f64>>,
}

impl std::fmt::Debug for Histograms {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Histograms").finish_non_exhaustive()
    }
}

impl Default for Histograms {
    fn default() -> Self {
        Histograms {
            tracking: AtomicBool::new(true),
            fast: (0..Index::get().len())
                .map(|i| Index::get().flags(i).has(Flags::FAST))
                .collect(),
            per_cmd: (0..Index::get().len()).map(|_| Mutex::new(None)).collect(),
            percentiles: Mutex::new(vec![50.0, 99.0, 99.9]),
        }
    }
}

impl Histograms {
    /// Records `micros` for the command at table index `idx`, if `latency-tracking` is on.
    pub fn record(&self, idx: usize, micros: u64) {
        if !self.tracking.load(Ordering::Relaxed) {
            return;
        }
        let Some(slot) = self.per_cmd.get(idx) else {
            return;
        };
        let ns = micros.saturating_mul(1000).clamp(HIST_MIN, HIST_MAX);
        let mut g = slot.lock();
        let h = g.get_or_insert_with(|| {
            Histogram::new_with_bounds(HIST_MIN, HIST_MAX, 2).expect("valid histogram bounds")
        });
        h.saturating_record(ns);
    }

    /// Forgets every histogram (CONFIG RESETSTAT).
    pub fn reset(&self) {
        for h in &self.per_cmd {
            *h.lock() = None;
        }
    }

    /// A copy of the histogram of the command at `idx`, if it ran since the last reset.
    pub fn get(&self, idx: usize) -> Option<Histogram<u64>> {
        self.per_cmd.get(idx).and_then(|h| h.lock().clone())
    }

    /// `latency-tracking-info-percentiles`.
    pub fn percentiles(&self) -> Vec<f64> {
        self.percentiles.lock().clone()
    }
}

/// The value at `percentile` (0..=100) as Redis's HdrHistogram computes it: the count is
/// rounded to the nearest, and the answer is the highest value equivalent to the one found
/// (the lowest, for percentile 0).
pub fn value_at_percentile(h: &Histogram<u64>, percentile: f64) -> u64 {
    let p = percentile.min(100.0);
    let want = ((p / 100.0 * h.len() as f64 + 0.5) as u64).max(1);
    let mut total = 0;
    for v in h.iter_recorded() {
        total += v.count_at_value();
        if total >= want {
            let at = v.value_iterated_to();
            return if percentile == 0.0 {
                h.lowest_equivalent(at)
            } else {
                h.highest_equivalent(at)
            };
        }
    }
    0
}

/// LATENCY HISTOGRAM's buckets: (microseconds, cumulative count) at every power of two from
/// 1024 ns up, as Redis's log iterator reports them (a value is counted at the first level not
/// below the lowest value equivalent to it; a level shows as its highest equivalent value in
/// whole microseconds), only levels that add to the count.
pub fn cumulative_buckets(h: &Histogram<u64>) -> Vec<(u64, u64)> {
    let mut levels: BTreeMap<u64, u64> = BTreeMap::new();
    for v in h.iter_recorded() {
        let lo = h.lowest_equivalent(v.value_iterated_to());
        let level = lo.max(1024).next_power_of_two();
        *levels.entry(level).or_default() += v.count_at_value();
    }
    let mut total = 0;
    levels
        .into_iter()
        .map(|(level, n)| {
            total += n;
            (h.highest_equivalent(level) / 1000, total)
        })
        .collect()
}

/// A double as C's `%f` prints it, trailing zeros (and a trailing point) removed (Redis's
/// `trimDoubleString`).
pub fn trim_double(v: f64) -> String {
    let s = format!("{v:.6}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Everything this module keeps for a server.
#[derive(Debug, Default)]
pub struct Observe {
    /// SLOWLOG.
    pub slowlog: SlowLog,
    /// LATENCY's events.
    pub latency: LatencyMonitor,
    /// Per-command histograms.
    pub histograms: Histograms,
}

impl Observe {
    /// Applies the settings of `cfg`.
    pub fn configure(&self, cfg: &crate::config::Config) {
        self.slowlog
            .configure(cfg.slowlog_log_slower_than, cfg.slowlog_max_len);
        self.latency
            .threshold_ms
            .store(cfg.latency_monitor_threshold, Ordering::Relaxed);
        self.histograms
            .tracking
            .store(cfg.latency_tracking, Ordering::Relaxed);
        *self.histograms.percentiles.lock() = cfg.latency_tracking_info_percentiles.clone();
    }

    /// Records one run of the command at table index `idx` that took `micros`: its histogram,
    /// the latency monitor's `command` or `fast-command` event, and, with its `line`, the slow
    /// log.
    pub fn command(&self, idx: usize, micros: u64, line: Option<&Line>) {
        self.histograms.record(idx, micros);
        // Every command makes a latency event, EXEC too (only the slow log skips it).
        let event = if self.histograms.fast.get(idx).copied().unwrap_or(false) {
            "fast-command"
        } else {
            "command"
        };
        self.latency.add_if_needed(event, micros / 1000);
        if let Some(line) = line {
            let index = Index::get();
            self.slowlog
                .push(index.name(idx), index.flags(idx), micros, line);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::Table;

    fn flags(name: &str) -> Flags {
        Table::get().lookup(name.as_bytes()).unwrap().1.flags
    }

    fn line(args: &[&str]) -> Line {
        let v: Vec<Bytes> = args.iter().map(|a| Bytes::from(a.to_string())).collect();
        Line::new(&v, None)
    }

    fn shown(name: &str, args: &[&str]) -> Vec<String> {
        entry_args(name, &line(args))
            .iter()
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .collect()
    }

    #[test]
    fn arguments_are_truncated_as_redis_does() {
        let mut args = vec!["rpush".to_string(), "l".to_string()];
        args.extend((1..=40).map(|i| i.to_string()));
        let refs: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
        let out = shown("rpush", &refs);
        assert_eq!(out.len(), 32);
        assert_eq!(out[30], "29");
        assert_eq!(out[31], "... (11 more arguments)");
        // Exactly 32 arguments are all kept.
        let out = shown("rpush", &refs[..32]);
        assert_eq!(out.len(), 32);
        assert_eq!(out[31], "30");

        let long = "x".repeat(200);
        let out = shown("set", &["set", "k", &long]);
        assert_eq!(out[2], format!("{}... (72 more bytes)", "x".repeat(128)));
        let exact = "y".repeat(128);
        assert_eq!(shown("set", &["set", "k", &exact])[2], exact);
    }

    #[test]
    fn entries_keep_no_input_buffer_alive() {
        // Arguments arrive as slices of the connection's input buffer.
        let buf = Bytes::from(vec![b'a'; 1 << 20]);
        let argv = vec![buf.slice(0..3), buf.slice(3..6), buf.slice(6..1000)];
        let args = entry_args("set", &Line::new(&argv, None));
        let range = buf.as_ptr() as usize..buf.as_ptr() as usize + buf.len();
        for a in &args {
            assert!(!range.contains(&(a.as_ptr() as usize)));
        }
    }

    #[test]
    fn secrets_are_redacted() {
        assert_eq!(
            shown("auth", &["auth", "u", "p"]),
            ["auth", "(redacted)", "(redacted)"]
        );
        assert_eq!(
            shown(
                "hello",
                &["hello", "3", "AUTH", "u", "p", "setname", "auth"]
            ),
            [
                "hello",
                "3",
                "AUTH",
                "(redacted)",
                "(redacted)",
                "setname",
                "auth"
            ]
        );
        assert_eq!(
            shown("acl|setuser", &["acl", "setuser", "u1", "on", ">pw"]),
            ["acl", "setuser", "(redacted)", "(redacted)", "(redacted)"]
        );
        assert_eq!(
            shown(
                "config|set",
                &["config", "set", "maxclients", "10", "REQUIREPASS", "pw"]
            ),
            [
                "config",
                "set",
                "maxclients",
                "10",
                "REQUIREPASS",
                "(redacted)"
            ]
        );
        // As redis-server 7.0.15 shows them.
        assert_eq!(
            shown(
                "config|set",
                &["config", "set", "masteruser", "u", "tls-key-file-pass", "x"]
            ),
            [
                "config",
                "set",
                "masteruser",
                "(redacted)",
                "tls-key-file-pass",
                "x"
            ]
        );
        // Relis's own: the backend's URL (refused at run time, logged all the same).
        assert_eq!(
            shown(
                "config|set",
                &["config", "set", "Backend", "postgres://u:p@h/d"]
            ),
            ["config", "set", "Backend", "(redacted)"]
        );
        assert_eq!(shown("get", &["get", "auth"]), ["get", "auth"]);
    }

    #[test]
    fn slowlog_keeps_the_newest() {
        let log = SlowLog::default();
        log.configure(0, 2);
        for k in ["a", "b", "c"] {
            log.push("get", flags("get"), 5, &line(&["get", k]));
        }
        let e = log.get(None);
        assert_eq!(e.iter().map(|e| e.id).collect::<Vec<_>>(), [2, 1]);
        assert_eq!(e[0].args[1], "c");
        assert_eq!(e[0].addr, "?:0");
        assert_eq!(log.get(Some(1)).len(), 1);
        // Below the threshold, and EXEC, are not logged.
        log.configure(10, 2);
        log.push("get", flags("get"), 9, &line(&["get", "d"]));
        log.push("exec", flags("exec"), 100, &line(&["exec"]));
        assert_eq!(log.get(None)[0].id, 2);
        log.push("get", flags("get"), 10, &line(&["get", "d"]));
        assert_eq!(log.get(None)[0].id, 3);
        // Ids go on after a reset; a shorter max-len trims at once.
        log.reset();
        assert!(log.is_empty());
        log.push("get", flags("get"), 10, &line(&["get", "e"]));
        assert_eq!(log.get(None)[0].id, 4);
        log.configure(-1, 0);
        assert_eq!(log.len(), 0);
        assert!(!log.enabled());
    }

    #[test]
    fn latency_series_keep_the_worst_of_each_second() {
        let m = LatencyMonitor::default();
        m.add("command", 50, 100);
        m.add("command", 20, 100);
        m.add("command", 30, 101);
        let (_, s) = m.series(b"command").unwrap();
        assert_eq!(s.history(), [(100, 50), (101, 30)]);
        assert_eq!(s.latest(), (101, 30));
        assert_eq!(s.max, 50);
        for t in 0..200 {
            m.add("command", 1, 1000 + t);
        }
        let (_, s) = m.series(b"command").unwrap();
        assert_eq!(s.history().len(), LATENCY_TS_LEN);
        assert_eq!(s.history()[0].0, 1040);
        assert_eq!(s.max, 50);
        m.add("fsync", 3, 5);
        assert_eq!(m.reset(Some(b"COMMAND")), 1);
        assert_eq!(m.reset(Some(b"nosuch")), 0);
        assert_eq!(m.reset(None), 1);
        // Off by default: nothing is added.
        m.add_if_needed("command", 1000);
        assert!(m.events().is_empty());
    }

    #[test]
    fn histograms_as_redis_reports_them() {
        let idx = Table::get().lookup(b"set").unwrap().0;
        let hs = Histograms::default();
        hs.record(idx, 5);
        hs.record(idx, 5);
        hs.record(idx, 8);
        let h = hs.get(idx).unwrap();
        // What redis-server 7.0.15 printed for SET runs of 5, 5 and 8 microseconds.
        let p = |q| format!("{:.3}", value_at_percentile(&h, q) as f64 / 1000.0);
        assert_eq!(p(50.0), "5.023");
        assert_eq!(p(99.0), "8.031");
        assert_eq!(p(0.0), "4.992");
        assert_eq!(p(100.0), "8.031");
        assert_eq!(p(12.3456), "5.023");
        assert_eq!(cumulative_buckets(&h), [(8, 3)]);
        // 33 us lies in the bucket that starts at 32768 ns: Redis shows it at level "33".
        hs.record(idx, 33);
        hs.record(idx, 1);
        hs.record(idx, 200);
        let h = hs.get(idx).unwrap();
        assert_eq!(cumulative_buckets(&h), [(1, 1), (8, 4), (33, 5), (264, 6)]);
        hs.reset();
        assert!(hs.get(idx).is_none());
    }

    #[test]
    fn a_command_run_feeds_everything() {
        Table::get();
        let o = Observe::default();
        o.configure(&crate::config::Config {
            slowlog_log_slower_than: 0,
            latency_monitor_threshold: 1,
            ..Default::default()
        });
        let idx = |n: &str| Table::get().lookup(n.as_bytes()).unwrap().0;
        o.command(idx("get"), 2_500, Some(&line(&["get", "k"])));
        o.command(idx("exec"), 3_000, Some(&line(&["exec"])));
        o.command(idx("keys"), 500, None);
        let events = o.latency.events();
        let names: Vec<&str> = events.iter().map(|(e, _)| e.as_str()).collect();
        // GET is fast; EXEC is a `command` event though it is never slow-logged; 0 ms is none.
        assert_eq!(names, ["fast-command", "command"]);
        assert_eq!(events[1].1.max, 3);
        assert_eq!(o.slowlog.len(), 1);
        assert_eq!(o.histograms.get(idx("keys")).unwrap().len(), 1);
    }

    #[test]
    fn percentile_labels() {
        assert_eq!(trim_double(50.0), "50");
        assert_eq!(trim_double(99.9), "99.9");
        assert_eq!(trim_double(12.3456), "12.3456");
        assert_eq!(trim_double(0.0), "0");
    }
}
