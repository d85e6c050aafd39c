// RELIS: mlua-sys compiles these C sources from its own build script, which cargo reruns only
// when this crate changes; this makes an edit of a C file count as a change of the crate.
fn main() {
    println!("cargo:rerun-if-changed=lua-5.1.5");
}
