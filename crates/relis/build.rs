fn main() {
    // Redis computes INCRBYFLOAT in C `long double` and prints it with "%.17Lf"; Rust has no
    // extended-precision float, so the same two lines of C give byte-identical results.
    cc::Build::new().file("src/ld.c").compile("relis_ld");
    println!("cargo:rerun-if-changed=src/ld.c");
}
