//! Reply encoding, byte-identical to Redis 7.0.

use bytes::{BufMut, BytesMut};

use crate::double::{format_double_into, DOUBLE_BUF_LEN};
use crate::{Frame, Protocol};

/// Encode `frame` for a connection speaking `proto`, appending to `out`.
///
/// RESP3-only types are downgraded for RESP2 exactly as Redis 7.0 does: doubles, big numbers
/// and verbatim strings become bulk strings, booleans become integers 1/0, maps become flat
/// arrays, sets and pushes become arrays, bulk errors become simple errors, and attributes are
/// left out entirely. `Null` / `NullArray` are `$-1` / `*-1` in RESP2 and both `_` in RESP3.
///
/// An [`Attribute`](Frame::Attribute) inside an aggregate decorates the element after it and is
/// not counted as an element; one with no element after it, or used as a map key or value, is
/// dropped, so the output is well-formed whatever the frame.
pub fn encode(frame: &Frame, proto: Protocol, out: &mut BytesMut) {
    let resp3 = proto == Protocol::Resp3;
    match frame {
        Frame::Simple(s) => put_line(out, b'+', s),
        Frame::Error(s) => put_line(out, b'-', s),
        Frame::Integer(n) => put_int(out, b':', *n),
        Frame::Bulk(b) => put_blob(out, b'$', b),
        Frame::Null => out.put_slice(if resp3 { b"_\r\n" } else { b"$-1\r\n" }),
        Frame::NullArray => out.put_slice(if resp3 { b"_\r\n" } else { b"*-1\r\n" }),
        Frame::Array(items) => put_aggregate(out, b'*', items, proto),
        Frame::Bulks { len, items } => {
            put_len(out, b'*', *len as u64);
            out.extend_from_slice(items);
        }
        Frame::Double(d) => {
            let mut buf = [0u8; DOUBLE_BUF_LEN];
            let text = format_double_into(*d, &mut buf).as_bytes();
            if resp3 {
                out.reserve(text.len() + 3);
                out.put_u8(b',');
                out.put_slice(text);
                out.put_slice(b"\r\n");
            } else {
                put_blob(out, b'$', text);
            }
        }
        Frame::DoubleText(text) => {
            if resp3 {
                put_line(out, b',', text);
            } else {
                put_blob(out, b'$', text);
            }
        }
        Frame::Boolean(b) => out.put_slice(match (resp3, b) {
            (true, true) => b"#t\r\n",
            (true, false) => b"#f\r\n",
            (false, true) => b":1\r\n",
            (false, false) => b":0\r\n",
        }),
        Frame::BigNumber(n) => {
            if resp3 {
                put_line(out, b'(', n);
            } else {
                put_blob(out, b'$', n);
            }
        }
        Frame::Verbatim { format, data } => {
            if resp3 {
                put_len(out, b'=', data.len() as u64 + 4);
                out.reserve(data.len() + 6);
                out.put_slice(format);
                out.put_u8(b':');
                out.put_slice(data);
                out.put_slice(b"\r\n");
            } else {
                put_blob(out, b'$', data);
            }
        }
        Frame::BulkError(e) => {
            if resp3 {
                put_blob(out, b'!', e);
            } else {
                put_line(out, b'-', e);
            }
        }
        Frame::Map(pairs) => {
            let n = pairs.iter().filter(|p| is_pair(p)).count() as u64;
            if resp3 {
                put_len(out, b'%', n);
            } else {
                put_len(out, b'*', n * 2);
            }
            put_pairs(out, pairs, proto);
        }
        Frame::Set(items) => put_aggregate(out, if resp3 { b'~' } else { b'*' }, items, proto),
        Frame::Push(items) => put_aggregate(out, if resp3 { b'>' } else { b'*' }, items, proto),
        Frame::Attribute(pairs) => {
            // RESP2 has no attributes; Redis simply does not send them to RESP2 clients.
            if resp3 {
                put_len(
                    out,
                    b'|',
                    pairs.iter().filter(|p| is_pair(p)).count() as u64,
                );
                put_pairs(out, pairs, proto);
            }
        }
    }
}

/// An attribute is not a value: it decorates the value after it. Aggregates therefore don't
/// count attributes among their elements (RESP3 says so, and in RESP2 they vanish), an
/// attribute with no value after it is dropped, and so is a map entry whose key or value is an
/// attribute. That keeps the output well-formed whatever the frame.
fn is_attribute(frame: &Frame) -> bool {
    matches!(frame, Frame::Attribute(_))
}

