//! LATENCY LATEST | HISTORY event | RESET [event ...] | DOCTOR | GRAPH event |
//! HISTOGRAM [command ...] | HELP — the latency monitor and the per-command latency
//! histograms. <https://redis.io/docs/management/optimization/latency-monitor/>,
//! <https://redis.io/commands/latency-histogram/>
//!
//! Events are recorded when they take at least `latency-monitor-threshold` milliseconds (0,
//! the default, turns the monitor off): Redis's `command` and `fast-command`, and Relis's own
//! `commit`, `fsync` and `checkpoint` (see [`relis::timing::Timed`]). DOCTOR's report and
//! GRAPH's ASCII art are Redis's, word for word and character for character.

use crate::args::Args;
use crate::client::Client;
use crate::cmd::{BoxFuture, ConnCmd, Parsed, Spec, Table};
use crate::error::CmdError;
use crate::observe::{cumulative_buckets, Series};
use bytes::Bytes;
use resp::Frame;
use std::fmt::Write as _;

const ADMIN: crate::cmd::Flags = Spec::flags(&["admin", "noscript", "loading", "stale"]);
const ADMIN_ACL: crate::cmd::Cats = Spec::acl(&["admin", "slow", "dangerous"]);
const SPECIAL: &[&str] = &[
    "nondeterministic_output",
    "request_policy:all_nodes",
    "response_policy:special",
];

/// LATENCY's subcommands.
pub const SUBCOMMANDS: &[Spec] = &[
    Spec {
        name: "latency|latest",
        arity: 2,
        flags: ADMIN,
        acl: ADMIN_ACL,
        group: "server",
        since: "2.8.13",
        summary: "Return the latest latency samples for all events.",
        parse: |a| Latency::plain(a, Latency::Latest),
        tips: SPECIAL,
        ..Spec::BASE
    },
    Spec {
        name: "latency|history",
        arity: 3,
        flags: ADMIN,
        acl: ADMIN_ACL,
        group: "server",
        since: "2.8.13",
        summary: "Return timestamp-latency samples for the event.",
        parse: |a| Latency::event(a, Latency::History),
        tips: SPECIAL,
        ..Spec::BASE
    },
    Spec {
        name: "latency|reset",
        arity: -2,
        flags: ADMIN,
        acl: ADMIN_ACL,
        group: "server",
        since: "2.8.13",
        summary: "Reset latency data for one or more events.",
        parse: |a| Parsed::conn(Latency::Reset(a.rest())),
        tips: &["request_policy:all_nodes", "response_policy:all_succeeded"],
        ..Spec::BASE
    },
    Spec {
        name: "latency|doctor",
        arity: 2,
        flags: ADMIN,
        acl: ADMIN_ACL,
        group: "server",
        since: "2.8.13",
        summary: "Return a human readable latency analysis report.",
        parse: |a| Latency::plain(a, Latency::Doctor),
        tips: SPECIAL,
        ..Spec::BASE
    },
    Spec {
        name: "latency|graph",
        arity: 3,
        flags: ADMIN,
        acl: ADMIN_ACL,
        group: "server",
        since: "2.8.13",
        summary: "Return a latency graph for the event.",
        parse: |a| Latency::event(a, Latency::Graph),
        tips: SPECIAL,
        ..Spec::BASE
    },
    Spec {
        name: "latency|histogram",
        arity: -2,
        flags: ADMIN,
        acl: ADMIN_ACL,
        group: "server",
        since: "7.0.0",
        summary: "Return the cumulative distribution of latencies of a subset of commands or all.",
        complexity:
            "O(N) where N is the number of commands with latency information being retrieved.",
        parse: |a| Parsed::conn(Latency::Histogram(a.rest())),
        tips: SPECIAL,
        ..Spec::BASE
    },
    Spec {
        name: "latency|help",
        arity: 2,
        flags: Spec::flags(&["loading", "stale"]),
        acl: Spec::acl(&["slow"]),
        group: "server",
        since: "2.8.13",
        summary: "Show helpful text about the different subcommands.",
        parse: |a| Latency::plain(a, Latency::Help),
        ..Spec::BASE
    },
];

/// LATENCY's declaration (a container).
pub const SPEC: Spec = Spec {
    name: "latency",
    arity: -2,
    group: "server",
    since: "2.8.13",
    summary: "A container for latency diagnostics commands",
    complexity: "Depends on subcommand.",
    subcommands: SUBCOMMANDS,
    ..Spec::BASE
};

