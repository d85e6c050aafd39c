//! FCALL function numkeys [key ...] [arg ...] — call a function of a loaded library;
//! FCALL_RO — the same for a function flagged `no-writes`.
//! <https://redis.io/commands/fcall/>, <https://redis.io/commands/fcall_ro/>
//!
//! Like EVAL, the function runs on the writer as one write job; it gets KEYS and ARGV as its
//! two arguments.

use super::{numkeys_keys, RO_KEYS, RW_KEYS};
use crate::args::Args;
use crate::cmd::{Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use crate::lua::{Call, Target};
use bytes::Bytes;
use resp::Frame;

/// FCALL's declaration.
pub const SPEC_FCALL: Spec = Spec {
    name: "fcall",
    arity: -3,
    flags: Spec::flags(&[
        "noscript",
        "stale",
        "skip_monitor",
        "no_mandatory_keys",
        "movablekeys",
    ]),
    acl: Spec::acl(&["slow", "scripting"]),
    group: "scripting",
    since: "7.0.0",
    summary: "Invoke a function",
    complexity: "Depends on the function that is executed.",
    parse: FCall::parse_fcall,
    unblocks: true,
    find_keys: Some(numkeys_keys),
    key_specs: RW_KEYS,
    key_notes: "We cannot tell how the keys will be used so we assume the worst, RW and UPDATE",
    ..Spec::BASE
};

/// FCALL_RO's declaration.
pub const SPEC_FCALL_RO: Spec = Spec {
    name: "fcall_ro",
    flags: Spec::flags(&[
        "readonly",
        "noscript",
        "stale",
        "skip_monitor",
        "no_mandatory_keys",
        "movablekeys",
    ]),
    summary: "Invoke a read-only function",
    parse: FCall::parse_fcall_ro,
    unblocks: false,
    key_specs: RO_KEYS,
    key_notes: "We cannot tell how the keys will be used so we assume the worst, RO and ACCESS",
    ..SPEC_FCALL
};

/// FCALL and FCALL_RO.
pub struct FCall {
    call: parking_lot::Mutex<Option<Call>>,
}

impl FCall {
    fn parse(args: &mut Args, readonly: bool) -> Result<Parsed, CmdError> {
        // FUNCTION STATS shows the command line; the name as the table spells it.
        let mut command = vec![Bytes::from_static(if readonly {
            b"fcall_ro"
        } else {
            b"fcall"
        })];
        let name = args.next()?;
        let n = args.next()?;
        command.push(name.clone());
        command.push(n.clone());
        let n = relis::parse_i64(&n).ok_or(CmdError::FCALL_NUMKEYS)?;
        let mut keys = args.rest();
        args.finish()?;
        if n > keys.len() as i64 {
            return Err(CmdError::NUMKEYS_OVER_ARGS);
        }
        if n < 0 {
            return Err(CmdError::NUMKEYS_NEGATIVE);
        }
        command.extend(keys.iter().cloned());
        let argv = keys.split_off(n as usize);
        Parsed::write(FCall {
            call: parking_lot::Mutex::new(Some(Call {
                target: Target::Function(name),
                keys,
                args: argv,
                readonly,
                command,
            })),
        })
    }
    fn parse_fcall(args: &mut Args) -> Result<Parsed, CmdError> {
        FCall::parse(args, false)
    }
    fn parse_fcall_ro(args: &mut Args) -> Result<Parsed, CmdError> {
        FCall::parse(args, true)
    }
}

impl WriteCmd for FCall {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let Some(call) = self.call.lock().take() else {
            return Err(CmdError::Internal("function run twice".into()));
        };
        crate::lua::run(w, cx, call)
    }

    /// As EVAL: writes before a runtime error stay.
    fn on_error(&self) -> relis::OnError {
        relis::OnError::Keep
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(words: &[&str]) -> Option<CmdError> {
        let argv = words
            .iter()
            .map(|w| Bytes::copy_from_slice(w.as_bytes()))
            .collect();
        FCall::parse_fcall(&mut Args::new("fcall", argv)).err()
    }

    #[test]
    fn parse() {
        assert_eq!(p(&["f", "0"]), None);
        assert_eq!(p(&["f", "1", "k", "a"]), None);
        assert_eq!(
            p(&["f", "x"]),
            Some(CmdError::err("Bad number of keys provided"))
        );
        assert_eq!(
            p(&["f", "-1"]),
            Some(CmdError::err("Number of keys can't be negative"))
        );
        assert_eq!(
            p(&["f", "3", "k"]),
            Some(CmdError::err(
                "Number of keys can't be greater than number of args"
            ))
        );
    }
}
