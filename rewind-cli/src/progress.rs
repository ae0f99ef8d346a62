//! The live progress line on stderr while rewind waits: for each VPG, its task, the task's state and
//! progress, and the time so far; before any task, once an exchange with a ZVM has taken a second,
//! which site it waits for, for what and since when. Drawn by indicatif from the core's
//! [`ProgressSink`] updates and [`Rewind::waiting`], and silent when stderr is not a terminal (a
//! script or a log file gets only the result).

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex, Once};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use rewind_core::zvm::SLOW_EXCHANGE;
use rewind_core::{ProgressSink, Rewind, Stage, TaskProgress, Waiting};

/// How often the line is redrawn between updates, so the time so far keeps counting while the core
/// waits between two polls of a task.
const TICK: Duration = Duration::from_millis(250);

/// The latest update of each VPG, with when it came. A std mutex: held only while one update is
/// stored or one line is formatted.
type Latest = Arc<Mutex<BTreeMap<String, (TaskProgress, Instant)>>>;

/// Where the exchanges under way are read from, once the line watches a [`Rewind`].
type Waits = Arc<Mutex<Option<Rewind>>>;

/// The progress line of one operation.
pub struct ProgressLine {
    /// Draws the line on stderr, and redraws it every [`TICK`] once the first update came. Its draw
    /// target is hidden when stderr is not a terminal, or when asked to be quiet.
    bar: ProgressBar,
    /// What the updates store and the bar's template reads on every draw.
    latest: Latest,
    /// The steady tick starts with the first update (or the first slow exchange), so no empty
    /// line is ever drawn.
    ticking: Arc<Once>,
    /// The facade whose exchanges under way the line names before any task runs.
    waits: Waits,
    /// Starts the tick once an exchange has been waited on for a second.
    watcher: Option<tokio::task::JoinHandle<()>>,
}

impl fmt::Debug for ProgressLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProgressLine")
            .field("hidden", &self.bar.is_hidden())
            .field("latest", &self.latest)
            .finish_non_exhaustive()
    }
}

impl ProgressLine {
    /// A progress line labelled `label`, drawn only if stderr is a terminal and `quiet` is false.
    pub fn new(label: impl Into<String>, quiet: bool) -> ProgressLine {
        let label = label.into();
        let latest = Latest::default();
        let waits = Waits::default();
        let target = if quiet {
            ProgressDrawTarget::hidden()
        } else {
            ProgressDrawTarget::stderr()
        };
        let line = {
            let (latest, waits) = (latest.clone(), waits.clone());
            move |state: &ProgressState, w: &mut dyn fmt::Write| {
                let _ = w.write_str(&current_line(&label, state.elapsed(), &latest, &waits));
            }
        };
        let style = ProgressStyle::with_template("{line}")
            .expect("the template names only the key added here")
            .with_key("line", line);
        ProgressLine {
            bar: ProgressBar::with_draw_target(None, target).with_style(style),
            latest,
            ticking: Arc::new(Once::new()),
            waits,
            watcher: None,
        }
    }

    /// The same line, naming what `rewind` waits for at the ZVMs once an exchange has taken a
    /// second and no task has begun. Call it within the command's runtime.
    pub fn watching(mut self, rewind: &Rewind) -> ProgressLine {
        if self.bar.is_hidden() {
            return self;
        }
        *self.waits.lock().unwrap_or_else(|p| p.into_inner()) = Some(rewind.clone());
        let (bar, ticking, rewind) = (self.bar.clone(), self.ticking.clone(), rewind.clone());
        self.watcher = Some(tokio::spawn(async move {
            loop {
                tokio::time::sleep(TICK).await;
                if rewind.waiting().iter().any(|w| w.since >= SLOW_EXCHANGE) {
                    ticking.call_once(|| bar.enable_steady_tick(TICK));
                    return;
                }
            }
        }));
        self
    }

    /// Stops redrawing and clears the line, so that what follows starts on a clean line.
    pub fn finish(&self) {
        if let Some(watcher) = &self.watcher {
            watcher.abort();
        }
        self.bar.finish_and_clear();
    }
}

impl Drop for ProgressLine {
    fn drop(&mut self) {
        self.finish();
    }
}

impl ProgressSink for ProgressLine {
    fn update(&self, progress: &TaskProgress) {
        if self.bar.is_hidden() || self.bar.is_finished() {
            return;
        }
        if let Ok(mut latest) = self.latest.lock() {
            latest.insert(
                progress.vpg_name.clone(),
                (progress.clone(), Instant::now()),
            );
        }
        self.ticking.call_once(|| self.bar.enable_steady_tick(TICK));
        self.bar.force_draw();
    }
}

/// The line from the latest updates, their times moved on to now, cut to the terminal's width less
/// one column (a line that fills the last column would wrap on some terminals). Before any update,
/// the exchanges under way.
fn current_line(label: &str, elapsed: Duration, latest: &Latest, waits: &Waits) -> String {
    let Ok(latest) = latest.lock() else {
        return String::new();
    };
    let width = usize::from(console::Term::stderr().size().1);
    if latest.is_empty() {
        let waiting = match &*waits.lock().unwrap_or_else(|p| p.into_inner()) {
            Some(rewind) => rewind.waiting(),
            None => Vec::new(),
        };
        return waiting_line(
            label,
            elapsed.as_millis() as u64,
            &waiting,
            width.saturating_sub(1),
        );
    }
    let now: Vec<TaskProgress> = latest
        .values()
        .map(|(p, at)| {
            let mut p = p.clone();
            if p.stage != Stage::Done {
                p.elapsed += at.elapsed();
            }
            p
        })
        .collect();
    render(
        label,
        elapsed.as_millis() as u64,
        now.iter(),
        width.saturating_sub(1),
    )
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

/// The line before any task: `find web-01 [1.2 s] waiting for boston: signing in (1.2 s)`.
fn waiting_line(label: &str, elapsed_ms: u64, waiting: &[Waiting], width: usize) -> String {
    let parts: Vec<String> = waiting.iter().map(ToString::to_string).collect();
    let line = match parts.is_empty() {
        true => format!(
            "{label} [{}]",
            rewind_core::progress::elapsed_text(elapsed_ms)
        ),
        false => format!(
            "{label} [{}] waiting for {}",
            rewind_core::progress::elapsed_text(elapsed_ms),
            parts.join(" | ")
        ),
    };
    cut(line, width)
}

/// `line` cut to `width` characters, an ellipsis at the cut.
fn cut(line: String, width: usize) -> String {
    if line.chars().count() > width && width > 1 {
        let mut cut: String = line.chars().take(width - 1).collect();
        cut.push('…');
        cut
    } else {
        line
    }
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
    cut(line, width)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn before_any_task_the_line_names_what_each_site_is_waited_for_and_since_when() {
        let waiting = [Waiting {
            site: "denver".into(),
            what: "signing in".into(),
            since: Duration::from_millis(1300),
        }];
        assert_eq!(
            waiting_line("find web-01", 1400, &waiting, 200),
            "find web-01 [1.4 s] waiting for denver: signing in (1.3 s)"
        );
        assert_eq!(
            waiting_line("find web-01", 200, &[], 200),
            "find web-01 [200 ms]"
        );
    }
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
