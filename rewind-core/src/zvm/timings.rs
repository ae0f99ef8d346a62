//! What a process learns of one site's timings (how long an insert runs, how long a Completed insert
//! takes to be listed), to place its polls well, and the small file that hands them to the next
//! process.
//!
//! The timings are the facade's, one per configured site, not the HTTP client's: they are policy for
//! the guard's waits, and a client is transport only.

use std::path::{Path, PathBuf};
use std::sync::Mutex as StdMutex;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use sha2::Digest;

/// An exponentially weighted average of a duration, the memory behind adaptive polling.
#[derive(Debug, Clone, Copy, Default)]
struct Ewma(Option<Duration>);

impl Ewma {
    fn observe(&mut self, d: Duration) {
        self.0 = Some(match self.0 {
            None => d,
            Some(old) => old.mul_f64(0.7) + d.mul_f64(0.3),
        });
    }
}

/// What was learnt so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Learnt {
    /// How long an insert task takes: its own duration by the ZVM's clock when the task gives its
    /// start and end, else from the POST to seeing it terminal.
    pub(crate) insert: Option<Duration>,
    /// How long a Completed insert takes to be listed.
    pub(crate) listing: Option<Duration>,
}

#[derive(Debug, Default)]
struct Averages {
    insert: Ewma,
    listing: Ewma,
}

/// One site's learnt timings; a std mutex because it is never held across an await.
#[derive(Debug)]
pub(crate) struct SiteTimings {
    /// The configured site.
    site: String,
    averages: StdMutex<Averages>,
    /// Where they are kept for the next process, with the site's URL that the file must name.
    kept: Option<(PathBuf, String)>,
    /// What was last written there, and when.
    written: StdMutex<Option<(Learnt, Instant)>>,
}

/// Learnt timings as kept on disk for the next process: per site, small, replaced whole.
#[derive(Debug, Serialize, Deserialize)]
struct KeptTimings {
    /// The site's URL, so a file of another site is not taken.
    url: String,
    /// When they were written.
    written: chrono::DateTime<chrono::Utc>,
    insert_ms: Option<u64>,
    listing_ms: Option<u64>,
}

/// How old kept timings may be and still be taken: an appliance's timings change with its load and
/// version, and a week-old figure is only a guess.
const KEPT_TIMINGS_MAX_AGE: chrono::Duration = chrono::Duration::days(7);

/// Kept timings are written again when one moved by more than this fraction of what was written,
/// or appeared, or when [`REWRITE_AFTER`] passed: 64 guards at once otherwise replace the file 128
/// times, on the runtime's threads, to say what it already says.
const MOVED: f64 = 0.05;
const REWRITE_AFTER: Duration = Duration::from_secs(60);

impl Learnt {
    /// Whether `self` says what `written` said, within [`MOVED`].
    fn as_written(&self, written: &Learnt) -> bool {
        let near = |now: Option<Duration>, then: Option<Duration>| match (now, then) {
            (Some(now), Some(then)) => {
                now.abs_diff(then).as_secs_f64() <= then.as_secs_f64() * MOVED
            }
            (None, None) => true,
            _ => false,
        };
        near(self.insert, written.insert) && near(self.listing, written.listing)
    }
}

impl SiteTimings {
    /// Nothing learnt, nothing kept: a test's.
    #[cfg(test)]
    pub(crate) fn new(site: &str) -> SiteTimings {
        SiteTimings {
            site: site.to_string(),
            averages: StdMutex::default(),
            kept: None,
            written: StdMutex::default(),
        }
    }

