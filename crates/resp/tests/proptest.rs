//! Property tests: the decoders never panic, encoding round-trips, and a frame split anywhere
//! is "incomplete" until its last byte arrives.

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::Index;
use resp::{
    decode_frame, decode_request, encode, format_double, Bytes, BytesMut, Frame, Limits, Protocol,
    ProtocolError, RequestDecoder,
};

/// Pieces of protocol, so random input reaches deep into the parsers instead of failing on its
/// first byte.
const FRAGMENTS: &[&[u8]] = &[
    b"*", b"$", b"\r\n", b"\r", b"\n", b"0", b"1", b"2", b"3", b"10", b"-1", b"-", b"+", b":",
    b"_", b",", b"#", b"(", b"=", b"!", b"%", b"~", b">", b"|", b"t", b"f", b"\"", b"'", b"\\",
    b"\\x", b"4", b"a", b"\x00", b" ", b"\t", b"\x0b", b"abc", b"inf", b"1.5", b"txt:", b"\xff",
    b"*1\r\n", b"*2\r\n", b"$1\r\n", b"$3\r\n", b"%1\r\n", b"|1\r\n", b">2\r\n",
];

fn protocolish() -> impl Strategy<Value = Vec<u8>> {
    vec(prop::sample::select(FRAGMENTS), 0..48).prop_map(|parts| parts.concat())
}

fn any_input() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![vec(any::<u8>(), 0..256), protocolish()]
}

/// Decodes requests until the buffer runs dry or errors, checking each success consumed bytes.
fn drain_requests(buf: &mut BytesMut) -> (Vec<Vec<Bytes>>, Option<ProtocolError>) {
    let limits = Limits::default();
    let mut out = Vec::new();
    loop {
        let before = buf.len();
        match decode_request(buf, &limits) {
            Ok(Some(args)) => {
                assert!(buf.len() < before, "request consumed nothing");
                out.push(args);
            }
            Ok(None) => return (out, None),
            Err(e) => return (out, Some(e)),
        }
    }
}

fn multibulk(args: &[Vec<u8>]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// An inline command line with every argument double-quoted and fully `\xHH`-escaped.
fn inline_escaped(args: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for a in args {
        out.extend_from_slice(b" \"");
        for b in a {
            out.extend_from_slice(format!("\\x{b:02x}").as_bytes());
        }
        out.push(b'"');
    }
    out.extend_from_slice(b"\r\n");
    out
}

fn line_text() -> impl Strategy<Value = Bytes> {
    vec(
        any::<u8>().prop_filter("no CR/LF", |b| *b != b'\r' && *b != b'\n'),
        0..24,
    )
    .prop_map(Bytes::from)
}

fn blob() -> impl Strategy<Value = Bytes> {
    vec(any::<u8>(), 0..40).prop_map(Bytes::from)
}

fn double() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<u64>().prop_map(f64::from_bits),
        any::<i32>().prop_map(f64::from),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(-0.0),
    ]
    .prop_filter("NaN never equals itself", |d| !d.is_nan())
}

/// Every frame that survives a RESP3 round trip: all but `NullArray` (RESP3 has one null) and
/// `Attribute` (not a value on its own).
fn frame() -> impl Strategy<Value = Frame> {
    let leaf = prop_oneof![
        line_text().prop_map(Frame::Simple),
        line_text().prop_map(Frame::Error),
        any::<i64>().prop_map(Frame::Integer),
        blob().prop_map(Frame::Bulk),
        Just(Frame::Null),
        double().prop_map(Frame::Double),
        any::<bool>().prop_map(Frame::Boolean),
        "-?[1-9][0-9]{0,40}|0".prop_map(|s| Frame::BigNumber(Bytes::from(s))),
        (any::<[u8; 3]>(), blob()).prop_map(|(format, data)| Frame::Verbatim { format, data }),
        blob().prop_map(Frame::BulkError),
    ];
    leaf.prop_recursive(4, 64, 6, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..6).prop_map(Frame::Array),
            vec(inner.clone(), 0..6).prop_map(Frame::Set),
            vec(inner.clone(), 0..6).prop_map(Frame::Push),
            vec((inner.clone(), inner), 0..4).prop_map(Frame::Map),
        ]
    })
}

/// Any frame at all, for RESP2 (where `NullArray` exists and attributes vanish).
fn any_frame() -> impl Strategy<Value = Frame> {
    let leaf = prop_oneof![frame(), Just(Frame::NullArray)];
    leaf.prop_recursive(3, 32, 4, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..4).prop_map(Frame::Array),
            vec((inner.clone(), inner), 0..3).prop_map(Frame::Attribute),
        ]
    })
}

