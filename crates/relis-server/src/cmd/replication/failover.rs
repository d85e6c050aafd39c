//! FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms] — hand the master role to a replica.
//! <https://redis.io/commands/failover/>
//!
//! Relis has no replicas: after Redis's argument checks (in its order), FAILOVER answers
//! "FAILOVER requires connected replicas." and FAILOVER ABORT "No failover in progress.", as a
//! redis-server without replicas does.

use crate::args::Args;
use crate::client::Client;
use crate::cmd::{BoxFuture, ConnCmd, Parsed, Spec};
use crate::error::CmdError;
use resp::Frame;

/// FAILOVER's declaration.
pub const SPEC: Spec = Spec {
    name: "failover",
    arity: -1,
    flags: Spec::flags(&["admin", "noscript", "stale"]),
    acl: Spec::acl(&["admin", "slow", "dangerous"]),
    group: "server",
    since: "6.2.0",
    summary: "Start a coordinated failover between this server and one of its replicas.",
    parse: Failover::parse,
    ..Spec::BASE
};

/// FAILOVER, checked: what it would do.
#[derive(Debug, PartialEq)]
pub enum Failover {
    /// FAILOVER ABORT.
    Abort,
    /// A failover to start.
    Start,
}

impl Failover {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        Parsed::conn(Self::parse_args(args.rest())?)
    }

    /// Redis's `failoverCommand` parsing: ABORT alone, else TIMEOUT / TO / FORCE once each.
    fn parse_args(argv: Vec<bytes::Bytes>) -> Result<Failover, CmdError> {
        if argv.len() == 1 && argv[0].eq_ignore_ascii_case(b"abort") {
            return Ok(Failover::Abort);
        }
        let (mut timeout, mut host, mut force) = (0i64, false, false);
        let int = |b: &[u8]| relis::parse_i64(b).ok_or(CmdError::NotInteger);
        let mut j = 0;
        while j < argv.len() {
            let a = &argv[j];
            if a.eq_ignore_ascii_case(b"timeout") && j + 1 < argv.len() && timeout == 0 {
                timeout = int(&argv[j + 1])?;
                if timeout <= 0 {
                    return Err(CmdError::FAILOVER_TIMEOUT);
                }
                j += 1;
            } else if a.eq_ignore_ascii_case(b"to") && j + 2 < argv.len() && !host {
                int(&argv[j + 2])?;
                host = true;
                j += 2;
            } else if a.eq_ignore_ascii_case(b"force") && !force {
                force = true;
            } else {
                return Err(CmdError::Syntax);
            }
            j += 1;
        }
        Ok(Failover::Start)
    }
}

impl ConnCmd for Failover {
    fn exec<'a>(self: Box<Self>, _c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            Err(match *self {
                Failover::Abort => CmdError::NO_FAILOVER,
                Failover::Start => CmdError::FAILOVER_NO_REPLICAS,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    fn parse(line: &str) -> Result<Failover, String> {
        let argv = line
            .split(' ')
            .filter(|s| !s.is_empty())
            .map(|s| Bytes::from(s.to_string()))
            .collect();
        Failover::parse_args(argv).map_err(|e| e.message())
    }

    #[test]
    fn arguments_as_redis_checks_them() {
        assert_eq!(parse(""), Ok(Failover::Start));
        assert_eq!(parse("ABORT"), Ok(Failover::Abort));
        assert_eq!(parse("to h 1 force timeout 10"), Ok(Failover::Start));
        assert_eq!(parse("abort x").unwrap_err(), "ERR syntax error");
        assert_eq!(parse("nosuch").unwrap_err(), "ERR syntax error");
        assert_eq!(parse("to h").unwrap_err(), "ERR syntax error");
        assert_eq!(parse("force force").unwrap_err(), "ERR syntax error");
        assert_eq!(parse("to h 1 to h 2").unwrap_err(), "ERR syntax error");
        assert_eq!(
            parse("timeout 5 timeout 6").unwrap_err(),
            "ERR syntax error"
        );
        assert_eq!(
            parse("timeout x").unwrap_err(),
            "ERR value is not an integer or out of range"
        );
        assert_eq!(
            parse("to h x").unwrap_err(),
            "ERR value is not an integer or out of range"
        );
        assert_eq!(
            parse("timeout -1").unwrap_err(),
            "ERR FAILOVER timeout must be greater than 0"
        );
        assert_eq!(
            parse("timeout 0").unwrap_err(),
            "ERR FAILOVER timeout must be greater than 0"
        );
    }
}