/// A LATENCY subcommand.
#[derive(Debug, PartialEq)]
pub enum Latency {
    /// LATENCY LATEST.
    Latest,
    /// LATENCY HISTORY event.
    History(Bytes),
    /// LATENCY RESET [event ...] (none: every event).
    Reset(Vec<Bytes>),
    /// LATENCY DOCTOR.
    Doctor,
    /// LATENCY GRAPH event.
    Graph(Bytes),
    /// LATENCY HISTOGRAM [command ...] (none: every command that ran).
    Histogram(Vec<Bytes>),
    /// LATENCY HELP.
    Help,
}

impl Latency {
    fn plain(args: &mut Args, cmd: Latency) -> Result<Parsed, CmdError> {
        args.finish()?;
        Parsed::conn(cmd)
    }

    fn event(args: &mut Args, cmd: fn(Bytes) -> Latency) -> Result<Parsed, CmdError> {
        let event = args.next()?;
        args.finish()?;
        Parsed::conn(cmd(event))
    }
}

const HELP: &[&str] = &[
    "DOCTOR",
    "    Return a human readable latency analysis report.",
    "GRAPH <event>",
    "    Return an ASCII latency graph for the <event> class.",
    "HISTORY <event>",
    "    Return time-latency samples for the <event> class.",
    "LATEST",
    "    Return the latest latency samples for all events.",
    "RESET [<event> ...]",
    "    Reset latency data of one or more <event> classes.",
    "    (default: reset all data for all event classes)",
    "HISTOGRAM [COMMAND ...]",
    "    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
    "    If no commands are specified then all histograms are replied.",
];

impl ConnCmd for Latency {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            let obs = &c.server.observe;
            let txt = |s: String| Frame::Verbatim {
                format: *b"txt",
                data: Bytes::from(s),
            };
            Ok(match *self {
                Latency::Latest => Frame::Array(
                    obs.latency
                        .events()
                        .into_iter()
                        .map(|(event, s)| {
                            let (time, ms) = s.latest();
                            Frame::Array(vec![
                                Frame::Bulk(Bytes::from(event)),
                                Frame::Integer(time),
                                Frame::Integer(ms as i64),
                                Frame::Integer(s.max as i64),
                            ])
                        })
                        .collect(),
                ),
                Latency::History(event) => match obs.latency.series(&event) {
                    None => Frame::Array(Vec::new()),
                    Some((_, s)) => Frame::Array(
                        s.history()
                            .into_iter()
                            .map(|(t, ms)| {
                                Frame::Array(vec![Frame::Integer(t), Frame::Integer(ms as i64)])
                            })
                            .collect(),
                    ),
                },
                Latency::Reset(events) => {
                    let n = if events.is_empty() {
                        obs.latency.reset(None)
                    } else {
                        events.iter().map(|e| obs.latency.reset(Some(e))).sum()
                    };
                    Frame::Integer(n as i64)
                }
                Latency::Doctor => {
                    let (slower_than, threshold) = {
                        let cfg = c.server.config.read();
                        (cfg.slowlog_log_slower_than, cfg.latency_monitor_threshold)
                    };
                    txt(doctor(
                        &obs.latency.events(),
                        threshold,
                        slower_than,
                        anon_huge_pages() > 0,
                        crate::state::unix_ms() / 1000,
                    ))
                }
                Latency::Graph(event) => match obs.latency.series(&event) {
                    None => return Err(CmdError::latency_no_samples(&event)),
                    Some((name, s)) => txt(graph(&name, &s, crate::state::unix_ms() / 1000)),
                },
                Latency::Histogram(names) => histograms(c, &names),
                Latency::Help => super::help("LATENCY", HELP),
            })
        })
    }
}

/// LATENCY HISTOGRAM's reply: for each command asked for (a container stands for its
/// subcommands too; unknown names are skipped) or, with none, every command, if it has run:
/// its calls and its cumulative buckets.
fn histograms(c: &Client, names: &[Bytes]) -> Frame {
    let table = Table::get();
    let mut idxs: Vec<usize> = Vec::new();
    if names.is_empty() {
        idxs.extend(0..table.specs.len());
    } else {
        for n in names {
            let Some((i, spec)) = table.lookup(n) else {
                continue;
            };
            idxs.push(i);
            for sub in spec.subcommands {
                if let Some((j, _)) = table.lookup(sub.name.as_bytes()) {
                    idxs.push(j);
                }
            }
        }
    }
    let hs = &c.server.observe.histograms;
    // Each command's entry is made once, however often it is named (Redis repeats it).
    let mut made: std::collections::HashMap<usize, Option<Frame>> = Default::default();
    let entries = idxs
        .into_iter()
        .filter_map(|i| {
            let entry = made.entry(i).or_insert_with(|| {
                let h = hs.get(i)?;
                let buckets = cumulative_buckets(&h)
                    .into_iter()
                    .map(|(us, n)| (Frame::Integer(us as i64), Frame::Integer(n as i64)))
                    .collect();
                Some(Frame::Map(vec![
                    (
                        Frame::Bulk(Bytes::from_static(b"calls")),
                        Frame::Integer(h.len() as i64),
                    ),
                    (
                        Frame::Bulk(Bytes::from_static(b"histogram_usec")),
                        Frame::Map(buckets),
                    ),
                ]))
            });
            let entry = entry.clone()?;
            Some((
                Frame::Bulk(Bytes::from_static(table.specs[i].name.as_bytes())),
                entry,
            ))
        })
        .collect();
    Frame::Map(entries)
}

