//! `rewind diff`: what the agent changed, file by file, from the change's tag to now. The core
//! mounts both checkpoints in turn, walks and compares them, and always unmounts; this prints it.

use rewind_core::{CancellationToken, Content, DiffReport, DiffRequest, Rewind};

use crate::exit::CliError;
use crate::output::{Reply, Table};
use crate::progress::ProgressLine;

/// Runs `rewind diff`, narrowed to `vpg` when given.
pub async fn diff(
    rewind: &Rewind,
    req: DiffRequest,
    vpg: Option<&str>,
    stop: &CancellationToken,
    quiet: bool,
) -> Result<Reply, CliError> {
    let rewind = match vpg {
        Some(vpg) => rewind.only_vpg(vpg),
        None => rewind.clone(),
    };
    let progress = ProgressLine::new(format!("diff {}", req.vm), quiet).watching(&rewind);
    let report = rewind.diff(req, &progress, stop).await;
    progress.finish();
    let report = report?;
    Reply::new(&report, text(&report))
}

/// The headline, one row per path that differs, each content diff asked for, and the footer.
pub fn text(r: &DiffReport) -> String {
    let mut out = format!("{}\n", r.headline());
    if !r.entries.is_empty() {
        let mut t = Table::new(&["WHAT", "GUEST PATH", "AT THE TAG", "LATER"]);
        for e in &r.entries {
            let state = |s: &Option<rewind_core::FileState>| match (s, e.folder) {
                (None, _) => "-".to_string(),
                (Some(_), true) => "folder".to_string(),
                (Some(s), false) => s.text(),
            };
            t.row(vec![
                e.kind.word().to_string(),
                e.path.clone(),
                state(&e.before),
                state(&e.after),
            ]);
        }
        out.push('\n');
        out.push_str(&t.render());
    }
    for e in &r.entries {
        match &e.content {
            Some(Content::Text { unified }) => out.push_str(&format!("\n{unified}")),
            Some(Content::Binary) => out.push_str(&format!("\n{}: binary, not shown\n", e.path)),
            Some(Content::TooLarge { cap }) => out.push_str(&format!(
                "\n{}: larger than {cap} bytes ([diff] content_max_bytes), not compared\n",
                e.path
            )),
            None => {}
        }
    }
    out.push('\n');
    for line in r.footer() {
        out.push_str(&line);
        out.push('\n');
    }
    out
}
