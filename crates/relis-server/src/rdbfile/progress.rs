//! Progress of a long file operation (an RDB import or export): on a terminal, one line on
//! stderr redrawn in place (a bar, bytes, keys, rates, ETA); otherwise a line in the log every
//! few seconds. Hand-written: the line is short, and it saves a dependency tree.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How often the terminal line is redrawn.
const REDRAW: Duration = Duration::from_millis(200);
/// How often a progress line goes to the log when stderr is not a terminal.
const LOG_EVERY: Duration = Duration::from_secs(5);

/// What INFO shows of an RDB load in progress (`loading_*`, while a replica loads its full
/// sync) and of the last one that completed (`rdb_last_load_keys_loaded`, `..._expired`).
#[derive(Debug, Default)]
pub struct LoadStats {
    /// Unix time the load began, in milliseconds.
    pub(super) start_ms: AtomicI64,
    /// Bytes of the stream (0 when unknown).
    pub(super) total: AtomicU64,
    /// Bytes read so far.
    pub(super) loaded: AtomicU64,
    /// The `used-mem` the file's writer recorded.
    pub(super) rdb_used_mem: AtomicU64,
    last_loaded: AtomicU64,
    last_expired: AtomicU64,
}

impl LoadStats {
    pub(super) fn begin(&self, total: u64, now_ms: i64) {
        self.start_ms.store(now_ms, Ordering::Relaxed);
        self.total.store(total, Ordering::Relaxed);
        self.loaded.store(0, Ordering::Relaxed);
        self.rdb_used_mem.store(0, Ordering::Relaxed);
    }

    pub(super) fn end(&self, keys: u64, expired: u64) {
        self.last_loaded.store(keys, Ordering::Relaxed);
        self.last_expired.store(expired, Ordering::Relaxed);
    }

    /// Keys loaded and keys dropped as expired by the last load that completed.
    pub fn last_load(&self) -> (u64, u64) {
        (
            self.last_loaded.load(Ordering::Relaxed),
            self.last_expired.load(Ordering::Relaxed),
        )
    }

    /// INFO's `loading_*` fields at `now_ms`, as Redis computes them: the percentage of bytes
    /// read, and an ETA from the rate so far (1 second while under a second has passed).
    pub fn fields(&self, now_ms: i64) -> Vec<(&'static str, String)> {
        let start = self.start_ms.load(Ordering::Relaxed);
        let total = self.total.load(Ordering::Relaxed);
        let loaded = self.loaded.load(Ordering::Relaxed);
        let perc = if total == 0 {
            0.0
        } else {
            loaded as f64 / total as f64 * 100.0
        };
        let elapsed = (now_ms - start).max(0) / 1000;
        let eta = if elapsed == 0 || loaded == 0 {
            1
        } else {
            let rate = loaded as f64 / elapsed as f64;
            (total.saturating_sub(loaded) as f64 / rate) as i64
        };
        vec![
            ("loading_start_time", (start / 1000).to_string()),
            ("loading_total_bytes", total.to_string()),
            (
                "loading_rdb_used_mem",
                self.rdb_used_mem.load(Ordering::Relaxed).to_string(),
            ),
            ("loading_loaded_bytes", loaded.to_string()),
            ("loading_loaded_perc", format!("{perc:.2}")),
            ("loading_eta_seconds", eta.to_string()),
        ]
    }
}

/// A progress display for `total` bytes of work.
pub struct Progress {
    what: &'static str,
    total: u64,
    start: Instant,
    last: Instant,
    terminal: bool,
    drawn: bool,
    hidden: bool,
}

impl Progress {
    /// Starts showing progress of `what` ("importing", "exporting") over `total` bytes (0 when
    /// unknown: no bar and no ETA).
    pub fn new(what: &'static str, total: u64) -> Progress {
        let now = Instant::now();
        Progress {
            what,
            total,
            start: now,
            last: now,
            terminal: std::io::stderr().is_terminal(),
            drawn: false,
            hidden: false,
        }
    }

    /// Progress that is never shown (a server's SAVE: its log says when it is done).
    pub fn hidden() -> Progress {
        Progress {
            hidden: true,
            ..Progress::new("", 0)
        }
    }

