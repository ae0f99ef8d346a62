//! The fronts' binaries, `rewind` and `rewind-mcp`: finding and building them first, how long a
//! front may take to answer, and a command line split into its words as a shell splits it.
//!
//! `cargo test -p features` builds only this package's targets, and `CARGO_BIN_EXE_*` exists only for
//! binaries of the package under test, so the runner builds the two binaries itself, with the cargo
//! that runs it and the profile (and target folder, and target triple) its own executable was built
//! with. Cargo's own freshness check makes this a no-op when they are up to date, and it works the
//! same under `cargo test --workspace` and `cargo test -p features` on a fresh clone.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The binaries the suite runs.
#[derive(Debug, Clone)]
pub struct Binaries {
    /// The `rewind` CLI.
    pub rewind: PathBuf,
    /// The `rewind-mcp` MCP server.
    pub rewind_mcp: PathBuf,
}

static BINARIES: OnceLock<Binaries> = OnceLock::new();

/// Where cargo puts things for the running test executable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetLayout {
    /// The target folder (`target/`, or `CARGO_TARGET_DIR`).
    pub target_dir: PathBuf,
    /// The profile's folder, where the binaries land (`target/debug`, `target/<triple>/release`).
    pub profile_dir: PathBuf,
    /// The profile's folder name: `debug` for the dev profile, else the profile's name.
    pub profile: String,
    /// The target triple, when the build was for an explicit `--target`.
    pub triple: Option<String>,
}

impl TargetLayout {
    /// The layout of the running executable, which cargo puts in `<profile dir>/deps/`.
    pub fn of_current_exe() -> Result<TargetLayout, String> {
        let exe = std::env::current_exe()
            .map_err(|e| format!("cannot tell where the test executable is: {e}"))?;
        TargetLayout::of_exe(&exe)
    }

    /// The layout of a test executable at `exe`.
    pub fn of_exe(exe: &Path) -> Result<TargetLayout, String> {
        let deps = exe.parent().filter(|d| d.ends_with("deps")).ok_or_else(|| {
            format!(
                "the test executable {} is not in a cargo `deps` folder; run the suite with `cargo test -p features`",
                exe.display()
            )
        })?;
        let profile_dir = deps
            .parent()
            .ok_or_else(|| format!("{} has no profile folder", deps.display()))?
            .to_path_buf();
        let profile = profile_dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .ok_or_else(|| format!("{} has no name", profile_dir.display()))?;
        let above = profile_dir
            .parent()
            .ok_or_else(|| format!("{} has no target folder", profile_dir.display()))?;
        // Cargo marks the target folder itself with CACHEDIR.TAG; with `--target <triple>` there is one
        // more level, named for the triple.
        let (target_dir, triple) = match above.parent() {
            Some(outer)
                if !above.join("CACHEDIR.TAG").exists() && outer.join("CACHEDIR.TAG").exists() =>
            {
                (
                    outer.to_path_buf(),
                    above.file_name().map(|n| n.to_string_lossy().into_owned()),
                )
            }
            _ => (above.to_path_buf(), None),
        };
        Ok(TargetLayout {
            target_dir,
            profile_dir,
            profile,
            triple,
        })
    }

    /// The cargo flags that select this profile and triple.
    pub fn cargo_flags(&self) -> Vec<String> {
        let mut flags = match self.profile.as_str() {
            "debug" => Vec::new(),
            "release" => vec!["--release".to_string()],
            other => vec!["--profile".to_string(), other.to_string()],
        };
        flags.push("--target-dir".to_string());
        flags.push(self.target_dir.display().to_string());
        if let Some(triple) = &self.triple {
            flags.push("--target".to_string());
            flags.push(triple.clone());
        }
        flags
    }
}

/// Builds `rewind` and `rewind-mcp` (once per process) and returns where they are.
///
/// `REWIND_BIN` and `REWIND_MCP_BIN` name prebuilt binaries instead (then nothing is built).
pub fn prepare() -> Result<&'static Binaries, String> {
    if let Some(b) = BINARIES.get() {
        return Ok(b);
    }
    let binaries = match (
        std::env::var_os("REWIND_BIN"),
        std::env::var_os("REWIND_MCP_BIN"),
    ) {
        (Some(rewind), Some(rewind_mcp)) => Binaries {
            rewind: rewind.into(),
            rewind_mcp: rewind_mcp.into(),
        },
        _ => build()?,
    };
    for bin in [&binaries.rewind, &binaries.rewind_mcp] {
        if !bin.is_file() {
            return Err(format!(
                "{} does not exist after the build; build it with `cargo build -p rewind-cli -p rewind-mcp`, or name prebuilt binaries with REWIND_BIN and REWIND_MCP_BIN",
                bin.display()
            ));
        }
    }
    Ok(BINARIES.get_or_init(|| binaries))
}

