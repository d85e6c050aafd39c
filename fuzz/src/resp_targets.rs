//! Fuzz bodies for the RESP codec (only `resp` and `bytes`, so the resp crate's tests can
//! include this file).

use bytes::{Bytes, BytesMut};
use resp::{decode_frame, decode_request, encode, Limits, Protocol, RequestDecoder};

/// One decoded request or the error text that ends the connection.
type Outcome = Result<Vec<Bytes>, String>;

/// Decodes requests from the front of `buf` with `next` until it needs more bytes or fails.
fn drain(
    buf: &mut BytesMut,
    out: &mut Vec<Outcome>,
    mut next: impl FnMut(&mut BytesMut) -> Result<Option<Vec<Bytes>>, resp::ProtocolError>,
) -> bool {
    loop {
        match next(buf) {
            Ok(Some(args)) => out.push(Ok(args)),
            Ok(None) => return true,
            Err(e) => {
                out.push(Err(e.to_string()));
                return false;
            }
        }
    }
}

/// Request decoding. The first byte picks the limits (small ones reach the "too big" and
/// "invalid bulk length" paths), whether authentication is pending, and the size of the reads
/// the input arrives in. Checks: nothing panics; the resumable [`RequestDecoder`], fed in
/// chunks, decodes exactly what one-shot [`decode_request`] decodes from the whole input.
pub fn request(data: &[u8]) {
    let Some((&ctl, data)) = data.split_first() else {
        return;
    };
    let mut limits = Limits::default();
    if ctl & 1 != 0 {
        limits.proto_max_bulk_len = 16;
    }
    if ctl & 2 != 0 {
        limits.max_inline_len = 64;
    }
    if ctl & 4 != 0 {
        limits.max_multibulk_len = 8;
    }
    let auth = ctl & 8 != 0;
    let chunk = usize::from(ctl >> 4) + 1;

    let mut whole = Vec::new();
    let mut buf = BytesMut::from(data);
    drain(&mut buf, &mut whole, |b| decode_request(b, &limits));

    let mut pieces = Vec::new();
    let mut dec = RequestDecoder::new(limits);
    dec.set_auth_required(auth);
    let mut buf = BytesMut::new();
    for part in data.chunks(chunk) {
        buf.extend_from_slice(part);
        if !drain(&mut buf, &mut pieces, |b| dec.decode(b)) {
            break;
        }
    }
    // The "too big" checks look at the whole unread buffer (as Redis's do), so they depend on
    // how the bytes arrive; below the limit, and without the authentication limits, the two
    // decoders must agree.
    if !auth && data.len() <= limits.max_inline_len {
        assert_eq!(whole, pieces, "one-shot and resumable decoding differ");
    }
}

/// Frame decoding (what clients and tests use to read replies). Checks: nothing panics, and
/// every decoded frame re-encodes (RESP3 and RESP2) into bytes that decode again to one
/// whole frame.
pub fn frame(data: &[u8]) {
    let mut buf = BytesMut::from(data);
    while let Ok(Some(f)) = decode_frame(&mut buf) {
        let attribute = matches!(f, resp::Frame::Attribute(_));
        for proto in [Protocol::Resp3, Protocol::Resp2] {
            if attribute && proto == Protocol::Resp2 {
                continue; // RESP2 has no attributes: nothing is encoded.
            }
            let mut out = BytesMut::new();
            encode(&f, proto, &mut out);
            let again = decode_frame(&mut out);
            assert!(
                matches!(again, Ok(Some(_))),
                "{proto:?} re-encoding of {f:?} does not decode: {again:?}"
            );
            // A top-level attribute is followed by the value it decorates; anything else is
            // one whole frame.
            if !attribute {
                assert!(
                    out.is_empty(),
                    "{proto:?} re-encoding of {f:?} left {out:?}"
                );
            }
        }
    }
}