    /// Reports `bytes` done and `keys` so far; shown if it is time to.
    pub fn update(&mut self, bytes: u64, keys: u64) {
        let every = if self.terminal { REDRAW } else { LOG_EVERY };
        if self.hidden || self.last.elapsed() < every {
            return;
        }
        self.last = Instant::now();
        let line = self.line(bytes, keys);
        if self.terminal {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r{line}\x1b[K");
            let _ = err.flush();
            self.drawn = true;
        } else {
            tracing::info!("{line}");
        }
    }

    /// Ends the display (the caller logs the outcome).
    pub fn finish(&mut self) {
        if self.drawn {
            let _ = writeln!(std::io::stderr());
            self.drawn = false;
        }
    }

    /// The progress line: `importing [#####     ] 52% 1.2 GB/2.3 GB, 1,234,567 keys,
    /// 80.1 MB/s, 95,000 keys/s, ETA 14s`.
    pub fn line(&self, bytes: u64, keys: u64) -> String {
        let secs = self.start.elapsed().as_secs_f64().max(1e-3);
        let rate = bytes as f64 / secs;
        let mut s = format!("{} ", self.what);
        if self.total > 0 {
            let frac = (bytes as f64 / self.total as f64).clamp(0.0, 1.0);
            let filled = (frac * 30.0) as usize;
            s.push_str(&format!(
                "[{}{}] {:>3}% {}/{}",
                "#".repeat(filled),
                " ".repeat(30 - filled),
                (frac * 100.0) as u32,
                human(bytes as f64),
                human(self.total as f64)
            ));
        } else {
            s.push_str(&human(bytes as f64));
        }
        s.push_str(&format!(
            ", {keys} keys, {}/s, {:.0} keys/s",
            human(rate),
            keys as f64 / secs
        ));
        if self.total > bytes && rate > 0.0 {
            let eta = (self.total - bytes) as f64 / rate;
            s.push_str(&format!(", ETA {}", duration(eta)));
        }
        s
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Bytes in B, KB, MB, GB (powers of 1000, as disk sizes are told).
fn human(b: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    let mut v = b;
    let mut u = 0;
    while v >= 1000.0 && u < UNITS.len() - 1 {
        v /= 1000.0;
        u += 1;
    }
    if u == 0 {
        format!("{v:.0} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// Seconds as `42s`, `3m07s` or `2h05m`.
fn duration(secs: f64) -> String {
    let s = secs.round() as u64;
    if s < 60 {
        format!("{s}s")
    } else if s < 3600 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{}h{:02}m", s / 3600, (s % 3600) / 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_shows_bar_rates_and_eta() {
        let mut p = Progress::new("importing", 2_000_000);
        p.start = Instant::now() - Duration::from_secs(2);
        let line = p.line(1_000_000, 5000);
        assert!(
            line.starts_with(
                "importing [###############               ]  50% 1.0 MB/2.0 MB, 5000 keys, "
            ),
            "{line}"
        );
        assert!(line.contains("/s, 2500 keys/s, ETA 2s"), "{line}");
        assert_eq!(human(999.0), "999 B");
        assert_eq!(human(1_500_000_000.0), "1.5 GB");
        assert_eq!(duration(187.0), "3m07s");
        assert_eq!(duration(7500.0), "2h05m");
    }

    fn field(fields: &[(&'static str, String)], name: &str) -> String {
        fields.iter().find(|(k, _)| *k == name).unwrap().1.clone()
    }

    #[test]
    fn loading_fields_as_redis_computes_them() {
        let st = LoadStats::default();
        st.begin(1000, 50_000);
        // Under a second in: Redis reports a 1-second ETA.
        let f = st.fields(50_400);
        assert_eq!(field(&f, "loading_start_time"), "50");
        assert_eq!(field(&f, "loading_total_bytes"), "1000");
        assert_eq!(field(&f, "loading_loaded_perc"), "0.00");
        assert_eq!(field(&f, "loading_eta_seconds"), "1");
        // 250 bytes in 2 s: 125 B/s, 750 to go, 6 s.
        st.loaded.store(250, Ordering::Relaxed);
        st.rdb_used_mem.store(123_456, Ordering::Relaxed);
        let f = st.fields(52_000);
        assert_eq!(field(&f, "loading_loaded_bytes"), "250");
        assert_eq!(field(&f, "loading_loaded_perc"), "25.00");
        assert_eq!(field(&f, "loading_eta_seconds"), "6");
        assert_eq!(field(&f, "loading_rdb_used_mem"), "123456");
        let names: Vec<_> = f.iter().map(|(k, _)| *k).collect();
        assert_eq!(
            names,
            [
                "loading_start_time",
                "loading_total_bytes",
                "loading_rdb_used_mem",
                "loading_loaded_bytes",
                "loading_loaded_perc",
                "loading_eta_seconds"
            ]
        );
        st.end(7, 2);
        assert_eq!(st.last_load(), (7, 2));
    }
}
