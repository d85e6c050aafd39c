//! The SQL parameter binder; see `engine_targets::sql_params`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    relis_fuzz::engine_targets::sql_params(data);
});
