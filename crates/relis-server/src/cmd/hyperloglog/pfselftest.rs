//! PFSELFTEST — Redis's internal HyperLogLog self test, run on Relis's implementation:
//! replies OK, or Redis's `TESTFAILED ...` error. Adds ten million elements, so it runs on a
//! blocking thread, off the network. <https://redis.io/commands/pfselftest/>

use crate::args::Args;
use crate::client::Client;
use crate::cmd::{BoxFuture, ConnCmd, Parsed, Spec};
use crate::error::CmdError;
use crate::state::Shared;
use bytes::Bytes;
use resp::Frame;

/// PFSELFTEST's declaration.
pub const SPEC: Spec = Spec {
    name: "pfselftest",
    arity: 1,
    flags: Spec::flags(&["admin"]),
    acl: Spec::acl(&["hyperloglog", "admin", "slow", "dangerous"]),
    group: "hyperloglog",
    since: "2.8.9",
    summary: "An internal command for testing HyperLogLog values",
    complexity: "N/A",
    parse: PfSelfTest::parse,
    ..Spec::BASE
};

/// PFSELFTEST.
#[derive(Debug, PartialEq, Eq)]
pub struct PfSelfTest;

impl PfSelfTest {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        args.finish()?;
        Parsed::conn(PfSelfTest)
    }
}

impl ConnCmd for PfSelfTest {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            let server = c.server.clone();
            tokio::task::spawn_blocking(move || run(&server))
                .await
                .map_err(|e| CmdError::Internal(format!("pfselftest: {e}")))?
        })
    }
}

/// Runs the self test where the caller is (a script runs it on the writer, holding it as Redis
/// holds its one thread).
///
/// # Errors
/// Redis's `ERR TESTFAILED ...`.
pub fn run(server: &Shared) -> Result<Frame, CmdError> {
    let max = server.config.read().hll_sparse_max_bytes;
    // Redis seeds its elements from rand(); the clock will do.
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64);
    relis::hll::selftest(seed, max).map_err(CmdError::pfselftest)?;
    Ok(Frame::Simple(Bytes::from_static(b"OK")))
}
