//! The live progress line on stderr while rewind waits on Zerto tasks: for each VPG, its task, the
//! task's state and progress, and the time so far. Drawn from the core's [`ProgressSink`] updates, and
//! silent when stderr is not a terminal (a script or a log file gets only the result).

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rewind_core::{ProgressSink, Stage, TaskProgress};

/// How often the line is redrawn between updates, so the time so far keeps counting while the core
/// waits between two polls of a task.
const TICK: Duration = Duration::from_millis(250);

/// The widest line drawn when the terminal does not say (`COLUMNS`).
const DEFAULT_WIDTH: usize = 100;

/// The progress line of one operation.
#[derive(Debug)]
pub struct ProgressLine {
    /// Off when stderr is not a terminal, or when asked to be quiet: then nothing below is used.
    enabled: bool,
    /// What the updates and the ticker share.
    shared: Arc<Shared>,
    /// The thread that redraws the line every [`TICK`], started by the first update.
    ticker: Mutex<Option<JoinHandle<()>>>,
}

#[derive(Debug)]
struct Shared {
    /// What is being waited for, e.g. `guard web-01`.
    label: String,
    /// The latest update of each VPG with when it came, whether a line is on screen, and whether
    /// the operation is over. A std mutex: held only while formatting and writing one short line.
    state: Mutex<LineState>,
    /// Wakes the ticker early when the operation is over.
    over: Condvar,
}

#[derive(Debug)]
struct LineState {
    began: Instant,
    vpgs: BTreeMap<String, (TaskProgress, Instant)>,
    drawn: bool,
    finished: bool,
}

impl Shared {
    /// Draws the line from the latest updates, their times moved on to now.
    fn draw(&self, state: &mut LineState) {
        if state.finished || state.vpgs.is_empty() {
            return;
        }
        let width = std::env::var("COLUMNS")
            .ok()
            .and_then(|c| c.parse::<usize>().ok())
            .unwrap_or(DEFAULT_WIDTH);
        let now: Vec<TaskProgress> = state
            .vpgs
            .values()
            .map(|(p, at)| {
                let mut p = p.clone();
                if p.stage != Stage::Done {
                    p.elapsed += at.elapsed();
                }
                p
            })
            .collect();
        let line = render(
            &self.label,
            state.began.elapsed().as_millis() as u64,
            now.iter(),
            width.saturating_sub(1),
        );
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[2K{line}");
        let _ = err.flush();
        state.drawn = true;
    }
}

impl ProgressLine {
    /// A progress line labelled `label`, drawn only if stderr is a terminal and `quiet` is false.
    pub fn new(label: impl Into<String>, quiet: bool) -> ProgressLine {
        ProgressLine {
            enabled: !quiet && std::io::stderr().is_terminal(),
            shared: Arc::new(Shared {
                label: label.into(),
                state: Mutex::new(LineState {
                    began: Instant::now(),
                    vpgs: BTreeMap::new(),
                    drawn: false,
                    finished: false,
                }),
                over: Condvar::new(),
            }),
            ticker: Mutex::new(None),
        }
    }

    /// Stops redrawing and clears the line, so that what follows starts on a clean line.
    pub fn finish(&self) {
        if let Ok(mut state) = self.shared.state.lock() {
            state.finished = true;
            if state.drawn {
                let mut err = std::io::stderr().lock();
                let _ = err.write_all(b"\r\x1b[2K");
                let _ = err.flush();
                state.drawn = false;
            }
        }
        self.shared.over.notify_all();
        if let Some(ticker) = self.ticker.lock().ok().and_then(|mut t| t.take()) {
            let _ = ticker.join();
        }
    }

    fn start_ticker(&self) {
        let Ok(mut ticker) = self.ticker.lock() else {
            return;
        };
        if ticker.is_some() {
            return;
        }
        let shared = self.shared.clone();
        *ticker = std::thread::Builder::new()
            .name("progress".into())
            .spawn(move || {
                let Ok(mut state) = shared.state.lock() else {
                    return;
                };
                while !state.finished {
                    state = match shared.over.wait_timeout(state, TICK) {
                        Ok((state, _)) => state,
                        Err(_) => return,
                    };
                    shared.draw(&mut state);
                }
            })
            .ok();
    }
}

impl Drop for ProgressLine {
    fn drop(&mut self) {
        self.finish();
    }
}

impl ProgressSink for ProgressLine {
    fn update(&self, progress: &TaskProgress) {
        if !self.enabled {
            return;
        }
        if let Ok(mut state) = self.shared.state.lock() {
            state.vpgs.insert(
                progress.vpg_name.clone(),
                (progress.clone(), Instant::now()),
            );
            self.shared.draw(&mut state);
        }
        self.start_ticker();
    }
}

/// One VPG's part of the line: `web-dr: task 1a2b3c4d InProgress 40% 1.2 s`.
fn vpg_part(p: &TaskProgress) -> String {
    let task = p
        .task_id
        .as_deref()
        .map(|t| format!(" task {}", t.chars().take(8).collect::<String>()))
        .unwrap_or_default();
    let what = match p.stage {
        Stage::Queued => "queued".to_string(),
        Stage::Inserting => "inserting".to_string(),
        Stage::Running => {
            let state = p
                .state
                .as_ref()
                .map_or_else(|| "running".to_string(), |s| s.name.clone());
            match p.progress {
                Some(pct) => format!("{state} {pct}%"),
                None => state,
            }
        }
        Stage::Listing => "Completed, waiting until listed".to_string(),
        Stage::Done => "done".to_string(),
    };
    format!(
        "{}:{task} {what} {}",
        p.vpg_name,
        rewind_core::progress::elapsed_text(p.elapsed.as_millis() as u64)
    )
}

/// The whole line, cut to `width` characters.
fn render<'a>(
    label: &str,
    elapsed_ms: u64,
    vpgs: impl Iterator<Item = &'a TaskProgress>,
    width: usize,
) -> String {
    let parts: Vec<String> = vpgs.map(vpg_part).collect();
    let line = format!(
        "{label} [{}] {}",
        rewind_core::progress::elapsed_text(elapsed_ms),
        parts.join(" | ")
    );
    if line.chars().count() > width && width > 1 {
        let mut cut: String = line.chars().take(width - 1).collect();
        cut.push('…');
        cut
    } else {
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rewind_core::Code;
    use std::time::Duration;

    fn update(vpg: &str, stage: Stage, progress: Option<u8>) -> TaskProgress {
        TaskProgress {
            site: "boston".into(),
            vpg_id: format!("id-{vpg}"),
            vpg_name: vpg.into(),
            task_id: Some("1a2b3c4d-5e6f".into()),
            task_type: "InsertTaggedCP".into(),
            stage,
            state: Some(Code::task_state(1)),
            progress,
            elapsed: Duration::from_millis(1200),
        }
    }

    #[test]
    fn the_line_names_each_vpgs_task_state_progress_and_time() {
        let a = update("web-local", Stage::Running, Some(40));
        let b = update("web-dr", Stage::Listing, None);
        let line = render("guard web-01", 1500, [&a, &b].into_iter(), 200);
        assert_eq!(
            line,
            "guard web-01 [1.5 s] web-local: task 1a2b3c4d InProgress 40% 1.2 s | web-dr: task 1a2b3c4d Completed, waiting until listed 1.2 s"
        );
    }

    #[test]
    fn a_long_line_is_cut_to_the_width() {
        let a = update("web-local", Stage::Running, Some(40));
        let line = render("guard web-01", 1500, [&a].into_iter(), 20);
        assert_eq!(line.chars().count(), 20);
        assert!(line.ends_with('…'));
    }
}
