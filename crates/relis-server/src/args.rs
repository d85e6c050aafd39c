//! A command's arguments, consumed in order by its pure `parse` (STYLE.md: parsing consumes every
//! argument and ends with [`Args::finish`]).

use crate::error::CmdError;
use bytes::Bytes;

/// The arguments after the command name.
#[derive(Debug)]
pub struct Args {
    args: std::vec::IntoIter<Bytes>,
    name: &'static str,
    /// The command's own name as the client spelled it: `argv[0]`, or `argv[1]` for a
    /// subcommand (some Redis errors quote it).
    sent: Option<Bytes>,
}

impl Args {
    /// Arguments of the command named `name` (lower case, as in error texts).
    pub fn new(name: &'static str, args: Vec<Bytes>) -> Self {
        Args {
            args: args.into_iter(),
            name,
            sent: None,
        }
    }

    /// The arguments of the command line `argv` after its first `skip` words (the name, or the
    /// name and subcommand), the last of which is kept as the name the client sent.
    pub fn of_line(name: &'static str, argv: Vec<Bytes>, skip: usize) -> Self {
        let mut args = argv.into_iter();
        let mut sent = None;
        for _ in 0..skip {
            sent = args.next();
        }
        Args { args, name, sent }
    }

    /// Records the command's own name as the client sent it (`argv[0]`, or `argv[1]` for a
    /// subcommand).
    pub fn set_sent_name(&mut self, sent: Bytes) {
        self.sent = Some(sent);
    }

    /// The command name as the client sent it (its case kept), or [`Args::name`] when unknown.
    pub fn sent_name(&self) -> String {
        match &self.sent {
            Some(b) => String::from_utf8_lossy(b).into_owned(),
            None => self.name.to_string(),
        }
    }

    /// Redis's error for a subcommand's wrong arguments, naming the subcommand as the client
    /// spelled it (`argv[1]`): "unknown subcommand or wrong number of arguments for 'get'. Try
    /// SLOWLOG HELP."
    pub fn subcommand_syntax(&self) -> CmdError {
        let (parent, own) = self.name.split_once('|').unwrap_or((self.name, self.name));
        let sent = match &self.sent {
            Some(s) => String::from_utf8_lossy(s).into_owned(),
            None => own.to_ascii_uppercase(),
        };
        crate::error::subcommand_syntax(&sent, parent)
    }

    /// The command's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// How many arguments are left.
    pub fn remaining(&self) -> usize {
        self.args.len()
    }

    /// Whether every argument has been consumed.
    pub fn is_empty(&self) -> bool {
        self.args.len() == 0
    }

    /// The next argument, without consuming it.
    pub fn peek(&self) -> Option<&Bytes> {
        self.args.as_slice().first()
    }

    /// The next argument.
    ///
    /// # Errors
    /// `ERR syntax error` when there is none.
    // Not Iterator::next: a missing argument is an error reply, not the end of a sequence.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<Bytes, CmdError> {
        self.args.next().ok_or(CmdError::Syntax)
    }

    /// The next argument as an integer (Redis's `string2ll`).
    ///
    /// # Errors
    /// `ERR value is not an integer or out of range`; `ERR syntax error` when missing.
    pub fn next_i64(&mut self) -> Result<i64, CmdError> {
        parse_i64(&self.next()?)
    }

    /// The next argument as a float (Redis's `strtod` rules).
    ///
    /// # Errors
    /// `ERR value is not a valid float`; `ERR syntax error` when missing.
    pub fn next_f64(&mut self) -> Result<f64, CmdError> {
        parse_f64(&self.next()?).ok_or(CmdError::NotFloat)
    }

    /// Consumes the next argument if it equals `word` (ASCII case-insensitive).
    pub fn eat(&mut self, word: &str) -> bool {
        if self
            .peek()
            .is_some_and(|a| a.eq_ignore_ascii_case(word.as_bytes()))
        {
            self.args.next();
            true
        } else {
            false
        }
    }

    /// All remaining arguments.
    pub fn rest(&mut self) -> Vec<Bytes> {
        self.args.by_ref().collect()
    }

    /// Checks nothing is left over.
    ///
    /// # Errors
    /// `ERR syntax error` when arguments remain.
    pub fn finish(&self) -> Result<(), CmdError> {
        if self.is_empty() {
            Ok(())
        } else {
            Err(CmdError::Syntax)
        }
    }
}

/// Test helper: a command line's arguments, split at white space.
#[cfg(test)]
pub(crate) fn args_of(name: &'static str, line: &str) -> Args {
    let args = line
        .split_whitespace()
        .map(|s| Bytes::copy_from_slice(s.as_bytes()))
        .collect();
    Args::new(name, args)
}

/// A blocking command's timeout (seconds, fractional, 0 = forever) as Redis 7.0 reads it
/// (BLPOP and the other list and sorted-set blocking pops).
///
/// # Errors
/// `ERR timeout is not a float or out of range`, `ERR timeout is negative`.
pub fn parse_timeout(arg: &[u8]) -> Result<Option<std::time::Duration>, CmdError> {
    match relis::parse_timeout_ms(arg) {
        None => Err(CmdError::TIMEOUT_NOT_FLOAT),
        Some(ms) if ms < 0 => Err(CmdError::TIMEOUT_NEGATIVE),
        Some(0) => Ok(None),
        Some(ms) => Ok(Some(std::time::Duration::from_millis(ms as u64))),
    }
}

/// Parses an integer argument as Redis does.
///
/// # Errors
/// `ERR value is not an integer or out of range`.
pub fn parse_i64(b: &[u8]) -> Result<i64, CmdError> {
    relis::parse_i64(b).ok_or(CmdError::NotInteger)
}

/// Parses a float argument as Redis's `string2d` does: `strtod` syntax (including `inf`,
/// exponents, hex floats are not accepted by Rust, nor are they by Redis in practice), no leading
/// space, no NaN.
pub fn parse_f64(b: &[u8]) -> Option<f64> {
    let s = std::str::from_utf8(b).ok()?;
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_whitespace()) {
        return None;
    }
    let lower = s.to_ascii_lowercase();
    let v = match lower.trim_start_matches(['+', '-']) {
        "inf" | "infinity" => {
            if lower.starts_with('-') {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            }
        }
        t if t.starts_with("nan") || t.starts_with("inf") => return None,
        _ => s.parse::<f64>().ok()?,
    };
    if v.is_nan() {
        None
    } else {
        Some(v)
    }
}

/// The lower-cased text of an argument (for keywords).
pub fn lower(b: &[u8]) -> String {
    String::from_utf8_lossy(b).to_ascii_lowercase()
}

/// Splits a config (or ACL file) line into words, honouring "double" and 'single' quotes
/// (Redis's `sdssplitargs`).
pub fn split_config_line(s: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut chars = s.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let Some(&c) = chars.peek() else { break };
        let mut word = String::new();
        if c == '"' || c == '\'' {
            chars.next();
            let mut closed = false;
            while let Some(ch) = chars.next() {
                if ch == c {
                    closed = true;
                    break;
                }
                if ch == '\\' && c == '"' {
                    match chars.next()? {
                        'n' => word.push('\n'),
                        't' => word.push('\t'),
                        'r' => word.push('\r'),
                        o => word.push(o),
                    }
                } else {
                    word.push(ch);
                }
            }
            if !closed {
                return None;
            }
        } else {
            while let Some(&ch) = chars.peek() {
                if ch.is_whitespace() {
                    break;
                }
                word.push(ch);
                chars.next();
            }
        }
        out.push(word);
    }
    Some(out)
}