fn is_pair((k, v): &(Frame, Frame)) -> bool {
    !is_attribute(k) && !is_attribute(v)
}

fn put_pairs(out: &mut BytesMut, pairs: &[(Frame, Frame)], proto: Protocol) {
    for (k, v) in pairs.iter().filter(|p| is_pair(p)) {
        encode(k, proto, out);
        encode(v, proto, out);
    }
}

fn put_aggregate(out: &mut BytesMut, prefix: u8, items: &[Frame], proto: Protocol) {
    // See `is_attribute`: count values only, and drop attributes that decorate nothing.
    let mut count = 0;
    let mut end = 0;
    for (i, item) in items.iter().enumerate() {
        if !is_attribute(item) {
            count += 1;
            end = i + 1;
        }
    }
    put_len(out, prefix, count as u64);
    for item in &items[..end] {
        encode(item, proto, out);
    }
}

/// `<prefix><text>\r\n` for line-based types. CR and LF inside the text would end the line early
/// and let the rest be read as another reply, so they become spaces, as in Redis's
/// `addReplyErrorFormat`.
fn put_line(out: &mut BytesMut, prefix: u8, text: &[u8]) {
    out.reserve(text.len() + 3);
    out.put_u8(prefix);
    if text.iter().any(|&b| b == b'\r' || b == b'\n') {
        out.extend(
            text.iter()
                .map(|&b| if b == b'\r' || b == b'\n' { b' ' } else { b }),
        );
    } else {
        out.put_slice(text);
    }
    out.put_slice(b"\r\n");
}

/// `<prefix><len>\r\n<data>\r\n` for length-prefixed types.
/// Appends `data` as a RESP bulk string (`$<len>`, the bytes, CRLF): the elements of a
/// [`Frame::Bulks`] array.
pub fn put_bulk(out: &mut BytesMut, data: &[u8]) {
    put_blob(out, b'$', data);
}

fn put_blob(out: &mut BytesMut, prefix: u8, data: &[u8]) {
    // Short values (a one-digit length) in one copy: range replies are made of them, and
    // three small copies per element were a tenth of an inline LRANGE's work.
    if data.len() < 10 {
        let mut buf = [0u8; 15];
        buf[0] = prefix;
        buf[1] = b'0' + data.len() as u8;
        buf[2..4].copy_from_slice(b"\r\n");
        buf[4..4 + data.len()].copy_from_slice(data);
        buf[4 + data.len()..6 + data.len()].copy_from_slice(b"\r\n");
        out.put_slice(&buf[..6 + data.len()]);
        return;
    }
    put_len(out, prefix, data.len() as u64);
    out.reserve(data.len() + 2);
    out.put_slice(data);
    out.put_slice(b"\r\n");
}

/// `<prefix><n>\r\n` for a length or count.
fn put_len(out: &mut BytesMut, prefix: u8, n: u64) {
    put_number(out, prefix, false, n);
}

/// `<prefix><n>\r\n` for a signed integer.
fn put_int(out: &mut BytesMut, prefix: u8, n: i64) {
    put_number(out, prefix, n < 0, n.unsigned_abs());
}

