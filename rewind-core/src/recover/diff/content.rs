//! `content`: the changed files downloaded from both checkpoints and compared, a unified diff of
//! text, within the size cap. Only changed files are downloaded, and only those the ZVM lists as no
//! larger than the cap (a file whose size is not listed is downloaded up to the cap).

use tokio_util::sync::CancellationToken;

use super::report::{Content, DiffEntry, DiffKind};
use crate::config::DiffSettings;
use crate::error::RewindError;
use crate::recover::session::{FlrCalls, FlrMount};

/// One version of a changed file: its bytes, or `None` when larger than the cap.
pub(super) type Version = (String, Option<Vec<u8>>);

/// The changed files of `entries` that fit the cap, read from the mounted `session`.
pub(super) async fn read_changed(
    flr: &FlrMount<'_>,
    session: &str,
    entries: &[DiffEntry],
    settings: &DiffSettings,
    stop: &CancellationToken,
    calls: &mut FlrCalls,
) -> Result<Vec<Version>, RewindError> {
    let cap = settings.content_max_bytes;
    let mut read = Vec::new();
    for e in entries.iter().filter(|e| compared(e, cap)) {
        if stop.is_cancelled() {
            return Err(super::walk::interrupted(&e.path));
        }
        let bytes = flr
            .download_small(session, &e.path, cap as u64, calls)
            .await?;
        read.push((e.path.clone(), bytes));
    }
    Ok(read)
}

/// Whether the content of `e` is compared: a changed file whose listed sizes fit `cap`.
fn compared(e: &DiffEntry, cap: usize) -> bool {
    let fits = |s: &Option<super::report::FileState>| {
        s.as_ref()
            .is_some_and(|s| s.size.is_none_or(|n| n <= cap as u64))
    };
    e.kind == DiffKind::Changed && !e.folder && fits(&e.before) && fits(&e.after)
}

/// Sets the content of each changed file of `entries` from its two versions.
pub(super) fn compare_contents(
    entries: &mut [DiffEntry],
    before: Vec<Version>,
    after: Vec<Version>,
    settings: &DiffSettings,
) {
    let cap = settings.content_max_bytes;
    for e in entries
        .iter_mut()
        .filter(|e| e.kind == DiffKind::Changed && !e.folder)
    {
        let find = |versions: &[Version]| {
            versions
                .iter()
                .find(|(p, _)| *p == e.path)
                .map(|(_, b)| b.clone())
        };
        e.content = Some(match (find(&before), find(&after)) {
            (Some(Some(b)), Some(Some(a))) => of(&e.path, &b, &a),
            _ => Content::TooLarge { cap },
        });
    }
}

/// The content of a file whose versions are `before` and `after`.
fn of(path: &str, before: &[u8], after: &[u8]) -> Content {
    match (text(before), text(after)) {
        (Some(b), Some(a)) => Content::Text {
            unified: similar::TextDiff::from_lines(b, a)
                .unified_diff()
                .context_radius(3)
                .header(&format!("{path} (tag)"), &format!("{path} (later)"))
                .to_string(),
        },
        _ => Content::Binary,
    }
}

/// `bytes` as text, when they are: UTF-8 without a NUL byte.
fn text(bytes: &[u8]) -> Option<&str> {
    match bytes.contains(&0) {
        true => None,
        false => std::str::from_utf8(bytes).ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_versions_give_a_unified_diff_and_others_are_binary() {
        let Content::Text { unified } =
            of("sda1/a.conf", b"port=80\nname=a\n", b"port=81\nname=a\n")
        else {
            panic!("text");
        };
        assert!(unified.contains("--- sda1/a.conf (tag)"), "{unified}");
        assert!(unified.contains("-port=80\n+port=81\n"), "{unified}");
        assert_eq!(of("x", b"a\0b", b"a"), Content::Binary);
        assert_eq!(of("x", &[0xff, 0xfe], b"a"), Content::Binary);
    }
}
