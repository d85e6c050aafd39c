//! The glob matcher: no panic, a bounded time, matches inside the literal prefix; see
//! `engine_targets::glob`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    relis_fuzz::engine_targets::glob(data);
});