/// Two ASCII digits for every value 0..100, so the loop below emits two digits per division.
const DIGIT_PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Writes `<prefix>[-]<abs>\r\n` with one `put_slice`, formatting the digits by hand: replies
/// are full of integers and lengths, and going through `format!` would allocate for each.
fn put_number(out: &mut BytesMut, prefix: u8, negative: bool, mut abs: u64) {
    // prefix + sign + 20 digits + CRLF
    let mut buf = [0u8; 24];
    let mut i = buf.len() - 2;
    buf[i..].copy_from_slice(b"\r\n");
    while abs >= 100 {
        let pair = (abs % 100) as usize * 2;
        abs /= 100;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    }
    if abs >= 10 {
        let pair = abs as usize * 2;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    } else {
        i -= 1;
        buf[i] = b'0' + abs as u8;
    }
    if negative {
        i -= 1;
        buf[i] = b'-';
    }
    i -= 1;
    buf[i] = prefix;
    out.put_slice(&buf[i..]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Bytes;

    fn enc(frame: &Frame, proto: Protocol) -> Vec<u8> {
        let mut out = BytesMut::new();
        encode(frame, proto, &mut out);
        out.to_vec()
    }

    fn b(s: &'static str) -> Bytes {
        Bytes::from_static(s.as_bytes())
    }

    /// (frame, RESP2 bytes, RESP3 bytes)
    fn table() -> Vec<(Frame, &'static str, &'static str)> {
        vec![
            (Frame::ok(), "+OK\r\n", "+OK\r\n"),
            (Frame::error("ERR x"), "-ERR x\r\n", "-ERR x\r\n"),
            (
                Frame::Error(b("ERR a\r\nb")),
                "-ERR a  b\r\n",
                "-ERR a  b\r\n",
            ),
            (Frame::Simple(b("a\nb")), "+a b\r\n", "+a b\r\n"),
            (Frame::Integer(0), ":0\r\n", ":0\r\n"),
            (Frame::Integer(7), ":7\r\n", ":7\r\n"),
            (Frame::Integer(-7), ":-7\r\n", ":-7\r\n"),
            (Frame::Integer(10), ":10\r\n", ":10\r\n"),
            (Frame::Integer(-100), ":-100\r\n", ":-100\r\n"),
            (Frame::Integer(12345), ":12345\r\n", ":12345\r\n"),
            (
                Frame::Integer(i64::MAX),
                ":9223372036854775807\r\n",
                ":9223372036854775807\r\n",
            ),
            (
                Frame::Integer(i64::MIN),
                ":-9223372036854775808\r\n",
                ":-9223372036854775808\r\n",
            ),
            (Frame::bulk("foo"), "$3\r\nfoo\r\n", "$3\r\nfoo\r\n"),
            (Frame::bulk(""), "$0\r\n\r\n", "$0\r\n\r\n"),
            (
                Frame::bulk("a\r\nb"),
                "$4\r\na\r\nb\r\n",
                "$4\r\na\r\nb\r\n",
            ),
            (Frame::Null, "$-1\r\n", "_\r\n"),
            (Frame::NullArray, "*-1\r\n", "_\r\n"),
            (Frame::Array(vec![]), "*0\r\n", "*0\r\n"),
            (
                Frame::Array(vec![Frame::Integer(1), Frame::bulk("x"), Frame::Null]),
                "*3\r\n:1\r\n$1\r\nx\r\n$-1\r\n",
                "*3\r\n:1\r\n$1\r\nx\r\n_\r\n",
            ),
            (Frame::Double(1.5), "$3\r\n1.5\r\n", ",1.5\r\n"),
            (
                Frame::Double(0.1),
                "$19\r\n0.10000000000000001\r\n",
                ",0.10000000000000001\r\n",
            ),
            (Frame::Double(f64::INFINITY), "$3\r\ninf\r\n", ",inf\r\n"),
            (
                Frame::DoubleText(b("13.36138933897018433")),
                "$20\r\n13.36138933897018433\r\n",
                ",13.36138933897018433\r\n",
            ),
            (
                Frame::Double(f64::NEG_INFINITY),
                "$4\r\n-inf\r\n",
                ",-inf\r\n",
            ),
            (Frame::Boolean(true), ":1\r\n", "#t\r\n"),
            (Frame::Boolean(false), ":0\r\n", "#f\r\n"),
            (
                Frame::BigNumber(b("3492890328409238509324850943850943825024385")),
                "$43\r\n3492890328409238509324850943850943825024385\r\n",
                "(3492890328409238509324850943850943825024385\r\n",
            ),
            (
                Frame::Verbatim {
                    format: *b"txt",
                    data: b("Some string"),
                },
                "$11\r\nSome string\r\n",
                "=15\r\ntxt:Some string\r\n",
            ),
            (
                Frame::BulkError(b("SYNTAX invalid syntax")),
                "-SYNTAX invalid syntax\r\n",
                "!21\r\nSYNTAX invalid syntax\r\n",
            ),
            (
                Frame::Map(vec![
                    (Frame::simple("first"), Frame::Integer(1)),
                    (Frame::simple("second"), Frame::Integer(2)),
                ]),
                "*4\r\n+first\r\n:1\r\n+second\r\n:2\r\n",
                "%2\r\n+first\r\n:1\r\n+second\r\n:2\r\n",
            ),
            (
                Frame::Set(vec![Frame::bulk("a"), Frame::Boolean(true)]),
                "*2\r\n$1\r\na\r\n:1\r\n",
                "~2\r\n$1\r\na\r\n#t\r\n",
            ),
            (
                Frame::Push(vec![
                    Frame::bulk("message"),
                    Frame::bulk("ch"),
                    Frame::bulk("hi"),
                ]),
                "*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n",
                ">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n",
            ),
            (
                Frame::Attribute(vec![(Frame::simple("ttl"), Frame::Integer(3))]),
                "",
                "|1\r\n+ttl\r\n:3\r\n",
            ),
            (
                Frame::Array(vec![
                    Frame::Attribute(vec![(Frame::simple("a"), Frame::Double(0.5))]),
                    Frame::Integer(1),
                ]),
                "*1\r\n:1\r\n",
                "*1\r\n|1\r\n+a\r\n,0.5\r\n:1\r\n",
            ),
            (
                Frame::Set(vec![
                    Frame::Attribute(vec![]),
                    Frame::Integer(1),
                    Frame::Attribute(vec![]),
                ]),
                "*1\r\n:1\r\n",
                "~1\r\n|0\r\n:1\r\n",
            ),
            (
                Frame::Map(vec![
                    (Frame::Attribute(vec![]), Frame::Integer(1)),
                    (Frame::Integer(2), Frame::Integer(3)),
                    (Frame::Integer(4), Frame::Attribute(vec![])),
                ]),
                "*2\r\n:2\r\n:3\r\n",
                "%1\r\n:2\r\n:3\r\n",
            ),
            (
                Frame::Map(vec![(
                    Frame::bulk("m"),
                    Frame::Map(vec![(Frame::Double(2.0), Frame::NullArray)]),
                )]),
                "*2\r\n$1\r\nm\r\n*2\r\n$1\r\n2\r\n*-1\r\n",
                "%1\r\n$1\r\nm\r\n%1\r\n,2\r\n_\r\n",
            ),
        ]
    }

    /// Bulk strings on both sides of the one-copy path's limit (9 and 10 bytes) carry their
    /// length and bytes exactly.
    #[test]
    fn short_and_long_bulks_around_the_one_copy_limit() {
        for (data, want) in [
            (&b"123456789"[..], &b"$9\r\n123456789\r\n"[..]),
            (b"1234567890", b"$10\r\n1234567890\r\n"),
            (b"\r\n", b"$2\r\n\r\n\r\n"),
        ] {
            let mut out = BytesMut::new();
            put_bulk(&mut out, data);
            assert_eq!(&out[..], want);
        }
    }

    /// A pre-encoded array of bulk strings is written as the array of bulk frames would be,
    /// under both protocols, and turns back into that array.
    #[test]
    fn bulks_encode_as_their_array() {
        for values in [
            vec![],
            vec![&b""[..]],
            vec![
                &b"a"[..],
                b"",
                b"with\r\ninside",
                &[0u8, 255, 13, 10][..],
                &[b'x'; 300][..],
            ],
        ] {
            let mut items = BytesMut::new();
            for v in &values {
                put_bulk(&mut items, v);
            }
            let bulks = Frame::Bulks {
                len: values.len(),
                items: items.freeze(),
            };
            let array = Frame::Array(
                values
                    .iter()
                    .map(|v| Frame::Bulk(Bytes::copy_from_slice(v)))
                    .collect(),
            );
            for proto in [Protocol::Resp2, Protocol::Resp3] {
                assert_eq!(enc(&bulks, proto), enc(&array, proto));
            }
            assert_eq!(bulks.into_plain(), array);
        }
    }

    #[test]
    fn encodes_like_redis() {
        for (frame, resp2, resp3) in table() {
            assert_eq!(
                String::from_utf8_lossy(&enc(&frame, Protocol::Resp2)),
                resp2,
                "RESP2 {frame:?}"
            );
            assert_eq!(
                String::from_utf8_lossy(&enc(&frame, Protocol::Resp3)),
                resp3,
                "RESP3 {frame:?}"
            );
        }
    }

    #[test]
    fn integers_match_std_formatting() {
        let mut samples = vec![
            0i64,
            1,
            -1,
            9,
            10,
            99,
            100,
            101,
            999,
            1000,
            i64::MAX,
            i64::MIN,
        ];
        let mut x: i64 = 1;
        while let Some(next) = x.checked_mul(7) {
            samples.extend([x - 1, x, x + 1, -x]);
            x = next;
        }
        for n in samples {
            assert_eq!(
                enc(&Frame::Integer(n), Protocol::Resp2),
                format!(":{n}\r\n").into_bytes()
            );
        }
    }

    #[test]
    fn appends_without_clobbering() {
        let mut out = BytesMut::from(&b"+prev\r\n"[..]);
        encode(&Frame::Integer(5), Protocol::Resp3, &mut out);
        assert_eq!(&out[..], b"+prev\r\n:5\r\n");
    }
}
