//! The scripting family: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT (Lua scripts), FCALL,
//! FCALL_RO and FUNCTION (function libraries). Scripts run on the writer thread as one write job
//! (see `crate::script`).

pub mod eval;
pub mod fcall;
pub mod function;
pub mod script;

use crate::args::Args;
use crate::cmd::{FindKeys, KeySpec, Spec};
use crate::error::CmdError;
use bytes::Bytes;

/// The scripting commands.
pub static SPECS: &[Spec] = &[
    eval::SPEC_EVAL,
    eval::SPEC_EVALSHA,
    eval::SPEC_EVAL_RO,
    eval::SPEC_EVALSHA_RO,
    script::SPEC,
    fcall::SPEC_FCALL,
    fcall::SPEC_FCALL_RO,
    function::SPEC,
];

/// `numkeys` then keys then arguments, as EVAL and FCALL take them: (keys, args).
///
/// # Errors
/// Redis's texts for a bad, negative or too large `numkeys`.
pub fn keys_and_args(args: &mut Args) -> Result<(Vec<Bytes>, Vec<Bytes>), CmdError> {
    let n = args.next_i64()?;
    let rest = args.rest();
    if n > rest.len() as i64 {
        return Err(CmdError::NUMKEYS_OVER_ARGS);
    }
    if n < 0 {
        return Err(CmdError::NUMKEYS_NEGATIVE);
    }
    let mut keys = rest;
    let argv = keys.split_off(n as usize);
    Ok((keys, argv))
}

/// The key positions of `EVAL script numkeys key ...` (name included).
pub fn numkeys_keys(argv: &[Bytes]) -> Vec<usize> {
    let Some(n) = argv.get(2).and_then(|a| relis::parse_i64(a)) else {
        return Vec::new();
    };
    if n <= 0 || n as usize > argv.len().saturating_sub(3) {
        return Vec::new();
    }
    (3..3 + n as usize).collect()
}

/// RW key spec of EVAL / EVALSHA / FCALL.
pub const RW_KEYS: &[KeySpec] = &[KeySpec {
    flags: Spec::key_flags(&["RW", "access", "update"]),
    index: 2,
    notes: "",
    find: FindKeys::Keynum(0, 1, 1),
}];

/// RO key spec of the `_RO` variants.
pub const RO_KEYS: &[KeySpec] = &[KeySpec {
    flags: Spec::key_flags(&["RO", "access"]),
    index: 2,
    notes: "",
    find: FindKeys::Keynum(0, 1, 1),
}];