/// Bytes of transparent huge pages the process uses (Redis's `THPGetAnonHugePagesSize`), 0 if
/// unknown.
fn anon_huge_pages() -> u64 {
    std::fs::read_to_string("/proc/self/smaps_rollup")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("AnonHugePages:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

/// Average, mean deviation, sample count and period of an event's samples (Redis's
/// `analyzeLatencyForEvent`).
struct Analysis {
    avg: u64,
    mad: u64,
    samples: u64,
    period: i64,
}

fn analyze(s: &Series, now: i64) -> Analysis {
    let h = s.history();
    let n = h.len() as u64;
    if n == 0 {
        return Analysis {
            avg: 0,
            mad: 0,
            samples: 0,
            period: 0,
        };
    }
    let avg = h.iter().map(|x| x.1).sum::<u64>() / n;
    let oldest = h.iter().map(|x| x.0).min().unwrap_or(now);
    let period = (now - oldest).max(0);
    let period = if period == 0 { 1 } else { period };
    let mad = h.iter().map(|x| x.1.abs_diff(avg)).sum::<u64>() / n;
    Analysis {
        avg,
        mad,
        samples: n,
        period,
    }
}

/// LATENCY DOCTOR's report (Redis's `createLatencyReport`), for `events` at unix second
/// `now`. Relis's `commit`, `fsync` and `checkpoint` events are disk-bound: they bring the
/// disk advices Redis gives for its AOF fsync events.
pub fn doctor(
    events: &[(String, Series)],
    threshold_ms: u64,
    slowlog_slower_than: i64,
    huge_pages: bool,
    now: i64,
) -> String {
    if events.is_empty() && threshold_ms == 0 {
        return "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. If we weren't in a deep space mission I'd suggest to take a look at https://redis.io/topics/latency-monitor.\n".into();
    }
    let mut report = String::new();
    let mut advices = 0;
    let (mut slowlog_enabled, mut slowlog_tuning, mut slowlog_inspect) = (false, false, false);
    let (mut scheduler, mut large_objects) = (false, false);
    let (mut local_disk, mut ssd, mut disk_contention) = (false, false, false);
    for (i, (event, s)) in events.iter().enumerate() {
        if i == 0 {
            report.push_str("Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n");
        }
        let a = analyze(s, now);
        let _ = write!(
            report,
            "{}. {}: {} latency spikes (average {}ms, mean deviation {}ms, period {:.2} sec). Worst all time event {}ms.",
            i + 1,
            event,
            a.samples,
            a.avg,
            a.mad,
            a.period as f64 / a.samples.max(1) as f64,
            s.max
        );
        match event.to_ascii_lowercase().as_str() {
            "command" => {
                if slowlog_slower_than < 0 {
                    slowlog_enabled = true;
                    advices += 1;
                } else if (slowlog_slower_than / 1000) as u64 > threshold_ms {
                    slowlog_tuning = true;
                    advices += 1;
                }
                slowlog_inspect = true;
                large_objects = true;
                advices += 2;
            }
            "fast-command" => {
                scheduler = true;
                advices += 1;
            }
            "commit" | "fsync" | "checkpoint" => {
                local_disk = true;
                ssd = true;
                disk_contention = true;
                advices += 3;
            }
            _ => {}
        }
        report.push('\n');
    }
    if huge_pages {
        advices += 1;
    }
    if events.is_empty() && advices == 0 {
        report.push_str("Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest bit. I honestly think you ought to sit down calmly, take a stress pill, and think things over.\n");
        return report;
    }
    if advices == 0 {
        report.push_str("\nWhile there are latency events logged, I'm not able to suggest any easy fix. Please use the Redis community to get some help, providing this report in your help request.\n");
        return report;
    }
    report.push_str("\nI have a few advices for you:\n\n");
    if slowlog_enabled {
        let _ = writeln!(
            report,
            "- There are latency issues with potentially slow commands you are using. Try to enable the Slow Log Redis feature using the command 'CONFIG SET slowlog-log-slower-than {}'. If the Slow log is disabled Redis is not able to log slow commands execution for you.",
            threshold_ms * 1000
        );
    }
    if slowlog_tuning {
        let _ = writeln!(
            report,
            "- Your current Slow Log configuration only logs events that are slower than your configured latency monitor threshold. Please use 'CONFIG SET slowlog-log-slower-than {}'.",
            threshold_ms * 1000
        );
    }
    if slowlog_inspect {
        report.push_str("- Check your Slow Log to understand what are the commands you are running which are too slow to execute. Please check https://redis.io/commands/slowlog for more information.\n");
    }
    if scheduler {
        report.push_str(concat!(
            "- The system is slow to execute Redis code paths not containing system calls. This usually means the system does not provide Redis CPU time to run for long periods. You should try to:\n",
            "  1) Lower the system load.\n",
            "  2) Use a computer / VM just for Redis if you are running other software in the same system.\n",
            "  3) Check if you have a \"noisy neighbour\" problem.\n",
            "  4) Check with 'redis-cli --intrinsic-latency 100' what is the intrinsic latency in your system.\n",
            "  5) Check if the problem is allocator-related by recompiling Redis with MALLOC=libc, if you are using Jemalloc. However this may create fragmentation problems.\n",
        ));
    }
    if local_disk {
        report.push_str("- It is strongly advised to use local disks for persistence, especially if you are using AOF. Remote disks provided by platform-as-a-service providers are known to be slow.\n");
    }
    if ssd {
        report.push_str("- SSD disks are able to reduce fsync latency, and total time needed for snapshotting and AOF log rewriting (resulting in smaller memory usage and smaller final AOF rewrite buffer flushes). With extremely high write load SSD disks can be a good option. However Redis should perform reasonably with high load using normal disks. Use this advice as a last resort.\n");
    }
    if disk_contention {
        report.push_str("- Try to lower the disk contention. This is often caused by other disk intensive processes running in the same computer (including other Redis instances).\n");
    }
    if large_objects {
        report.push_str("- Deleting, expiring or evicting (because of maxmemory policy) large objects is a blocking operation. If you have very large objects that are often deleted, expired, or evicted, try to fragment those objects into multiple smaller objects.\n");
    }
    if huge_pages {
        report.push_str("- I detected a non zero amount of anonymous huge pages used by your process. This creates very serious latency events in different conditions, especially when Redis is persisting on disk. To disable THP support use the command 'echo never > /sys/kernel/mm/transparent_hugepage/enabled', make sure to also add it into /etc/rc.local so that the command will be executed again after a reboot. Note that even if you have already disabled THP, you still need to restart the Redis process to get rid of the huge pages already created.\n");
    }
    report
}

/// Columns of a latency graph (Redis's `LATENCY_GRAPH_COLS`).
const GRAPH_COLS: usize = 80;

/// LATENCY GRAPH's text for `event` at unix second `now`: a heading, a rule, and a filled
/// sparkline four rows high with each sample's age below it (Redis's
/// `latencyCommandGenSparkeline`).
pub fn graph(event: &str, s: &Series, now: i64) -> String {
    let samples: Vec<(f64, String)> = s
        .history()
        .into_iter()
        .map(|(t, ms)| {
            let elapsed = now - t;
            let label = if elapsed < 60 {
                format!("{elapsed}s")
            } else if elapsed < 3600 {
                format!("{}m", elapsed / 60)
            } else if elapsed < 86400 {
                format!("{}h", elapsed / 3600)
            } else {
                format!("{}d", elapsed / 86400)
            };
            (ms as f64, label)
        })
        .collect();
    let values: Vec<u64> = s.history().iter().map(|x| x.1).collect();
    let (min, max) = (
        values.iter().copied().min().unwrap_or(0),
        values.iter().copied().max().unwrap_or(0),
    );
    let mut out = format!(
        "{event} - high {max} ms, low {min} ms (all time high {} ms)\n",
        s.max
    );
    out.push_str(&"-".repeat(GRAPH_COLS));
    out.push('\n');
    sparkline(&mut out, &samples, GRAPH_COLS, 4);
    out
}

/// Redis's filled ASCII sparkline (`sparklineRender` with `SPARKLINE_FILL`): `rows` rows of
/// `_o#` and `|`, then, after a blank row, the labels written downwards, `columns` samples per
/// block.
pub fn sparkline(out: &mut String, samples: &[(f64, String)], columns: usize, rows: usize) {
    const CHARSET_FILL: &[u8] = b"_o#";
    let charset_len = CHARSET_FILL.len() as i64;
    // The sequence's min and max as Redis tracks them while adding samples (a new minimum is
    // never also checked as a maximum).
    let (mut min, mut max) = (0.0f64, 0.0f64);
    for (i, (v, _)) in samples.iter().enumerate() {
        if i == 0 {
            (min, max) = (*v, *v);
        } else if *v < min {
            min = *v;
        } else if *v > max {
            max = *v;
        }
    }
    let labels = samples.iter().filter(|(_, l)| !l.is_empty()).count();
    let mut start = 0;
    while start < samples.len() {
        let len = (samples.len() - start).min(columns);
        if start != 0 {
            out.push('\n');
        }
        let mut relmax = max - min;
        if relmax == 0.0 {
            relmax = 1.0;
        }
        let steps = charset_len * rows as i64;
        let mut row = 0i64;
        loop {
            let mut more = false;
            let mut chars = vec![b' '; len];
            for j in 0..len {
                let (value, label) = &samples[start + j];
                let relval = value - min;
                let step = (((relval * steps as f64) as i64) as f64 / relmax) as i64;
                let step = step.clamp(0, steps - 1);
                if row < rows as i64 {
                    let charidx = step - (rows as i64 - row - 1) * charset_len;
                    more = true;
                    if (0..charset_len).contains(&charidx) {
                        chars[j] = CHARSET_FILL[charidx as usize];
                    } else if charidx >= charset_len {
                        chars[j] = b'|';
                    }
                } else {
                    // A blank row between the graph and the labels.
                    if labels > 0 && row - (rows as i64) < 1 {
                        more = true;
                        break;
                    }
                    let label_char = (row - rows as i64 - 1) as usize;
                    if label.len() > label_char {
                        more = true;
                        chars[j] = label.as_bytes()[label_char];
                    }
                }
            }
            if !more {
                break;
            }
            row += 1;
            out.push_str(&String::from_utf8_lossy(&chars));
            out.push('\n');
        }
        start += columns;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::LatencyMonitor;

    fn series(samples: &[(i64, u64)]) -> Series {
        let m = LatencyMonitor::default();
        for (t, ms) in samples {
            m.add("command", *ms, *t);
        }
        m.series(b"command").unwrap().1
    }

    #[test]
    fn graph_as_redis_draws_it() {
        // What redis-server 7.0.15 drew for DEBUG SLEEPs of 50, 30 and 63 ms in three seconds.
        let s = series(&[(1000, 50), (1001, 30), (1002, 63)]);
        assert_eq!(
            graph("command", &s, 1002),
            format!(
                "command - high 63 ms, low 30 ms (all time high 63 ms)\n{}\n  #\no |\n| |\n|_|\n   \n210\nsss\n",
                "-".repeat(80)
            )
        );
    }

    #[test]
    fn doctor_as_redis_reports() {
        let s = series(&[(1000, 50), (1001, 30), (1002, 63)]);
        let events = vec![("command".to_string(), s)];
        let report = doctor(&events, 1, 10000, false, 1002);
        // redis-server 7.0.15's report for the same samples.
        assert_eq!(
            report,
            "Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n\
             1. command: 3 latency spikes (average 47ms, mean deviation 12ms, period 0.67 sec). Worst all time event 63ms.\n\
             \nI have a few advices for you:\n\n\
             - Your current Slow Log configuration only logs events that are slower than your configured latency monitor threshold. Please use 'CONFIG SET slowlog-log-slower-than 1000'.\n\
             - Check your Slow Log to understand what are the commands you are running which are too slow to execute. Please check https://redis.io/commands/slowlog for more information.\n\
             - Deleting, expiring or evicting (because of maxmemory policy) large objects is a blocking operation. If you have very large objects that are often deleted, expired, or evicted, try to fragment those objects into multiple smaller objects.\n"
        );
        assert!(doctor(&[], 0, 10000, false, 0).starts_with("I'm sorry, Dave, I can't do that."));
        assert!(doctor(&[], 5, 10000, false, 0).starts_with("Dave, no latency spike"));
        let fsync = vec![("fsync".to_string(), series(&[(10, 7)]))];
        let r = doctor(&fsync, 5, 10000, false, 10);
        assert!(r.contains(
            "1. fsync: 1 latency spikes (average 7ms, mean deviation 0ms, period 1.00 sec)"
        ));
        assert!(r.contains("- Try to lower the disk contention."));
    }
}
