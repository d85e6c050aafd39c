//! RESP2/RESP3 frame decoding and re-encoding: see `resp_targets::frame`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| relis_fuzz::resp_targets::frame(data));
