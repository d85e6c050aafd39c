//! The RDB object decoder behind RESTORE: no panic, re-encoding round-trips; see
//! `rdb_targets::rdb_object`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    relis_fuzz::rdb_targets::rdb_object(data);
});
