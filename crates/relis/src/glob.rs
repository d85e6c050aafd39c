//! Glob matching exactly as Redis's `stringmatchlen` (KEYS, SCAN MATCH, CONFIG GET, PUBSUB):
//! `*`, `?`, `[abc]`, `[^a-z]`, and `\` escapes, byte-wise.

/// Whether `s` matches the glob `pattern`; `nocase` folds ASCII case.
pub fn glob_match(pattern: &[u8], s: &[u8], nocase: bool) -> bool {
    match_from(pattern, s, nocase, 0, &mut false)
}

fn eq(a: u8, b: u8, nocase: bool) -> bool {
    if nocase {
        a.eq_ignore_ascii_case(&b)
    } else {
        a == b
    }
}

/// Matches `s` against `p`. `give_up` is set when a `*` found no match for the rest of the
/// pattern at any position of the rest of the string: every `*` further out must then fail too
/// (a longer match for it would only start the rest of the pattern later in the string, where
/// it was just shown not to match), so they stop trying instead of retrying every split. This is
/// Redis 7.0.9's fix for CVE-2022-36021: without it `a*a*a*...b` against a string of `a`s takes
/// exponential time.
fn match_from(mut p: &[u8], mut s: &[u8], nocase: bool, depth: u32, give_up: &mut bool) -> bool {
    // Redis bounds recursion the same way to stop pathological patterns.
    if depth > 1000 {
        return false;
    }
    while !p.is_empty() && !s.is_empty() {
        match p[0] {
            b'*' => {
                while p.len() > 1 && p[1] == b'*' {
                    p = &p[1..];
                }
                if p.len() == 1 {
                    return true;
                }
                for k in 0..s.len() {
                    if match_from(&p[1..], &s[k..], nocase, depth + 1, give_up) {
                        return true;
                    }
                    if *give_up {
                        return false;
                    }
                }
                *give_up = true;
                return false;
            }
            b'?' => {
                s = &s[1..];
            }
            b'[' => {
                p = &p[1..];
                let not = p.first() == Some(&b'^');
                if not {
                    p = &p[1..];
                }
                let mut matched = false;
                loop {
                    if p.is_empty() {
                        // Unterminated class: Redis steps back so the loop's advance lands on the end.
                        break;
                    }
                    if p[0] == b'\\' && p.len() >= 2 {
                        p = &p[1..];
                        if p[0] == s[0] {
                            matched = true;
                        }
                    } else if p[0] == b']' {
                        break;
                    } else if p.len() >= 3 && p[1] == b'-' {
                        let (mut start, mut end) = (p[0], p[2]);
                        let mut c = s[0];
                        if start > end {
                            std::mem::swap(&mut start, &mut end);
                        }
                        if nocase {
                            start = start.to_ascii_lowercase();
                            end = end.to_ascii_lowercase();
                            c = c.to_ascii_lowercase();
                        }
                        p = &p[2..];
                        if c >= start && c <= end {
                            matched = true;
                        }
                    } else if eq(p[0], s[0], nocase) {
                        matched = true;
                    }
                    p = &p[1..];
                }
                let matched = if not { !matched } else { matched };
                if !matched {
                    return false;
                }
                s = &s[1..];
                if p.is_empty() {
                    // The pattern ended inside the class.
                    return s.is_empty();
                }
            }
            b'\\' if p.len() >= 2 => {
                p = &p[1..];
                if !eq(p[0], s[0], nocase) {
                    return false;
                }
                s = &s[1..];
            }
            c => {
                if !eq(c, s[0], nocase) {
                    return false;
                }
                s = &s[1..];
            }
        }
        p = &p[1..];
        if s.is_empty() {
            while p.first() == Some(&b'*') {
                p = &p[1..];
            }
            break;
        }
    }
    p.is_empty() && s.is_empty()
}

