//! The server family: INFO, COMMAND, CONFIG, MEMORY, DEBUG, TIME, LASTSAVE, SAVE, BGSAVE,
//! BGREWRITEAOF, SHUTDOWN, SLOWLOG, LATENCY, MODULE, LOLWUT, MONITOR.

pub mod bgrewriteaof;
pub mod command;
pub mod config;
pub mod debug;
pub mod info;
pub mod latency;
pub mod lolwut;
pub mod memory;
pub mod module;
pub mod monitor;
pub mod save;
pub mod shutdown;
pub mod slowlog;
pub mod time;

use crate::cmd::Spec;
use bytes::Bytes;
use resp::Frame;

/// The server commands.
pub static SPECS: &[Spec] = &[
    info::SPEC,
    command::SPEC,
    config::SPEC,
    memory::SPEC,
    debug::SPEC,
    time::SPEC_TIME,
    time::SPEC_LASTSAVE,
    save::SPEC_SAVE,
    save::SPEC_BGSAVE,
    bgrewriteaof::SPEC,
    shutdown::SPEC,
    slowlog::SPEC,
    latency::SPEC,
    module::SPEC,
    lolwut::SPEC,
    monitor::SPEC,
];

/// A `<CMD> HELP` reply in Redis's layout: a heading, the lines, then HELP itself, each a
/// simple string.
pub fn help(cmd: &str, lines: &[&str]) -> Frame {
    let heading = format!("{cmd} <subcommand> [<arg> [value] [opt] ...]. Subcommands are:");
    let mut out = vec![Frame::Simple(Bytes::from(heading))];
    out.extend(
        lines
            .iter()
            .chain(&["HELP", "    Prints this help."])
            .map(|l| Frame::Simple(Bytes::copy_from_slice(l.as_bytes()))),
    );
    Frame::Array(out)
}
