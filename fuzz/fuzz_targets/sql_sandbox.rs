//! The SQL sandbox: random SQL against a fresh engine, invariants after every statement; see
//! `sql_targets::sql_sandbox`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    relis_fuzz::sql_targets::sql_sandbox(data);
});
