//! Fuzz body for the command parsers (only `relis_server` and `bytes`, so the server crate's
//! tests can include this file).

use bytes::Bytes;
use relis_server::cmd::Table;

/// Splits an input into a command line: arguments separated by NUL bytes (so the corpus stays
/// readable). The first argument is the command name; an unknown name is replaced by the
/// command its first byte picks from the table, so that most inputs reach some parser.
pub fn argv(data: &[u8]) -> Vec<Bytes> {
    let mut argv: Vec<Bytes> = data
        .split(|&b| b == 0)
        .map(Bytes::copy_from_slice)
        .collect();
    let table = Table::get();
    if table.lookup(&argv[0]).is_none() {
        let pick = usize::from(data.first().copied().unwrap_or(0)) % table.specs.len();
        let spec = table.specs[pick];
        // A subcommand's name is `parent|sub`: its command line is `parent sub ...`.
        let mut names = spec
            .name
            .split('|')
            .map(|n| Bytes::from_static(n.as_bytes()));
        argv[0] = names.next().unwrap_or_default();
        if let Some(sub) = names.next() {
            argv.insert(1, sub);
        }
    }
    argv
}

/// Parses a command line the way the connection does before running it: table lookup,
/// subcommand, arity, then the command's pure `parse`. Checks that nothing panics (a parser
/// that allocates by a client's count, indexes past its arguments, or overflows arithmetic
/// shows up here). Returns whether the line parsed.
pub fn command(data: &[u8]) -> bool {
    let argv = argv(data);
    let table = Table::get();
    let Some((_, mut spec)) = table.lookup(&argv[0]) else {
        return false;
    };
    let mut skip = 1;
    // As the connection does: a container whose arity allows no subcommand runs its own parse.
    if !(spec.subcommands.is_empty() || argv.len() < 2 && spec.arity_ok(argv.len())) {
        let Some(sub) = argv.get(1) else {
            return false;
        };
        let Some((_, s)) = table.lookup_sub(spec, sub) else {
            return false;
        };
        spec = s;
        skip = 2;
    }
    if !spec.arity_ok(argv.len()) {
        return false;
    }
    // Key positions (COMMAND GETKEYS, blocking, ACL) are computed from the raw line too.
    let _ = spec.keys_of(&argv);
    for ks in spec.key_specs {
        for pos in 0..argv.len() {
            let _ = ks.covers(&argv, pos);
        }
    }
    relis_server::dispatch::parse(spec, argv, skip).is_ok()
}
