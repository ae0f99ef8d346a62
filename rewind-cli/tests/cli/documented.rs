//! Every `rewind` command line of the README's and docs' shell blocks, run as written with the built
//! binary against a simulator, in the page's order and in a fresh home: each must end with the exit
//! code its comment names (`exit 3`), 0 otherwise. A page's `export` lines set the environment, and a
//! `cargo run -p zvm-sim -- --world FILE ...` line starts a simulator serving that world. The lines a
//! person must answer (`rewind trust` without `--fingerprint`), the hook an agent host runs with its
//! JSON on stdin, the demo (its own test) and lines with placeholders (`<vm>`, `...`) are left out.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use crate::env::TestEnv;

/// The simulator's address the docs write, which the test's own stands for.
const DOCUMENTED_SIM: &str = "http://127.0.0.1:9669";

/// One line of a shell block.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    /// `export A=1 B=2`.
    Export(Vec<(String, String)>),
    /// `cargo run -p zvm-sim -- --world FILE --listen ADDR ...`: a simulator of FILE, at ADDR.
    Simulator { world: String, listen: String },
    /// A `rewind` command and the exit code it should end with.
    Rewind { line: String, code: i32 },
}

/// The steps of every shell block of `page`, in order.
fn steps(page: &str) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut in_shell = false;
    for raw in page.lines() {
        let fence = raw.trim_start();
        if let Some(info) = fence.strip_prefix("```") {
            in_shell = !in_shell && matches!(info.trim(), "sh" | "bash" | "console" | "shell");
            continue;
        }
        if !in_shell {
            continue;
        }
        let (command, comment) = match raw.split_once(" #") {
            Some((command, comment)) => (command.trim(), comment),
            None => (raw.trim(), ""),
        };
        let command = command.trim_start_matches("$ ").trim();
        steps.extend(step(command, comment));
    }
    steps
}

/// The step of one command, if it is one this test runs.
fn step(command: &str, comment: &str) -> Option<Step> {
    if let Some(vars) = command.strip_prefix("export ") {
        let pairs = vars
            .split_whitespace()
            .filter_map(|p| p.split_once('='))
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        return Some(Step::Export(pairs));
    }
    if let Some(args) = command.strip_prefix("cargo run -p zvm-sim -- ") {
        let words: Vec<&str> = args.split_whitespace().collect();
        let after = |flag: &str| {
            let at = words.iter().position(|w| *w == flag)?;
            words.get(at + 1).map(|w| (*w).to_owned())
        };
        return Some(Step::Simulator {
            world: after("--world")?,
            listen: after("--listen")?,
        });
    }
    let placeholder = command.contains('<') || command.contains("...");
    let asks = command.starts_with("rewind trust") && !command.contains("--fingerprint")
        // What an agent host runs, with its JSON on stdin.
        || command.starts_with("rewind hook pre-tool-use");
    if !command.starts_with("rewind ") || placeholder || asks || command == "rewind demo" {
        return None;
    }
    let code = comment
        .split("exit ")
        .nth(1)
        .and_then(|n| n.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let line = command
        .split("; echo $?")
        .next()
        .unwrap_or(command)
        .to_owned();
    Some(Step::Rewind { line, code })
}

/// A folder holding `rewind`, for the PATH the lines run with.
fn bin_dir(dir: &Path) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let link = bin.join("rewind");
    if !link.exists() {
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_rewind"), &link).unwrap();
    }
    bin
}

/// Runs the steps of `page` in a fresh home against a simulator; the lines run, each with what it
/// printed when it did not end as documented.
async fn run_page(page: &str, seed: u64) -> usize {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(page))
        .unwrap();
    let env = TestEnv::start(seed).await;
    // A fresh machine: no configuration file, only what the page exports.
    env.write_config_text("");
    let work = env.dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let bin = bin_dir(env.dir.path());
    let mut urls: HashMap<String, String> =
        HashMap::from([(DOCUMENTED_SIM.to_owned(), env.sim.local().url.clone())]);
    let mut exported: Vec<(String, String)> = Vec::new();
    let mut started = Vec::new();
    let mut ran = 0;
    for s in steps(&text) {
        match s {
            Step::Export(pairs) => exported.extend(pairs),
            Step::Simulator { world, listen } => {
                let spec = zvm_sim::WorldSpec::from_file(&work.join(&world))
                    .unwrap_or_else(|e| panic!("{page}: the world {world} serves: {e}"));
                let sim = zvm_sim::start(zvm_sim::Options {
                    world: spec,
                    ..zvm_sim::Options::for_tests(seed + 1)
                })
                .await
                .unwrap();
                urls.insert(format!("http://{listen}"), sim.local().url.clone());
                started.push(sim);
            }
            Step::Rewind { line, code } => {
                let line = urls.iter().fold(line, |line, (documented, real)| {
                    line.replace(documented, real)
                });
                let command = env.command(&[]);
                let rewind = command.as_std();
                let vars: Vec<(String, String)> = rewind
                    .get_envs()
                    .filter_map(|(k, v)| {
                        Some((
                            k.to_string_lossy().into_owned(),
                            v?.to_string_lossy().into_owned(),
                        ))
                    })
                    .collect();
                let mut shell = tokio::process::Command::new("sh");
                shell
                    .args(["-c", &line])
                    .current_dir(&work)
                    .env_clear()
                    .envs(vars)
                    .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
                    .stdin(Stdio::null());
                for (k, v) in &exported {
                    let v = urls.iter().fold(v.clone(), |v, (documented, real)| {
                        v.replace(documented, real)
                    });
                    shell.env(k, v);
                }
                let out = shell.output().await.unwrap();
                assert_eq!(
                    out.status.code(),
                    Some(code),
                    "{page}: `{line}` ended otherwise than documented:\n{}{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
                ran += 1;
            }
        }
    }
    for sim in started {
        sim.shutdown().await;
    }
    ran
}

#[test]
fn a_pages_steps_are_its_shell_lines_with_their_documented_exit_codes() {
    let page = "text\n```sh\nexport ZVM_URL=http://x A=b\nrewind find web-01   # the VM\nrewind --json find r; echo $?   # refused, exit 3\nrewind guard <vm> ...\nrewind trust default   # asks\n```\nrewind find not-in-a-block\n";
    assert_eq!(
        steps(page),
        [
            Step::Export(vec![
                ("ZVM_URL".into(), "http://x".into()),
                ("A".into(), "b".into())
            ]),
            Step::Rewind {
                line: "rewind find web-01".into(),
                code: 0
            },
            Step::Rewind {
                line: "rewind --json find r".into(),
                code: 3
            },
        ]
    );
}

#[tokio::test]
async fn every_rewind_line_of_the_readme_runs_as_written() {
    let ran = run_page("README.md", 131).await;
    assert!(ran >= 10, "{ran} lines ran");
}

#[tokio::test]
async fn every_rewind_line_of_the_docs_runs_as_written() {
    let mut ran = 0;
    let mut pages: Vec<PathBuf> =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "md"))
            .collect();
    pages.sort();
    for (n, page) in pages.iter().enumerate() {
        let name = format!("docs/{}", page.file_name().unwrap().to_string_lossy());
        ran += run_page(&name, 140 + n as u64).await;
    }
    assert!(ran >= 7, "{ran} lines ran");
}
