//! The RDB file reader behind `--import`: no panic, errors within the input, what it reads
//! writes back the same; see `rdb_targets::rdb_file`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    relis_fuzz::rdb_targets::rdb_file(data);
});