/// The running binaries, once [`prepare`] succeeded.
pub fn get() -> &'static Binaries {
    BINARIES
        .get()
        .expect("the runner prepares the binaries before any scenario runs")
}

fn build() -> Result<Binaries, String> {
    let layout = TargetLayout::of_current_exe()?;
    // Under `cargo test`, CARGO is the cargo that runs us: the same toolchain builds the fronts.
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .ok_or("the features package has no parent folder")?;
    let mut cmd = Command::new(&cargo);
    cmd.current_dir(workspace)
        .args(["build", "-p", "rewind-cli", "-p", "rewind-mcp", "--bins"])
        .args(layout.cargo_flags());
    let status = cmd.status().map_err(|e| {
        format!(
            "cannot run {} to build rewind and rewind-mcp: {e}",
            Path::new(&cargo).display()
        )
    })?;
    if !status.success() {
        return Err(format!(
            "`cargo build -p rewind-cli -p rewind-mcp` failed ({status}); the acceptance suite needs both binaries"
        ));
    }
    let exe = |name: &str| {
        layout
            .profile_dir
            .join(format!("{name}{}", std::env::consts::EXE_SUFFIX))
    };
    Ok(Binaries {
        rewind: exe("rewind"),
        rewind_mcp: exe("rewind-mcp"),
    })
}

/// How long one answer of a front (a `rewind` run, an MCP tool call) may take before the step fails.
/// Far beyond any deadline of the fronts themselves (a guard's is 60 s by default, a few seconds in
/// the scenarios that set one), so that only a front that hangs reaches it: the step then fails
/// naming the command instead of holding the whole suite up for ever.
pub const FRONT_DEADLINE: std::time::Duration = std::time::Duration::from_secs(300);

/// Splits a command line the way a shell would for the simple cases a scenario writes: words
/// separated by spaces, double-quoted words kept whole (without their quotes).
pub fn split_command(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    let mut started = false;
    for c in line.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                started = true;
            }
            c if c.is_whitespace() && !quoted => {
                if started {
                    words.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            c => {
                word.push(c);
                started = true;
            }
        }
    }
    assert!(!quoted, "an unclosed quote in {line:?}");
    if started {
        words.push(word);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dev_profile_needs_no_flag_but_the_target_folder() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("CACHEDIR.TAG"), "").unwrap();
        let exe = dir.path().join("debug/deps/acceptance-0123");
        let layout = TargetLayout::of_exe(&exe).unwrap();
        assert_eq!(layout.profile, "debug");
        assert_eq!(layout.triple, None);
        assert_eq!(layout.target_dir, dir.path());
        assert_eq!(
            layout.cargo_flags(),
            vec!["--target-dir".to_string(), dir.path().display().to_string()]
        );
    }

    #[test]
    fn a_release_build_for_a_triple_is_built_the_same_way() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("CACHEDIR.TAG"), "").unwrap();
        let exe = dir
            .path()
            .join("x86_64-unknown-linux-gnu/release/deps/acceptance-0123");
        let layout = TargetLayout::of_exe(&exe).unwrap();
        assert_eq!(
            layout.profile_dir,
            dir.path().join("x86_64-unknown-linux-gnu/release")
        );
        let flags = layout.cargo_flags();
        assert_eq!(flags[0], "--release");
        assert_eq!(flags[3..], ["--target", "x86_64-unknown-linux-gnu"]);
    }

    #[test]
    fn an_executable_outside_a_deps_folder_is_refused_with_what_to_do() {
        let err = TargetLayout::of_exe(Path::new("/usr/bin/acceptance")).unwrap_err();
        assert!(err.contains("cargo test -p features"), "{err}");
    }

    #[test]
    fn quoted_words_stay_whole_and_empty_quotes_are_a_word() {
        assert_eq!(
            split_command(r#"guard web-01 --action "edit app.conf"  --summary """#),
            [
                "guard",
                "web-01",
                "--action",
                "edit app.conf",
                "--summary",
                ""
            ]
        );
    }
}
