//! RESP request decoding (`decode_request`, `RequestDecoder`): see `resp_targets::request`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| relis_fuzz::resp_targets::request(data));
