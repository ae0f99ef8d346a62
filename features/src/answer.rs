//! What a front answered, in one shape whichever front it was: the `rewind` CLI (its `--json`
//! document, exit code, stdout and stderr) or `rewind-mcp` (a tool result: `isError`, structured
//! content, text). Steps that check a result or a refusal read it from here, so one step serves both.

use serde_json::Value;

/// Which front answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Front {
    /// `rewind <args>`.
    Cli {
        /// The arguments as run.
        args: Vec<String>,
        /// The exit code.
        code: i32,
    },
    /// A call of an MCP tool.
    Mcp {
        /// The tool.
        tool: String,
    },
}

/// One answer of a front.
#[derive(Debug, Clone)]
pub struct Answer {
    /// Which front, and how it was called.
    pub front: Front,
    /// Whether the front said it did what it was asked (exit code 0; a tool result without
    /// `isError`).
    pub ok: bool,
    /// The core's result, when there was one (a guard that is not guarded has one too).
    pub result: Option<Value>,
    /// The error report (`kind`, `message`, `candidates`), when the front reported one.
    pub error: Option<Value>,
    /// Everything the front showed: stdout and stderr, or the text blocks of the tool result.
    pub text: String,
}

impl Answer {
    /// A CLI run: `stdout` is the `--json` document when the run asked for one.
    pub fn from_cli(args: Vec<String>, code: i32, stdout: String, stderr: String) -> Answer {
        let doc: Option<Value> = if args.iter().any(|a| a == "--json") {
            Some(serde_json::from_str(&stdout).unwrap_or_else(|e| {
                panic!(
                    "`rewind {}` printed no single JSON document on stdout ({e}); stdout: {stdout:?}; stderr: {stderr:?}",
                    args.join(" ")
                )
            }))
        } else {
            None
        };
        if let Some(doc) = &doc {
            assert_eq!(
                doc["exit_code"], code,
                "the JSON envelope's exit_code is the process's: {doc}"
            );
            assert_eq!(doc["ok"], code == 0, "ok is exit_code == 0: {doc}");
        }
        Answer {
            ok: code == 0,
            result: doc.as_ref().and_then(|d| d.get("result").cloned()),
            error: doc.as_ref().and_then(|d| d.get("error").cloned()),
            text: format!("{stdout}{stderr}"),
            front: Front::Cli { args, code },
        }
    }

    /// An MCP tool result: a failure's structured content is the error report, unless it is a
    /// result of its own (a guard that is not guarded carries its report).
    pub fn from_mcp(tool: &str, is_error: bool, structured: Option<Value>, text: String) -> Answer {
        let (result, error) = match (is_error, structured) {
            (false, s) => (s, None),
            (true, Some(s)) if s.get("kind").is_some() && s.get("message").is_some() => {
                (None, Some(s))
            }
            (true, s) => {
                let message = text.lines().next().unwrap_or_default().to_string();
                (
                    s,
                    Some(serde_json::json!({"kind": "tool_error", "message": message})),
                )
            }
        };
        Answer {
            front: Front::Mcp {
                tool: tool.to_string(),
            },
            ok: !is_error,
            result,
            error,
            text,
        }
    }

    /// The exit code, for a CLI answer.
    pub fn exit_code(&self) -> Option<i32> {
        match &self.front {
            Front::Cli { code, .. } => Some(*code),
            Front::Mcp { .. } => None,
        }
    }

    /// The result, or a failure that shows the whole answer.
    #[track_caller]
    pub fn result(&self) -> &Value {
        self.result
            .as_ref()
            .unwrap_or_else(|| panic!("the answer has no result: {self:#?}"))
    }

    /// The error's message, or a failure that shows the whole answer.
    #[track_caller]
    pub fn error_message(&self) -> String {
        self.error
            .as_ref()
            .and_then(|e| e["message"].as_str())
            .unwrap_or_else(|| panic!("the answer has no error message: {self:#?}"))
            .to_string()
    }

    /// One VPG's part of a guard (or tags) result, by VPG name.
    #[track_caller]
    pub fn vpg(&self, name: &str) -> &Value {
        self.result()["vpgs"]
            .as_array()
            .and_then(|vs| vs.iter().find(|v| v["vpg_name"] == name))
            .unwrap_or_else(|| panic!("no VPG {name} in the answer: {self:#?}"))
    }
}