/// What a RESP2 client should read back for `frame`, per Redis 7.0's downgrade rules; `None`
/// when nothing is sent (attributes).
fn resp2_view(frame: &Frame) -> Option<Frame> {
    let list = |items: &[Frame]| Frame::Array(items.iter().filter_map(resp2_view).collect());
    Some(match frame {
        Frame::Double(d) => Frame::Bulk(Bytes::from(format_double(*d))),
        Frame::Boolean(b) => Frame::Integer(i64::from(*b)),
        Frame::BigNumber(n) => Frame::Bulk(n.clone()),
        Frame::Verbatim { data, .. } => Frame::Bulk(data.clone()),
        Frame::BulkError(e) => Frame::Error(
            e.iter()
                .map(|&b| if b == b'\r' || b == b'\n' { b' ' } else { b })
                .collect::<Vec<u8>>()
                .into(),
        ),
        Frame::Array(items) | Frame::Set(items) | Frame::Push(items) => list(items),
        Frame::Map(pairs) => Frame::Array(
            pairs
                .iter()
                .filter(|(k, v)| !is_attribute(k) && !is_attribute(v))
                .flat_map(|(k, v)| [resp2_view(k), resp2_view(v)])
                .flatten()
                .collect(),
        ),
        Frame::Attribute(_) => return None,
        other => other.clone(),
    })
}

fn is_attribute(frame: &Frame) -> bool {
    matches!(frame, Frame::Attribute(_))
}

/// What a RESP3 client reads back: one null, and attributes only at the top level (inside
/// aggregates the decoder skips them, and the encoder drops those that decorate nothing or
/// stand in for a map key or value).
fn resp3_view(frame: &Frame, top: bool) -> Option<Frame> {
    let list = |items: &[Frame]| items.iter().filter_map(|f| resp3_view(f, false)).collect();
    let pairs = |pairs: &[(Frame, Frame)]| {
        pairs
            .iter()
            .filter(|(k, v)| !is_attribute(k) && !is_attribute(v))
            .filter_map(|(k, v)| Some((resp3_view(k, false)?, resp3_view(v, false)?)))
            .collect()
    };
    Some(match frame {
        Frame::NullArray => Frame::Null,
        Frame::Array(items) => Frame::Array(list(items)),
        Frame::Set(items) => Frame::Set(list(items)),
        Frame::Push(items) => Frame::Push(list(items)),
        Frame::Map(p) => Frame::Map(pairs(p)),
        Frame::Attribute(p) if top => Frame::Attribute(pairs(p)),
        Frame::Attribute(_) => return None,
        other => other.clone(),
    })
}

