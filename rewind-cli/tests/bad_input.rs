//! Bad input everywhere gets a clear error and changes nothing: command-line arguments (empty, huge,
//! control characters, `|` in a tag's parts, unknown flags), hook input (not JSON, the wrong shape,
//! huge), and configuration and catalog files (corrupt TOML, wrong types, unknown keys, which are
//! refused). "Changes nothing": the catalog and journal files are byte-identical afterwards and the
//! simulator saw no write (its call log has no POST, PUT or DELETE).

// The CLI suite's helper, shared: this file uses only part of it.
#[path = "cli/env.rs"]
#[allow(dead_code)]
mod env;

use env::{TestEnv, guard_args};
use serde_json::{Value, json};

/// The bytes of the catalog and the journal (None when absent).
fn files(env: &TestEnv) -> (Option<Vec<u8>>, Option<Vec<u8>>) {
    (
        std::fs::read(env.catalog_file()).ok(),
        std::fs::read(env.journal_file()).ok(),
    )
}

/// The writes the simulator saw, as `METHOD PATH`.
async fn writes(env: &TestEnv) -> Vec<String> {
    env.control
        .calls()
        .await
        .iter()
        .filter(|c| c["Method"] != "GET" && !c["Path"].as_str().unwrap_or("").starts_with("/auth/"))
        .map(|c| format!("{} {}", c["Method"], c["Path"]))
        .collect()
}

#[tokio::test]
async fn bad_arguments_are_one_clear_usage_error_and_nothing_is_written() {
    let env = TestEnv::start(81).await;
    // Something in the catalog and the journal to keep.
    env.catalog(&["add-mutating", "ssh", "run", "--vm-arg", "host"])
        .await;
    env.guard("web-01", "claude", "c0").await;
    env.control.post("reset", json!({})).await;
    let before = files(&env);
    let huge = "x".repeat(100_000);
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (guard_args("", "claude", "edit", "c1"), "vm"),
        (guard_args("web-01", "", "edit", "c1"), "agent"),
        (guard_args("web-01", "claude", "edit", ""), "change"),
        (guard_args("web-01", "claude", "edit", "   "), "change"),
        (guard_args(&huge, "claude", "edit", "c1"), "vm"),
        (guard_args("web-01", &huge, "edit", "c1"), "agent"),
        (guard_args("web-01", "claude", &huge, "c1"), "action"),
        (guard_args("web-01", "claude", "edit", &huge), "change"),
        (guard_args("web\u{1}01", "claude", "edit", "c1"), "vm"),
        (guard_args("web-01", "cla\nude", "edit", "c1"), "agent"),
        (guard_args("web-01", "claude", "edit\tthis", "c1"), "action"),
        (guard_args("web-01", "claude", "edit", "c\u{7f}1"), "change"),
        (guard_args("web-01", "cla|ude", "edit", "c1"), "agent"),
        (
            guard_args("web-01", "claude", "edit | vm=db-01", "c1"),
            "action",
        ),
        (guard_args("web-01", "claude", "edit", "c1|c2"), "change"),
        (vec!["find", ""], "vm"),
        (vec!["find", "web\u{1f}01"], "vm"),
        (
            vec!["catalog", "add-mutating", "ssh\u{1b}[31m", "run"],
            "server",
        ),
        (vec!["catalog", "add-mutating", "", "run"], "server"),
        (vec!["catalog", "add-read-only", "ssh", &huge], "tool"),
        (vec!["guard", "web-01", "--bogus"], "--bogus"),
        (vec!["--no-such-flag", "sites"], "--no-such-flag"),
        (
            vec![
                "recover", "file", "web-01", "--change", "c0", "--to", "/tmp/x",
            ],
            "--path",
        ),
    ];
    for (args, names) in &cases {
        let run = env.rewind(args).await;
        let shown: Vec<String> = args.iter().map(|a| a.chars().take(40).collect()).collect();
        assert_eq!(run.code, 2, "{shown:?} is a usage error: {}", run.stderr);
        assert!(
            run.stdout.is_empty(),
            "{shown:?}: nothing on stdout: {}",
            run.stdout
        );
        assert!(
            run.stderr.contains(names),
            "{shown:?}: the error names {names}: {}",
            run.stderr
        );
        assert!(
            run.stderr.len() < 4_000,
            "{shown:?}: the error does not echo a huge argument back ({} bytes)",
            run.stderr.len()
        );
        assert!(
            !run.stderr.contains('\u{1b}') && !run.stderr.contains('\u{0}'),
            "{shown:?}: no control character is echoed: {:?}",
            run.stderr
        );
    }
    assert_eq!(files(&env), before, "the catalog and journal are unchanged");
    assert_eq!(
        writes(&env).await,
        Vec::<String>::new(),
        "the ZVMs saw no write"
    );
}

