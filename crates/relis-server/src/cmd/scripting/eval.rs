//! EVAL script numkeys [key ...] [arg ...] — run a Lua script; EVALSHA sha1 numkeys ... — run
//! a cached one; EVAL_RO / EVALSHA_RO — the same, refusing write commands.
//! <https://redis.io/commands/eval/>, <https://redis.io/commands/evalsha/>,
//! <https://redis.io/commands/eval_ro/>, <https://redis.io/commands/evalsha_ro/>
//!
//! The script runs on the writer as one write job: nothing else writes meanwhile, and
//! everything it writes commits in one transaction. As in Redis, a runtime error does not undo
//! the writes the script made before it (no rollback); a storage failure fails the whole group
//! commit, the script's writes with it.

use super::{keys_and_args, numkeys_keys, RO_KEYS, RW_KEYS};
use crate::args::Args;
use crate::cmd::{Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use crate::lua::{Call, Target};
use resp::Frame;

const FLAGS: crate::cmd::Flags = Spec::flags(&[
    "noscript",
    "stale",
    "skip_monitor",
    "no_mandatory_keys",
    "movablekeys",
]);
const RO_FLAGS: crate::cmd::Flags = Spec::flags(&[
    "readonly",
    "noscript",
    "stale",
    "skip_monitor",
    "no_mandatory_keys",
    "movablekeys",
]);

/// EVAL's declaration.
pub const SPEC_EVAL: Spec = Spec {
    name: "eval",
    arity: -3,
    flags: FLAGS,
    acl: Spec::acl(&["slow", "scripting"]),
    group: "scripting",
    since: "2.6.0",
    summary: "Execute a Lua script server side",
    complexity: "Depends on the script that is executed.",
    parse: Eval::parse_eval,
    // A script may push to a list a client is blocked on: those are served after it.
    unblocks: true,
    find_keys: Some(numkeys_keys),
    key_specs: RW_KEYS,
    key_notes: "We cannot tell how the keys will be used so we assume the worst, RW and UPDATE",
    ..Spec::BASE
};

/// EVALSHA's declaration.
pub const SPEC_EVALSHA: Spec = Spec {
    name: "evalsha",
    parse: Eval::parse_evalsha,
    key_notes: "",
    ..SPEC_EVAL
};

/// EVAL_RO's declaration.
pub const SPEC_EVAL_RO: Spec = Spec {
    name: "eval_ro",
    flags: RO_FLAGS,
    since: "7.0.0",
    summary: "Execute a read-only Lua script server side",
    parse: Eval::parse_eval_ro,
    unblocks: false,
    key_specs: RO_KEYS,
    key_notes: "We cannot tell how the keys will be used so we assume the worst, RO and ACCESS",
    ..SPEC_EVAL
};

/// EVALSHA_RO's declaration.
pub const SPEC_EVALSHA_RO: Spec = Spec {
    name: "evalsha_ro",
    parse: Eval::parse_evalsha_ro,
    key_notes: "",
    ..SPEC_EVAL_RO
};

/// EVAL, EVALSHA and their `_RO` forms.
pub struct Eval {
    call: parking_lot::Mutex<Option<Call>>,
}

impl Eval {
    fn parse(args: &mut Args, sha: bool, readonly: bool) -> Result<Parsed, CmdError> {
        let script = args.next()?;
        let (keys, argv) = keys_and_args(args)?;
        args.finish()?;
        let target = if sha {
            Target::Sha(script)
        } else {
            Target::Body(script)
        };
        Parsed::write(Eval {
            call: parking_lot::Mutex::new(Some(Call {
                target,
                keys,
                args: argv,
                readonly,
                command: Vec::new(),
            })),
        })
    }
    fn parse_eval(args: &mut Args) -> Result<Parsed, CmdError> {
        Eval::parse(args, false, false)
    }
    fn parse_evalsha(args: &mut Args) -> Result<Parsed, CmdError> {
        Eval::parse(args, true, false)
    }
    fn parse_eval_ro(args: &mut Args) -> Result<Parsed, CmdError> {
        Eval::parse(args, false, true)
    }
    fn parse_evalsha_ro(args: &mut Args) -> Result<Parsed, CmdError> {
        Eval::parse(args, true, true)
    }
}

impl WriteCmd for Eval {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let Some(call) = self.call.lock().take() else {
            return Err(CmdError::Internal("script run twice".into()));
        };
        crate::lua::run(w, cx, call)
    }

    /// As in Redis, writes before a runtime error stay (each command the script calls is all
    /// or nothing by itself).
    fn on_error(&self) -> relis::OnError {
        relis::OnError::Keep
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    fn p(words: &[&str]) -> Option<CmdError> {
        let argv = words
            .iter()
            .map(|w| Bytes::copy_from_slice(w.as_bytes()))
            .collect();
        Eval::parse_eval(&mut Args::new("eval", argv)).err()
    }

    #[test]
    fn parse() {
        assert_eq!(p(&["return 1", "0"]), None);
        assert_eq!(p(&["return 1", "2", "a", "b", "c"]), None);
        assert_eq!(p(&["return 1", "x"]), Some(CmdError::NotInteger));
        assert_eq!(
            p(&["return 1", "-1"]),
            Some(CmdError::err("Number of keys can't be negative"))
        );
        assert_eq!(
            p(&["return 1", "2", "a"]),
            Some(CmdError::err(
                "Number of keys can't be greater than number of args"
            ))
        );
    }

    #[test]
    fn keys() {
        let argv: Vec<Bytes> = ["eval", "s", "2", "a", "b", "c"]
            .iter()
            .map(|w| Bytes::copy_from_slice(w.as_bytes()))
            .collect();
        assert_eq!(numkeys_keys(&argv), vec![3, 4]);
    }
}
