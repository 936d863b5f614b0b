//! Says at build time whether the reference material (`shared/` beside the checkout, or beside
//! one of its ancestors) is there, so the tests that need it are reported `ignored`, with the
//! reason, on a plain clone instead of passing without running: `cfg(no_seeds)` when the seed
//! document is missing, `cfg(no_api_examples)` when the Forgejo example answers are.
//!
//! A file that is found is watched, so removing it is noticed; a plain clone watches only this
//! script (watching a directory would make cargo scan it all on every build): after putting
//! `../shared` beside a clone, `touch build.rs` to run the seed tests.

use std::path::Path;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rustc-check-cfg=cfg(no_seeds)");
    println!("cargo::rustc-check-cfg=cfg(no_api_examples)");
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default();
    let find = |rel: &str| {
        Path::new(&manifest)
            .ancestors()
            .skip(1)
            .map(|dir| dir.join("shared").join(rel))
            .find(|p| p.exists())
    };
    for (rel, cfg) in [
        ("seeds/003_6e1e09118f29b57e.txt", "no_seeds"),
        ("forgejo-api/examples/comment.json", "no_api_examples"),
    ] {
        match find(rel) {
            Some(path) => println!("cargo::rerun-if-changed={}", path.display()),
            None => println!("cargo::rustc-cfg={cfg}"),
        }
    }
}
