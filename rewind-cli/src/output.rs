//! Everything the CLI prints, in one place: aligned tables for people, the one `--json` document per
//! command, and the one error line on stderr.
//!
//! The `--json` document is a small envelope around the core's own serialized result:
//!
//! ```json
//! {"command": "find", "ok": true, "exit_code": 0, "result": { ... }}
//! {"command": "find", "ok": false, "exit_code": 3, "error": {"kind": "refused", "message": "...", "candidates": [...]}}
//! {"command": "recover file", "ok": false, "exit_code": 3, "error": {"kind": "refused", "message": "...", "hint": "[sites.denver]\n..."}}
//! ```
//!
//! `ok` is `exit_code == 0`. `result` is there whenever the command produced one (a guard that is not
//! guarded has both `result` and `error`); `error` whenever `ok` is false.
//!
//! Stdout belongs to results. A reader that goes away (a broken pipe, as with `| head`) is not an error:
//! writing stops quietly and the exit code is the command's own.

use std::io::{ErrorKind as IoErrorKind, Write};

use rewind_core::{ErrorKind, ErrorReport};
use serde::Serialize;
use serde_json::value::RawValue;

use crate::exit::{self, CliError};

/// What a command produced.
#[derive(Debug)]
pub struct Reply {
    /// The result, serialized (the core's result type as it is, or a small CLI shape around it), kept
    /// as JSON text so its fields stay in the order the type declares them.
    pub result: Box<RawValue>,
    /// The same, for people.
    pub human: String,
    /// Set when the result itself says the operation did not do what was asked (a guard that is not
    /// guarded, an unknown tool, an unreachable site): the kind and one line for stderr.
    pub failure: Option<ErrorReport>,
}

impl Reply {
    /// A reply from a serializable result and its human form.
    pub fn new(result: &impl Serialize, human: String) -> Result<Reply, CliError> {
        Ok(Reply {
            result: to_raw(result)?,
            human,
            failure: None,
        })
    }

    /// Marks the reply as a failure of `kind`, explained by `message`.
    pub fn failed(mut self, kind: ErrorKind, message: impl Into<String>) -> Reply {
        self.failure = Some(ErrorReport::new(kind, message));
        self
    }
}

/// Serializes a result, pretty-printed and indented to sit under the envelope's `result` key (a JSON
/// string never holds a raw newline, so only the layout's newlines are indented). A failure here is a
/// bug, reported as internal.
fn to_raw(result: &impl Serialize) -> Result<Box<RawValue>, CliError> {
    let broken = |e: serde_json::Error| {
        CliError::new(
            ErrorKind::Internal,
            format!("cannot encode the result as JSON: {e}; please report this"),
        )
    };
    let text = serde_json::to_string_pretty(result).map_err(broken)?;
    RawValue::from_string(text.replace('\n', "\n  ")).map_err(broken)
}

/// The `--json` envelope.
#[derive(Debug, Serialize)]
struct Envelope<'a> {
    command: &'a str,
    ok: bool,
    exit_code: u8,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<&'a RawValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a ErrorReport>,
}

/// How to print.
#[derive(Debug, Clone, Copy)]
pub struct Printer {
    /// `--json`.
    pub json: bool,
}

impl Printer {
    /// Prints a command's reply and returns the exit code.
    pub fn reply(&self, command: &str, reply: &Reply) -> u8 {
        let code = reply
            .failure
            .as_ref()
            .map_or(exit::OK, |f| exit::code(f.kind));
        let printed = if self.json {
            write_json(&Envelope {
                command,
                ok: code == exit::OK,
                exit_code: code,
                result: Some(&reply.result),
                error: reply.failure.as_ref(),
            })
        } else {
            write_stdout(&reply.human)
        };
        if let Some(f) = &reply.failure {
            self.error_lines(f);
        }
        settle(printed, code)
    }

    /// Prints a command's error and returns the exit code.
    pub fn error(&self, command: &str, error: &CliError) -> u8 {
        let code = error.code();
        let printed = if self.json {
            write_json(&Envelope {
                command,
                ok: false,
                exit_code: code,
                result: None,
                error: Some(&error.0),
            })
        } else {
            Ok(())
        };
        self.error_lines(&error.0);
        settle(printed, code)
    }

    /// The error's one line on stderr, then, for people, its hint (a configuration block to add),
    /// indented under it. With `--json` the hint is in the document, and stderr keeps its one line.
    fn error_lines(&self, report: &ErrorReport) {
        error_line(&report.message);
        if let Some(hint) = report.hint.as_deref().filter(|_| !self.json) {
            for line in hint.lines() {
                eprintln!("  {line}");
            }
        }
    }
}