/// The literal prefix every match of `pattern` starts with (used to range-scan keys).
pub fn literal_prefix(pattern: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < pattern.len() {
        match pattern[i] {
            b'*' | b'?' | b'[' => break,
            b'\\' if i + 1 < pattern.len() => {
                out.push(pattern[i + 1]);
                i += 2;
            }
            b'\\' => break,
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The matcher before the CVE-2022-36021 fix: right, but exponential on some patterns.
    fn reference(mut p: &[u8], mut s: &[u8], nocase: bool, depth: u32) -> bool {
        // Redis bounds recursion the same way to stop pathological patterns.
        if depth > 1000 {
            return false;
        }
        while !p.is_empty() && !s.is_empty() {
            match p[0] {
                b'*' => {
                    while p.len() > 1 && p[1] == b'*' {
                        p = &p[1..];
                    }
                    if p.len() == 1 {
                        return true;
                    }
                    for k in 0..s.len() {
                        if reference(&p[1..], &s[k..], nocase, depth + 1) {
                            return true;
                        }
                    }
                    return false;
                }
                b'?' => {
                    s = &s[1..];
                }
                b'[' => {
                    p = &p[1..];
                    let not = p.first() == Some(&b'^');
                    if not {
                        p = &p[1..];
                    }
                    let mut matched = false;
                    loop {
                        if p.is_empty() {
                            // Unterminated class: Redis steps back so the loop's advance lands on the end.
                            break;
                        }
                        if p[0] == b'\\' && p.len() >= 2 {
                            p = &p[1..];
                            if p[0] == s[0] {
                                matched = true;
                            }
                        } else if p[0] == b']' {
                            break;
                        } else if p.len() >= 3 && p[1] == b'-' {
                            let (mut start, mut end) = (p[0], p[2]);
                            let mut c = s[0];
                            if start > end {
                                std::mem::swap(&mut start, &mut end);
                            }
                            if nocase {
                                start = start.to_ascii_lowercase();
                                end = end.to_ascii_lowercase();
                                c = c.to_ascii_lowercase();
                            }
                            p = &p[2..];
                            if c >= start && c <= end {
                                matched = true;
                            }
                        } else if eq(p[0], s[0], nocase) {
                            matched = true;
                        }
                        p = &p[1..];
                    }
                    let matched = if not { !matched } else { matched };
                    if !matched {
                        return false;
                    }
                    s = &s[1..];
                    if p.is_empty() {
                        // The pattern ended inside the class.
                        return s.is_empty();
                    }
                }
                b'\\' if p.len() >= 2 => {
                    p = &p[1..];
                    if !eq(p[0], s[0], nocase) {
                        return false;
                    }
                    s = &s[1..];
                }
                c => {
                    if !eq(c, s[0], nocase) {
                        return false;
                    }
                    s = &s[1..];
                }
            }
            p = &p[1..];
            if s.is_empty() {
                while p.first() == Some(&b'*') {
                    p = &p[1..];
                }
                break;
            }
        }
        p.is_empty() && s.is_empty()
    }

    #[test]
    fn redis_glob_cases() {
        let cases: &[(&str, &str, bool)] = &[
            // As in Redis, a lone `*` does not match the empty string (KEYS and SCAN special-case `*`).
            ("*", "", false),
            ("*", "anything", true),
            ("h?llo", "hello", true),
            ("h?llo", "hllo", false),
            ("h*llo", "heeeello", true),
            ("h[ae]llo", "hallo", true),
            ("h[ae]llo", "hillo", false),
            ("h[^e]llo", "hallo", true),
            ("h[^e]llo", "hello", false),
            ("h[a-b]llo", "hbllo", true),
            ("h[b-a]llo", "hallo", true),
            ("h\\*llo", "h*llo", true),
            ("h\\*llo", "hallo", false),
            ("user:*", "user:1", true),
            ("user:*", "user", false),
            ("a*b*c", "aXbYc", true),
            ("a*b*c", "aXbY", false),
            ("[abc", "a", true),
            ("*a", "ba", true),
            ("a**", "a", true),
            ("", "", true),
            ("", "a", false),
        ];
        for (p, s, want) in cases {
            assert_eq!(
                glob_match(p.as_bytes(), s.as_bytes(), false),
                *want,
                "{p} ~ {s}"
            );
        }
        assert!(glob_match(b"HELLO", b"hello", true));
        assert!(!glob_match(b"HELLO", b"hello", false));
    }

    #[test]
    fn prefixes() {
        assert_eq!(literal_prefix(b"user:*"), b"user:");
        assert_eq!(literal_prefix(b"a\\*b?"), b"a*b");
        assert_eq!(literal_prefix(b"*"), b"");
    }

    #[test]
    fn nested_stars_answer_at_once() {
        // CVE-2022-36021: 20 stars against 40 `a`s never answered before the fix.
        let pattern = format!("{}b", "a*".repeat(20));
        let key = "a".repeat(40);
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let r = glob_match(pattern.as_bytes(), key.as_bytes(), false);
            let _ = tx.send(r);
        });
        let r = rx.recv_timeout(std::time::Duration::from_secs(5));
        assert_eq!(r, Ok(false), "the match must answer, and answer no");
        let long = "a".repeat(100_000);
        let start = std::time::Instant::now();
        assert!(!glob_match(
            b"*a*a*a*a*a*a*a*a*a*a*b",
            long.as_bytes(),
            false
        ));
        assert!(glob_match(b"*a*a*a*a*a*a*a*a*a*a*", long.as_bytes(), false));
        assert!(start.elapsed() < std::time::Duration::from_secs(5));
    }

    fn glob_chars() -> impl Strategy<Value = Vec<u8>> {
        prop::collection::vec(prop::sample::select(b"ab*?[]^-\\cA".to_vec()), 0..10)
    }

    proptest! {
        #[test]
        fn agrees_with_the_matcher_before_the_fix(
            p in glob_chars(),
            s in prop::collection::vec(prop::sample::select(b"abcA*[".to_vec()), 0..12),
            nocase in any::<bool>(),
        ) {
            prop_assert_eq!(glob_match(&p, &s, nocase), reference(&p, &s, nocase, 0));
        }
    }
}
