//! Progress of a long file operation (an RDB import or export): on a terminal, one line on
//! stderr redrawn in place (a bar, bytes, keys, rates, ETA); otherwise a line in the log every
//! few seconds. Hand-written: the line is short, and it saves a dependency tree.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// How often the terminal line is redrawn.
const REDRAW: Duration = Duration::from_millis(200);
/// How often a progress line goes to the log when stderr is not a terminal.
const LOG_EVERY: Duration = Duration::from_secs(5);

/// A progress display for `total` bytes of work.
pub struct Progress {
    what: &'static str,
    total: u64,
    start: Instant,
    last: Instant,
    terminal: bool,
    drawn: bool,
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
        }
    }

    /// Reports `bytes` done and `keys` so far; shown if it is time to.
    pub fn update(&mut self, bytes: u64, keys: u64) {
        let every = if self.terminal { REDRAW } else { LOG_EVERY };
        if self.last.elapsed() < every {
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
}
