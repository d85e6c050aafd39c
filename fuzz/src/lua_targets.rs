//! Fuzz body for the Lua-facing converters (only `relis_server`, so the server crate's tests
//! can include this file): `cjson.decode`/`encode`, `cmsgpack.unpack`/`pack`,
//! `struct.unpack`/`pack`/`size` and the reply <-> Lua conversions, in a Lua state built once
//! per thread. The checks live in `relis_server::lua::fuzz::converters`.

/// One input: the first byte picks the converter (and RESP2/RESP3), the rest is its data.
pub fn lua(data: &[u8]) {
    relis_server::lua::fuzz::converters(data);
}