/// Turns the outcome of writing stdout into the exit code: a reader that went away changes nothing;
/// any other write error is reported once.
fn settle(printed: std::io::Result<()>, code: u8) -> u8 {
    match printed {
        Ok(()) => code,
        Err(e) if e.kind() == IoErrorKind::BrokenPipe => code,
        Err(e) => {
            error_line(&format!("cannot write to stdout: {e}"));
            if code == exit::OK {
                exit::INTERNAL
            } else {
                code
            }
        }
    }
}

/// Writes text to stdout, ending it with a newline.
pub fn write_stdout(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    if !text.ends_with('\n') {
        out.write_all(b"\n")?;
    }
    out.flush()
}

/// Writes one JSON document to stdout, pretty-printed, with a final newline.
pub fn write_json(value: &impl Serialize) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(value).map_err(std::io::Error::other)?;
    write_stdout(&text)
}

/// The one error line on stderr. The core's messages are one line ([`ErrorReport::new`] keeps them
/// so), and so are the CLI's own.
pub fn error_line(message: &str) {
    eprintln!("rewind: {message}");
}

/// A warning on stderr (the configuration's, such as TLS verification being off).
pub fn warning_line(message: &str) {
    eprintln!("rewind: warning: {message}");
}

/// An aligned table: a header and rows, columns separated by two spaces, the last column unpadded.
#[derive(Debug, Default)]
pub struct Table {
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with this header.
    pub fn new(header: &[&str]) -> Table {
        Table {
            rows: vec![header.iter().map(|h| h.to_string()).collect()],
        }
    }

    /// Adds a row.
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// The table as text, each line ending with a newline.
    pub fn render(&self) -> String {
        let columns = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        let width = |i: usize| {
            self.rows
                .iter()
                .filter_map(|r| r.get(i))
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0)
        };
        let widths: Vec<usize> = (0..columns).map(width).collect();
        let mut out = String::new();
        for row in &self.rows {
            let mut line = String::new();
            for (i, cell) in row.iter().enumerate() {
                if i + 1 == row.len() {
                    line.push_str(cell);
                } else {
                    line.push_str(cell);
                    let pad = widths[i] - cell.chars().count() + 2;
                    line.extend(std::iter::repeat_n(' ', pad));
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

/// Refuses an `--out` file that exists, before anything is read: `command` never writes over one.
pub fn refuse_existing(out: Option<&std::path::Path>, command: &str) -> Result<(), CliError> {
    match out.filter(|o| o.exists()) {
        Some(out) => Err(CliError::new(
            ErrorKind::Usage,
            format!(
                "{} exists; {command} never writes over a file: give another --out",
                out.display()
            ),
        )),
        None => Ok(()),
    }
}

/// Writes `text` to a new file `path`, whole (through a temporary file beside it, moved into place
/// only if nothing is there yet): what `capture` and `parity` write never replaces a file.
pub fn write_new_file(path: &std::path::Path, text: &str) -> Result<(), CliError> {
    let failed = |e: &dyn std::fmt::Display| {
        CliError::new(
            ErrorKind::Internal,
            format!("cannot write {}: {e}", path.display()),
        )
    };
    let folder = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or_else(|| std::path::Path::new("."));
    let mut temp = tempfile::NamedTempFile::new_in(folder).map_err(|e| failed(&e))?;
    std::io::Write::write_all(&mut temp, text.as_bytes()).map_err(|e| failed(&e))?;
    temp.persist_noclobber(path).map_err(|e| failed(&e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_columns_line_up_whatever_the_cell_widths() {
        let mut t = Table::new(&["VPG", "STATUS", "NOTE"]);
        t.row(vec![
            "web-local".into(),
            "MeetingSLA (1)".into(),
            "ok".into(),
        ]);
        t.row(vec!["dr".into(), "x".into(), "".into()]);
        let text = t.render();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "VPG        STATUS          NOTE");
        assert_eq!(lines[1], "web-local  MeetingSLA (1)  ok");
        assert_eq!(lines[2], "dr         x");
    }

    #[test]
    fn the_json_envelope_keeps_the_results_field_order_and_parses_back() {
        #[derive(Serialize)]
        struct R {
            verdict: &'static str,
            notes: Vec<&'static str>,
            a: u8,
        }
        let raw = to_raw(&R {
            verdict: "guarded",
            notes: vec!["line\nbreak"],
            a: 1,
        })
        .unwrap();
        let text = serde_json::to_string_pretty(&Envelope {
            command: "guard",
            ok: true,
            exit_code: 0,
            result: Some(&raw),
            error: None,
        })
        .unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["result"]["notes"][0], "line\nbreak");
        assert!(text.find("verdict").unwrap() < text.find("\"a\"").unwrap());
        assert!(text.contains("\n    \"verdict\""), "{text}");
    }
}
