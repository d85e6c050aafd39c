//! The Lua-facing converters (cjson, cmsgpack, struct, reply <-> Lua): see `lua_targets::lua`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    relis_fuzz::lua_targets::lua(data);
});
