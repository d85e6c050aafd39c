//! The server family: INFO, COMMAND, CONFIG, TIME, LASTSAVE, SAVE, BGSAVE, SHUTDOWN, MONITOR.

pub mod command;
pub mod config;
pub mod info;
pub mod monitor;
pub mod save;
pub mod shutdown;
pub mod time;

use crate::cmd::Spec;
use bytes::Bytes;
use resp::Frame;

/// The server commands.
pub static SPECS: &[Spec] = &[
    info::SPEC,
    command::SPEC,
    config::SPEC,
    time::SPEC_TIME,
    time::SPEC_LASTSAVE,
    save::SPEC_SAVE,
    save::SPEC_BGSAVE,
    shutdown::SPEC,
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