    /// Starting from the timings a process kept in `dir` for the site at `url` (when fresh and
    /// readable), and keeping what is learnt there: a fresh process polls as a long-lived one does.
    pub(crate) fn kept_in(site: &str, url: &str, dir: &Path) -> SiteTimings {
        let digest = sha2::Sha256::digest(url.as_bytes());
        let file = dir.join(format!("{}.json", &hex::encode(digest)[..16]));
        let kept = std::fs::read(&file)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<KeptTimings>(&bytes).ok())
            .filter(|k| k.url == url)
            .filter(|k| chrono::Utc::now() - k.written <= KEPT_TIMINGS_MAX_AGE);
        let mut averages = Averages::default();
        if let Some(kept) = kept {
            averages.insert = Ewma(kept.insert_ms.map(Duration::from_millis));
            averages.listing = Ewma(kept.listing_ms.map(Duration::from_millis));
        }
        SiteTimings {
            site: site.to_string(),
            averages: StdMutex::new(averages),
            kept: Some((file, url.to_string())),
            written: StdMutex::default(),
        }
    }

    /// What was learnt so far.
    pub(crate) fn learnt(&self) -> Learnt {
        let a = self.averages.lock().unwrap_or_else(|p| p.into_inner());
        Learnt {
            insert: a.insert.0,
            listing: a.listing.0,
        }
    }

    /// Remembers how long an insert task took.
    pub(crate) fn observe_insert(&self, took: Duration) {
        self.averages
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert
            .observe(took);
        self.keep();
    }

    /// Remembers how long a Completed insert took to be listed.
    pub(crate) fn observe_listing(&self, took: Duration) {
        self.averages
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .listing
            .observe(took);
        self.keep();
    }

    /// Writes what was learnt where the next process finds it; a failure only costs the next
    /// process some polls.
    fn keep(&self) {
        let Some((file, url)) = &self.kept else {
            return;
        };
        let learnt = self.learnt();
        {
            let mut written = self.written.lock().unwrap_or_else(|p| p.into_inner());
            if let Some((said, at)) = *written
                && learnt.as_written(&said)
                && at.elapsed() < REWRITE_AFTER
            {
                return;
            }
            *written = Some((learnt, Instant::now()));
        }
        let kept = KeptTimings {
            url: url.clone(),
            written: chrono::Utc::now(),
            insert_ms: learnt.insert.map(|d| d.as_millis() as u64),
            listing_ms: learnt.listing.map(|d| d.as_millis() as u64),
        };
        let written = (|| -> std::io::Result<()> {
            let dir = file.parent().unwrap_or(Path::new("."));
            crate::local_state::create_private_dir(dir)?;
            let mut temporary = tempfile::NamedTempFile::new_in(dir)?;
            serde_json::to_writer(&mut temporary, &kept)?;
            temporary.persist(file).map_err(|e| e.error)?;
            Ok(())
        })();
        if let Err(e) = written {
            tracing::debug!(
                "the learnt timings of site {} were not kept: {e}",
                self.site
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Timings of `url` kept in `dir`, as a new process makes them.
    fn keeping_in(dir: &Path, url: &str) -> SiteTimings {
        SiteTimings::kept_in("boston", url, dir)
    }

    const NOTHING: Learnt = Learnt {
        insert: None,
        listing: None,
    };

    #[test]
    fn a_new_client_starts_from_the_timings_an_earlier_one_kept_for_its_site() {
        let dir = tempfile::tempdir().unwrap();
        let url = "http://127.0.0.1:9/";
        let first = keeping_in(dir.path(), url);
        assert_eq!(first.learnt(), NOTHING, "nothing kept yet");
        first.observe_insert(Duration::from_secs(2));
        first.observe_listing(Duration::from_millis(500));
        let learnt = Learnt {
            insert: Some(Duration::from_secs(2)),
            listing: Some(Duration::from_millis(500)),
        };
        assert_eq!(keeping_in(dir.path(), url).learnt(), learnt);
        // Another site's client takes none of them.
        assert_eq!(
            keeping_in(dir.path(), "http://127.0.0.1:10/").learnt(),
            NOTHING
        );
    }

    #[test]
    fn the_kept_file_is_written_again_only_when_a_timing_moved() {
        let dir = tempfile::tempdir().unwrap();
        let timings = keeping_in(dir.path(), "http://127.0.0.1:9/");
        let files = || std::fs::read_dir(dir.path()).unwrap().count();
        // Removes the kept file, so that a write shows as a file again.
        let forget = || {
            let kept = std::fs::read_dir(dir.path()).unwrap().next().unwrap();
            std::fs::remove_file(kept.unwrap().path()).unwrap();
        };
        timings.observe_insert(Duration::from_secs(2));
        assert_eq!(files(), 1, "the first timing learnt is kept");
        forget();
        timings.observe_insert(Duration::from_millis(2_010));
        assert_eq!(
            files(),
            0,
            "a timing within 5 % of what was written is not written again"
        );
        timings.observe_listing(Duration::from_millis(500));
        assert_eq!(files(), 1, "a timing learnt for the first time is");
        forget();
        timings.observe_insert(Duration::from_secs(4));
        assert_eq!(files(), 1, "a timing that moved is");
    }

    #[test]
    fn kept_timings_that_are_stale_unreadable_or_another_sites_are_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let url = "http://127.0.0.1:9/";
        keeping_in(dir.path(), url).observe_insert(Duration::from_secs(2));
        let file = std::fs::read_dir(dir.path())
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        let kept: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        let write = |value: serde_json::Value| std::fs::write(&file, value.to_string()).unwrap();
        let mut stale = kept.clone();
        stale["written"] = serde_json::json!(chrono::Utc::now() - chrono::Duration::days(8));
        write(stale);
        assert_eq!(keeping_in(dir.path(), url).learnt(), NOTHING, "a week old");
        let mut other = kept.clone();
        other["url"] = serde_json::json!("http://127.0.0.1:10/");
        write(other);
        assert_eq!(
            keeping_in(dir.path(), url).learnt(),
            NOTHING,
            "another site's"
        );
        std::fs::write(&file, "{not json").unwrap();
        assert_eq!(keeping_in(dir.path(), url).learnt(), NOTHING, "unreadable");
        write(kept);
        assert_eq!(
            keeping_in(dir.path(), url).learnt().insert,
            Some(Duration::from_secs(2)),
            "as kept"
        );
    }
}