#[tokio::test]
async fn bad_hook_input_is_blocked_and_nothing_is_written() {
    let env = TestEnv::start(82).await;
    env.catalog(&["add-mutating", "claude-code", "Bash"]).await;
    let before = files(&env);
    let huge_input =
        json!({"tool_name": "Bash", "tool_input": {"command": "x".repeat(2_000_000)}}).to_string();
    let inputs: Vec<String> = vec![
        String::new(),
        "not json".into(),
        "{".into(),
        "[]".into(),
        "null".into(),
        "42".into(),
        json!({"tool_input": {}}).to_string(),
        json!({"tool_name": 5, "tool_input": {}}).to_string(),
        json!({"tool_name": ["Bash"]}).to_string(),
        json!({"tool_name": "", "tool_input": {}}).to_string(),
        json!({"tool_name": "Bash", "hook_event_name": "PostToolUse"}).to_string(),
        json!({"tool_name": "mcp__ssh__run\u{0}", "tool_input": {}}).to_string(),
        format!("{{\"tool_name\": \"{}\"}}", "m".repeat(1_000_000)),
        "\u{feff}{\"tool_name\": \"Read\"".into(),
        huge_input.clone(),
    ];
    for input in &inputs {
        let run = env
            .rewind_with_stdin(&["hook", "pre-tool-use"], Some(input))
            .await;
        let shown: String = input.chars().take(60).collect();
        let out: Value = run.json();
        let decision = out["hookSpecificOutput"]["permissionDecision"]
            .as_str()
            .unwrap();
        let reason = out["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap();
        // The huge but well-formed mutating call names no guarded VM: it is asked about, never allowed.
        // Input the hook cannot read blocks the call: a deny, and exit 2.
        if *input == huge_input {
            assert_eq!((decision, run.code), ("ask", 0), "{shown}: {reason}");
        } else {
            assert_eq!((decision, run.code), ("deny", 2), "{shown}: {reason}");
        }
        assert!(
            reason.len() < 4_000,
            "{shown}: the reason does not echo the input"
        );
    }
    assert_eq!(files(&env), before, "the catalog and journal are unchanged");
}

#[tokio::test]
async fn bad_configuration_and_catalog_files_are_refused_naming_the_file_and_are_left_as_they_were()
{
    let env = TestEnv::start(83).await;
    let sites = env.sites_toml();
    // Each refusal names the file, or the key or table that is wrong (and where to set it).
    let configs = [
        (
            "corrupt TOML",
            format!("{sites}\n[guard\ndeadline_secs = 5\n"),
            "config.toml",
        ),
        (
            "a wrong type",
            format!("{sites}\n[guard]\ndeadline_secs = \"soon\"\n"),
            "config.toml",
        ),
        (
            "a negative number",
            format!("{sites}\n[guard]\ndeadline_secs = -5\n"),
            "deadline_secs",
        ),
        (
            "an unknown key",
            format!("{sites}\n[guard]\ndeadline = 5\n"),
            "deadline",
        ),
        (
            "an unknown table",
            format!("{sites}\n[gaurd]\ndeadline_secs = 5\n"),
            "gaurd",
        ),
        (
            "a site without url",
            "[sites.boston]\nclient_id = \"rewind\"\n".to_string(),
            "[sites.boston]",
        ),
        (
            "an unknown site key",
            format!("{sites}\n[sites.extra]\nurl = \"http://127.0.0.1:9\"\nurll = 1\n"),
            "urll",
        ),
        (
            "not UTF-8",
            String::from_utf8_lossy(b"\xff\xfe[sites]").into_owned(),
            "config.toml",
        ),
    ];
    let mut unclear = Vec::new();
    for (what, text, names) in &configs {
        env.write_config_text(text);
        let run = env
            .rewind(&[
                "guard", "web-01", "--agent", "a", "--action", "b", "--change", "c",
            ])
            .await;
        assert_eq!(run.code, 2, "{what}: {}", run.stderr);
        let line = run.one_error_line();
        if !line.contains(names) {
            unclear.push(format!("{what}: {line}"));
        }
        assert_eq!(
            std::fs::read_to_string(env.config_file()).unwrap(),
            *text,
            "{what}: the file is left as it was"
        );
    }
    assert!(
        unclear.is_empty(),
        "errors that do not name what is wrong: {unclear:#?}"
    );
    assert_eq!(
        writes(&env).await,
        Vec::<String>::new(),
        "the ZVMs saw no write"
    );

    env.write_config("");
    let catalogs = [
        ("corrupt TOML", "[[mutating]\nserver = \"ssh\"\n"),
        ("a wrong type", "[[mutating]]\nserver = 5\ntool = \"run\"\n"),
        (
            "an unknown key",
            "[[mutating]]\nserver = \"ssh\"\ntool = \"run\"\nvm_argument = \"host\"\n",
        ),
        ("a missing key", "[[read_only]]\nserver = \"ssh\"\n"),
    ];
    for (what, text) in catalogs {
        std::fs::write(env.catalog_file(), text).unwrap();
        for args in [
            vec!["catalog", "list"],
            vec!["catalog", "add-read-only", "ssh", "ls"],
            vec!["check-tool", "ssh", "run"],
        ] {
            let run = env.rewind(&args).await;
            assert_ne!(run.code, 0, "{what}, {args:?}: {}", run.stdout);
            let line = run.one_error_line();
            assert!(line.contains("catalog.toml"), "{what}, {args:?}: {line}");
        }
        assert_eq!(
            std::fs::read_to_string(env.catalog_file()).unwrap(),
            text,
            "{what}: the catalog is left as it was"
        );
    }
}
