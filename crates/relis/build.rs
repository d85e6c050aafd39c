fn main() {
    // Redis computes INCRBYFLOAT in C `long double` and prints it with "%.17Lf"; Rust has no
    // extended-precision float, so the same two lines of C give byte-identical results.
    cc::Build::new().file("src/ld.c").compile("relis_ld");
    println!("cargo:rerun-if-changed=src/ld.c");
    // The WAL index's locks (src/backend/sqlite/shmlocks.rs): a variadic fcntl for SQLite's
    // unix VFS.
    if std::env::var_os("CARGO_CFG_UNIX").is_some() {
        cc::Build::new()
            .file("src/shmlocks.c")
            .compile("relis_shmlocks");
    }
    println!("cargo:rerun-if-changed=src/shmlocks.c");
}
