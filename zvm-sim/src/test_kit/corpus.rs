//! A fuzz target's corpus (`fuzz/corpus/<target>`) replayed as an ordinary test, so every seed keeps
//! passing through the target's entry point on every `cargo test`, without the fuzzing runtime.

use std::path::PathBuf;

/// The files of one fuzz target's corpus, sorted by name.
#[derive(Debug)]
pub struct Corpus {
    files: Vec<(String, Vec<u8>)>,
}

impl Corpus {
    /// The corpus of `target`; it must hold its seeds (ten at least).
    pub fn of(target: &str) -> Corpus {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../fuzz/corpus")
            .join(target);
        let entries = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("the corpus {} is readable: {e}", dir.display()));
        let mut files: Vec<(String, Vec<u8>)> = entries
            .map(|entry| {
                let path = entry.expect("a corpus entry").path();
                let name = path
                    .file_name()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .into_owned();
                (name, std::fs::read(&path).expect("a corpus file"))
            })
            .collect();
        files.sort();
        assert!(
            files.len() >= 10,
            "the corpus has its seeds: {}",
            files.len()
        );
        Corpus { files }
    }

    /// Runs `check` on every file: it must not panic (the target's own check panics on a wrong
    /// decision).
    pub fn replay(&self, check: impl Fn(&[u8]) + std::panic::RefUnwindSafe) {
        for (name, bytes) in &self.files {
            let replayed = std::panic::catch_unwind(|| check(bytes));
            assert!(
                replayed.is_ok(),
                "corpus file {name} failed the target's check"
            );
        }
    }

    /// The bytes of the seed named `name`.
    pub fn seed(&self, name: &str) -> &[u8] {
        let found = self.files.iter().find(|(n, _)| n == name);
        &found
            .unwrap_or_else(|| panic!("seed {name} is in the corpus"))
            .1
    }
}