fn encoded(frame: &Frame, proto: Protocol) -> Vec<u8> {
    let mut out = BytesMut::new();
    encode(frame, proto, &mut out);
    out.to_vec()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn decode_request_never_panics(input in any_input()) {
        let mut buf = BytesMut::from(&input[..]);
        drain_requests(&mut buf);
    }

    #[test]
    fn decode_frame_never_panics(input in any_input()) {
        let mut buf = BytesMut::from(&input[..]);
        loop {
            let before = buf.len();
            match decode_frame(&mut buf) {
                Ok(Some(_)) => prop_assert!(buf.len() < before),
                Ok(None) => {
                    prop_assert_eq!(buf.len(), before);
                    break;
                }
                Err(_) => break,
            }
        }
    }

    /// Feeding a stream in arbitrary chunks, to either decoder, gives the same requests and the
    /// same error as decoding it in one go.
    #[test]
    fn chunked_feeding_matches_whole_buffer(
        input in any_input(),
        cuts in vec(any::<Index>(), 0..6),
    ) {
        let whole = drain_requests(&mut BytesMut::from(&input[..]));
        let mut points: Vec<usize> = cuts.iter().map(|c| c.index(input.len() + 1)).collect();
        points.push(input.len());
        points.sort_unstable();

        let mut stateless = (Vec::new(), None);
        let mut stateful = (Vec::new(), None);
        let mut buf_a = BytesMut::new();
        let mut buf_b = BytesMut::new();
        let mut dec = RequestDecoder::new(Limits::default());
        let mut from = 0;
        for &to in &points {
            if stateless.1.is_none() {
                buf_a.extend_from_slice(&input[from..to]);
                let (reqs, err) = drain_requests(&mut buf_a);
                stateless.0.extend(reqs);
                stateless.1 = err;
            }
            if stateful.1.is_none() {
                buf_b.extend_from_slice(&input[from..to]);
                loop {
                    match dec.decode(&mut buf_b) {
                        Ok(Some(args)) => stateful.0.push(args),
                        Ok(None) => break,
                        Err(e) => {
                            stateful.1 = Some(e);
                            break;
                        }
                    }
                }
            }
            from = to;
        }
        prop_assert_eq!(&stateless, &whole);
        prop_assert_eq!(&stateful, &whole);
    }

    #[test]
    fn multibulk_args_round_trip(
        args in vec(vec(any::<u8>(), 0..48), 0..12),
        split in any::<Index>(),
    ) {
        let bytes = multibulk(&args);
        let want: Vec<Bytes> = args.iter().map(|a| Bytes::copy_from_slice(a)).collect();

        let mut buf = BytesMut::from(&bytes[..]);
        buf.extend_from_slice(b"*1\r\n$4\r\nPING\r\n");
        prop_assert_eq!(decode_request(&mut buf, &Limits::default()), Ok(Some(want.clone())));
        prop_assert_eq!(&buf[..], &b"*1\r\n$4\r\nPING\r\n"[..]);

        let at = split.index(bytes.len());
        let mut buf = BytesMut::from(&bytes[..at]);
        prop_assert_eq!(decode_request(&mut buf, &Limits::default()), Ok(None));
        prop_assert_eq!(&buf[..], &bytes[..at]);
        buf.extend_from_slice(&bytes[at..]);
        prop_assert_eq!(decode_request(&mut buf, &Limits::default()), Ok(Some(want.clone())));
        prop_assert!(buf.is_empty());

        let mut dec = RequestDecoder::new(Limits::default());
        let mut buf = BytesMut::from(&bytes[..at]);
        prop_assert_eq!(dec.decode(&mut buf), Ok(None));
        buf.extend_from_slice(&bytes[at..]);
        prop_assert_eq!(dec.decode(&mut buf), Ok(Some(want)));
        prop_assert!(buf.is_empty());
    }

    #[test]
    fn escaped_inline_args_round_trip(args in vec(vec(any::<u8>(), 0..16), 0..8)) {
        let line = inline_escaped(&args);
        let want: Vec<Bytes> = args.iter().map(|a| Bytes::copy_from_slice(a)).collect();
        let mut buf = BytesMut::from(&line[..]);
        prop_assert_eq!(decode_request(&mut buf, &Limits::default()), Ok(Some(want)));
        prop_assert!(buf.is_empty());
    }

    #[test]
    fn resp3_frames_round_trip(frame in frame(), split in any::<Index>()) {
        let bytes = encoded(&frame, Protocol::Resp3);
        let mut buf = BytesMut::from(&bytes[..]);
        buf.extend_from_slice(b":7\r\n");
        prop_assert_eq!(decode_frame(&mut buf), Ok(Some(frame.clone())));
        prop_assert_eq!(decode_frame(&mut buf), Ok(Some(Frame::Integer(7))));
        prop_assert!(buf.is_empty());

        let at = split.index(bytes.len());
        let mut buf = BytesMut::from(&bytes[..at]);
        prop_assert_eq!(decode_frame(&mut buf), Ok(None));
        prop_assert_eq!(&buf[..], &bytes[..at]);
        buf.extend_from_slice(&bytes[at..]);
        prop_assert_eq!(decode_frame(&mut buf), Ok(Some(frame)));
        prop_assert!(buf.is_empty());
    }

    /// RESP2 output only uses RESP2 types, and reads back as Redis's downgrade of the frame.
    #[test]
    fn resp2_encoding_is_the_downgrade(frame in any_frame()) {
        let bytes = encoded(&frame, Protocol::Resp2);
        let mut buf = BytesMut::from(&bytes[..]);
        match resp2_view(&frame) {
            None => prop_assert!(bytes.is_empty()),
            Some(view) => {
                prop_assert_eq!(decode_frame(&mut buf), Ok(Some(view)));
                prop_assert!(buf.is_empty());
            }
        }
        prop_assert!(
            matches!(bytes.first(), None | Some(b'+' | b'-' | b':' | b'$' | b'*')),
            "RESP2 output starts with {:?}",
            bytes.first().map(|b| char::from(*b))
        );
    }

    /// Frames with attributes anywhere and `NullArray`s still decode to well-formed values.
    #[test]
    fn resp3_with_attributes_reads_back(frame in any_frame()) {
        let bytes = encoded(&frame, Protocol::Resp3);
        let mut buf = BytesMut::from(&bytes[..]);
        prop_assert_eq!(decode_frame(&mut buf), Ok(resp3_view(&frame, true)));
        prop_assert!(buf.is_empty());
    }

    #[test]
    fn format_double_reads_back(bits in any::<u64>()) {
        let d = f64::from_bits(bits);
        let text = format_double(d);
        prop_assert!(text.len() <= 24);
        if d.is_finite() {
            let back: f64 = text.parse().unwrap_or(f64::NAN);
            prop_assert_eq!(back.to_bits(), bits, "{}", text);
        }
    }
}
