//! Command parsing through the command table: see `cmd_targets::command`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    relis_fuzz::cmd_targets::command(data);
});
