//! Writing recovered files into the destination folder without ever leaving it.
//!
//! A guest path (`sda1/etc/app/app.conf`, `C:/ProgramData/App/app.ini`) is checked before anything is
//! sent: it is partition-rooted and `/`-separated, never absolute, never holds `..`, `.`, an empty
//! segment, a backslash or a control character. It lands in the destination under the same path, the
//! partition becoming the first folder (`C:` becomes `C`, so that no local path is ever read as a
//! drive): `<destination>/sda1/etc/app/app.conf`, `<destination>/C/ProgramData/App/app.ini`. Mirroring
//! the whole guest path keeps two files of the same name from different folders apart.
//!
//! Every folder between the destination and the file must be a real folder, not a symbolic link (it is
//! created when missing, one level at a time, and checked again after); the file itself must not be a
//! symbolic link or a folder, and must not exist unless overwriting was asked for. Bytes are written to
//! a temporary file beside the target (tempfile's, 0600) and moved into place only when complete:
//! without overwrite the move is tempfile's `persist_noclobber`, a rename that refuses to replace (or a
//! hard link), which fails atomically when the target appeared meanwhile; with overwrite it is a
//! rename, which replaces the old file whole.
//!
//! A folder downloads as a zip archive, which is unpacked under the same rules: every entry is mapped to
//! a guest path under the folder and checked (no `..`, no absolute name, no symbolic link entry, no
//! existing file without overwrite, no file where another entry needs a folder) before the first byte
//! of any entry is written, so an archive with one bad entry writes nothing.

use std::collections::HashSet;
use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};

use serde::Serialize;
use sha2::{Digest, Sha256};
use tempfile::{NamedTempFile, TempPath};
use tokio::io::AsyncWriteExt;

use crate::error::RewindError;

/// The longest guest path accepted.
pub const MAX_GUEST_PATH: usize = 4096;

/// A checked guest path: partition-rooted, `/`-separated, with no `..`, `.` or empty segment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(transparent)]
pub struct GuestPath {
    text: String,
    #[serde(skip)]
    segments: Vec<String>,
}

impl std::fmt::Display for GuestPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

fn unsafe_path(path: &str, problem: impl Into<String>) -> RewindError {
    RewindError::UnsafePath {
        path: path.to_string(),
        problem: problem.into(),
    }
}

const EXAMPLES: &str = "sda1/etc/app/app.conf or C:/ProgramData/App/app.ini";

impl GuestPath {
    /// Checks a guest path as given by a user. A trailing `/` is allowed (a folder); a whole
    /// partition is not (nothing recovers one).
    pub fn parse(path: &str) -> Result<GuestPath, RewindError> {
        Self::checked(path, false)
    }

    /// [`GuestPath::parse`], where a whole partition is allowed: what a diff compares.
    pub fn parse_to_compare(path: &str) -> Result<GuestPath, RewindError> {
        Self::checked(path, true)
    }

    fn checked(path: &str, partition: bool) -> Result<GuestPath, RewindError> {
        if path.trim().is_empty() {
            return Err(unsafe_path(
                path,
                format!("the guest path is empty; give a partition-rooted path such as {EXAMPLES}"),
            ));
        }
        if path.chars().count() > MAX_GUEST_PATH {
            return Err(unsafe_path(
                path,
                format!("the guest path is longer than {MAX_GUEST_PATH} characters"),
            ));
        }
        if path.starts_with('/') {
            return Err(unsafe_path(
                path,
                format!(
                    "it is an absolute path; guest paths are partition-rooted, their first segment the partition as FLR lists it: {EXAMPLES}"
                ),
            ));
        }
        let path = path.strip_suffix('/').unwrap_or(path);
        let segments = Self::segments_of(path, true)?;
        if segments.len() < 2 && !partition {
            return Err(unsafe_path(
                path,
                format!(
                    "it names a whole partition; give a file or a folder inside it, such as {EXAMPLES}"
                ),
            ));
        }
        Ok(GuestPath {
            text: segments.join("/"),
            segments,
        })
    }

    /// Checks the segments of a relative `/`-separated path: a guest path (its first segment the
    /// partition), or a path below a guest folder (an archive entry's name).
    fn segments_of(path: &str, rooted: bool) -> Result<Vec<String>, RewindError> {
        if path.chars().any(char::is_control) {
            return Err(unsafe_path(
                path,
                "it contains a control character; give the path on one line",
            ));
        }
        if path.contains('\\') {
            return Err(unsafe_path(
                path,
                format!("it contains a backslash; separate guest folders with `/`: {EXAMPLES}"),
            ));
        }
        let mut segments = Vec::new();
        for (i, s) in path.split('/').enumerate() {
            match s {
                "" => {
                    return Err(unsafe_path(
                        path,
                        "it has an empty segment (`//`, or a leading `/`); give each folder once",
                    ));
                }
                "." | ".." => {
                    return Err(unsafe_path(
                        path,
                        format!(
                            "it contains `{s}`, which could leave the destination folder; give the path without it"
                        ),
                    ));
                }
                // On a Windows host a `:` after the first segment would name an alternate data stream.
                s if cfg!(windows) && (i > 0 || !rooted) && s.contains(':') => {
                    return Err(unsafe_path(
                        path,
                        "a `:` after the partition cannot be written on this host",
                    ));
                }
                s => segments.push(s.to_string()),
            }
        }
        Ok(segments)
    }

    /// The path, normalized (no trailing `/`).
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The segments, partition first.
    pub fn segments(&self) -> &[String] {
        &self.segments
    }

    /// The last segment.
    pub fn name(&self) -> &str {
        self.segments.last().map(String::as_str).unwrap_or_default()
    }

    /// The folder holding it (`sda1/etc/app` for `sda1/etc/app/app.conf`; the partition `sda1` for
    /// `sda1/etc`).
    pub fn parent(&self) -> String {
        self.segments[..self.segments.len() - 1].join("/")
    }

    /// A Windows guest path (its partition is a drive such as `C:`): compared case-insensitively.
    pub fn is_windows(&self) -> bool {
        self.segments[0].ends_with(':')
    }

    /// Whether `other` is this path or lies under it.
    pub fn contains(&self, other: &GuestPath) -> bool {
        let same = |a: &str, b: &str| {
            if self.is_windows() || other.is_windows() {
                a.eq_ignore_ascii_case(b)
            } else {
                a == b
            }
        };
        other.segments.len() >= self.segments.len()
            && self
                .segments
                .iter()
                .zip(&other.segments)
                .all(|(a, b)| same(a, b))
    }

    /// This path with a relative, checked `/`-separated path below it.
    fn join(&self, relative: &str) -> Result<GuestPath, RewindError> {
        let below = Self::segments_of(relative, false)?;
        let mut segments = self.segments.clone();
        segments.extend(below);
        Ok(GuestPath {
            text: segments.join("/"),
            segments,
        })
    }

    /// The path relative to the destination folder.
    fn local(&self) -> PathBuf {
        let mut out = PathBuf::new();
        for (i, s) in self.segments.iter().enumerate() {
            let s = if i == 0 { s.trim_end_matches(':') } else { s };
            out.push(s);
        }
        out
    }
}

/// Checks a list of guest paths: each valid, none given twice, none inside another.
pub fn parse_paths(paths: &[String]) -> Result<Vec<GuestPath>, RewindError> {
    parse_paths_with(paths, GuestPath::parse)
}

/// [`parse_paths`] with each path checked by `parse`.
pub(super) fn parse_paths_with(
    paths: &[String],
    parse: fn(&str) -> Result<GuestPath, RewindError>,
) -> Result<Vec<GuestPath>, RewindError> {
    if paths.is_empty() {
        return Err(RewindError::InvalidInput {
            field: "paths",
            problem: format!("no guest path was given; give at least one, such as {EXAMPLES}"),
        });
    }
    let parsed = paths
        .iter()
        .map(|p| parse(p))
        .collect::<Result<Vec<_>, _>>()?;
    for (i, a) in parsed.iter().enumerate() {
        for b in &parsed[i + 1..] {
            if a.contains(b) || b.contains(a) {
                return Err(RewindError::InvalidInput {
                    field: "paths",
                    problem: format!(
                        "{a} and {b} overlap (one is, or is inside, the other); give each file or folder once"
                    ),
                });
            }
        }
    }
    Ok(parsed)
}

/// One file written into the destination folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct RecoveredFile {
    /// The guest path it was recovered from.
    pub guest_path: String,
    /// Where it was written.
    pub path: PathBuf,
    /// Its size in bytes.
    pub size: u64,
    /// The SHA-256 of its bytes, lowercase hex.
    pub sha256: String,
    /// An existing file was replaced (only when overwriting was asked for).
    pub replaced: bool,
    /// The folder asked for, when this file came out of a folder's archive.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub folder: Option<String>,
}

impl RecoveredFile {
    /// The record of a file written at `path` from `guest`, its bytes hashed by `hasher`.
    fn written(
        guest: &GuestPath,
        path: PathBuf,
        size: u64,
        hasher: Sha256,
        replaced: bool,
        folder: Option<String>,
    ) -> RecoveredFile {
        RecoveredFile {
            guest_path: guest.as_str().to_string(),
            path,
            size,
            sha256: hex::encode(hasher.finalize()),
            replaced,
            folder,
        }
    }
}

/// The destination folder: every write stays inside it.
#[derive(Debug, Clone)]
pub struct Destination {
    root: PathBuf,
    overwrite: bool,
}

fn local_error(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> RewindError {
    let path = path.to_path_buf();
    move |source| RewindError::LocalFile {
        action,
        path,
        source,
    }
}

impl Destination {
    /// Checks the destination folder. It is resolved now (its nearest existing ancestor is resolved,
    /// the rest must be plain names) and created only when the first file is written, so a recovery
    /// refused before then leaves nothing behind.
    pub fn open(path: &Path, overwrite: bool) -> Result<Destination, RewindError> {
        if path.as_os_str().is_empty() {
            return Err(RewindError::InvalidInput {
                field: "destination",
                problem: "it is empty; give the folder to write the recovered files into".into(),
            });
        }
        let absolute =
            std::path::absolute(path).map_err(local_error("resolve the folder", path))?;
        let mut existing = absolute.as_path();
        let mut missing = Vec::new();
        while std::fs::symlink_metadata(existing).is_err() {
            let (Some(parent), Some(name)) = (existing.parent(), existing.file_name()) else {
                break;
            };
            missing.push(name.to_os_string());
            existing = parent;
        }
        // What exists is resolved once: where it points is where everything goes, and every
        // component below it is then checked to be a real folder.
        let mut root = existing
            .canonicalize()
            .map_err(local_error("resolve the folder", existing))?;
        if !root.is_dir() {
            return Err(unsafe_path(
                &path.display().to_string(),
                format!(
                    "{} is not a folder; give a folder as the destination",
                    existing.display()
                ),
            ));
        }
        for name in missing.into_iter().rev() {
            if !matches!(
                Path::new(&name).components().next(),
                Some(Component::Normal(_))
            ) {
                return Err(unsafe_path(
                    &path.display().to_string(),
                    "the part of the destination that does not exist yet must be plain folder names",
                ));
            }
            root.push(name);
        }
        Ok(Destination { root, overwrite })
    }

    /// Creates the destination folder when it does not exist yet.
    fn make_root(&self) -> Result<(), RewindError> {
        std::fs::create_dir_all(&self.root).map_err(local_error("create the folder", &self.root))
    }

    /// The destination folder, resolved.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where `guest` lands, after checking that nothing on the way is a symbolic link and that the file
    /// may be written (it does not exist, or overwriting was asked for). Returns the target and whether
    /// it exists.
    pub fn check(&self, guest: &GuestPath) -> Result<(PathBuf, bool), RewindError> {
        self.check_as(guest, false)
    }

    /// [`Destination::check`] before it is known whether `guest` is a file or a folder: an existing
    /// local folder in its place is then allowed (a folder's files are checked one by one later).
    pub fn precheck(&self, guest: &GuestPath) -> Result<(), RewindError> {
        self.check_as(guest, true).map(|_| ())
    }

    fn check_as(&self, guest: &GuestPath, folder_ok: bool) -> Result<(PathBuf, bool), RewindError> {
        let relative = guest.local();
        // Each segment was checked as a plain name; this keeps any future change to that check from
        // letting a root, prefix or `..` through.
        if !relative
            .components()
            .all(|c| matches!(c, Component::Normal(_)))
        {
            return Err(unsafe_path(
                guest.as_str(),
                "it does not map to a plain path inside the destination",
            ));
        }
        let target = self.root.join(&relative);
        let mut at = self.root.clone();
        let parts: Vec<_> = relative.components().collect();
        for (i, c) in parts.iter().enumerate() {
            at.push(c);
            let last = i + 1 == parts.len();
            match std::fs::symlink_metadata(&at) {
                Ok(m) if m.file_type().is_symlink() => {
                    return Err(unsafe_path(
                        &at.display().to_string(),
                        format!(
                            "it is a symbolic link inside the destination; rewind never writes through one; remove it or choose another destination (recovering {guest})"
                        ),
                    ));
                }
                Ok(m) if !last && !m.is_dir() => {
                    return Err(unsafe_path(
                        &at.display().to_string(),
                        format!(
                            "it is a file where {guest} needs a folder; move it or choose another destination"
                        ),
                    ));
                }
                Ok(m) if last && m.is_dir() && folder_ok => return Ok((target, false)),
                Ok(m) if last && m.is_dir() => {
                    return Err(unsafe_path(
                        &at.display().to_string(),
                        format!(
                            "it is a folder where the file {guest} would go; move it or choose another destination"
                        ),
                    ));
                }
                Ok(_) if last => {
                    if !self.overwrite {
                        return Err(unsafe_path(
                            &at.display().to_string(),
                            format!(
                                "the file exists and overwriting was not asked for: choose another (empty) destination, or move the file away; only a person replaces files, with `rewind recover file --overwrite` (recovering {guest})"
                            ),
                        ));
                    }
                    return Ok((target, true));
                }
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((target, false)),
                Err(e) => return Err(local_error("inspect", &at)(e)),
            }
        }
        Ok((target, false))
    }

    /// Creates the folders between the destination and `target`, one level at a time, refusing any
    /// that is (or becomes) a symbolic link.
    fn make_parents(&self, target: &Path) -> Result<(), RewindError> {
        self.make_root()?;
        let parent = target.parent().unwrap_or(&self.root);
        let relative = parent.strip_prefix(&self.root).map_err(|_| {
            unsafe_path(
                &target.display().to_string(),
                "it is outside the destination",
            )
        })?;
        let mut at = self.root.clone();
        for c in relative.components() {
            at.push(c);
            match std::fs::create_dir(&at) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(local_error("create the folder", &at)(e)),
            }
            let m = std::fs::symlink_metadata(&at).map_err(local_error("inspect", &at))?;
            if m.file_type().is_symlink() || !m.is_dir() {
                return Err(unsafe_path(
                    &at.display().to_string(),
                    "it is not a real folder (a symbolic link or a file appeared); nothing was written through it",
                ));
            }
        }
        Ok(())
    }

    /// A fresh temporary file beside `target`, opened for writing: created 0600 by tempfile, and
    /// removed when dropped unless it was moved into place.
    fn temp_beside(&self, target: &Path) -> Result<NamedTempFile, RewindError> {
        let dir = target.parent().unwrap_or(&self.root);
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        tempfile::Builder::new()
            .prefix(&format!(".{name}.rewind-"))
            .suffix(".part")
            .rand_bytes(16)
            .tempfile_in(dir)
            .map_err(local_error("create a temporary file in", dir))
    }

    /// Moves a complete temporary file into place.
    fn place(&self, tmp: TempPath, target: &Path, guest: &GuestPath) -> Result<(), RewindError> {
        if self.overwrite {
            // Checked again right before: a symbolic link or folder that appeared is not replaced.
            if let Ok(m) = std::fs::symlink_metadata(target)
                && (m.file_type().is_symlink() || m.is_dir())
            {
                return Err(unsafe_path(
                    &target.display().to_string(),
                    format!(
                        "it became a symbolic link or folder while {guest} was downloaded; nothing was written"
                    ),
                ));
            }
            return tmp
                .persist(target)
                .map_err(|e| local_error("move into place", target)(e.error));
        }
        // A rename that refuses to replace (or a hard link where the kernel has none), which fails
        // atomically when the target appeared meanwhile.
        match tmp.persist_noclobber(target) {
            Ok(()) => Ok(()),
            Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => Err(unsafe_path(
                &target.display().to_string(),
                format!(
                    "the file appeared while {guest} was downloaded and overwriting was not asked for; nothing was replaced"
                ),
            )),
            // A file system with neither: check, then rename (a narrow window, said here).
            Err(e) => {
                if std::fs::symlink_metadata(target).is_ok() {
                    return Err(unsafe_path(
                        &target.display().to_string(),
                        format!(
                            "the file appeared while {guest} was downloaded and overwriting was not asked for"
                        ),
                    ));
                }
                e.path
                    .persist(target)
                    .map_err(|e| local_error("move into place", target)(e.error))
            }
        }
    }

    /// Writes the body of a download into the file for `guest`, hashing it on the way.
    pub async fn write_download(
        &self,
        guest: &GuestPath,
        mut body: reqwest::Response,
        describe_read_error: impl Fn(reqwest::Error) -> RewindError,
    ) -> Result<RecoveredFile, RewindError> {
        let (target, existed) = self.check(guest)?;
        self.make_parents(&target)?;
        let (file, tmp) = self.temp_beside(&target)?.into_parts();
        let mut file = tokio::fs::File::from_std(file);
        let mut hasher = Sha256::new();
        let mut size = 0u64;
        let written: Result<(), RewindError> = async {
            while let Some(chunk) = body.chunk().await.map_err(&describe_read_error)? {
                hasher.update(&chunk);
                size += chunk.len() as u64;
                file.write_all(&chunk)
                    .await
                    .map_err(local_error("write", &tmp))?;
            }
            file.flush().await.map_err(local_error("write", &tmp))?;
            file.sync_all().await.map_err(local_error("write", &tmp))?;
            Ok(())
        }
        .await;
        drop(file);
        written.and_then(|()| self.place(tmp, &target, guest))?;
        Ok(RecoveredFile::written(
            guest, target, size, hasher, existed, None,
        ))
    }

    /// Writes the body of a download into a temporary archive file in the destination folder, removed
    /// when the caller drops it after unpacking.
    pub async fn write_archive(
        &self,
        mut body: reqwest::Response,
        describe_read_error: impl Fn(reqwest::Error) -> RewindError,
    ) -> Result<TempPath, RewindError> {
        self.make_root()?;
        let (file, tmp) = self
            .temp_beside(&self.root.join("folder.zip"))?
            .into_parts();
        let mut file = tokio::fs::File::from_std(file);
        let written: Result<(), RewindError> = async {
            while let Some(chunk) = body.chunk().await.map_err(&describe_read_error)? {
                file.write_all(&chunk)
                    .await
                    .map_err(local_error("write", &tmp))?;
            }
            file.flush().await.map_err(local_error("write", &tmp))?;
            Ok(())
        }
        .await;
        drop(file);
        written.map(|()| tmp)
    }

    /// Unpacks the archive of the guest folder `folder` (a blocking call: run it off the async
    /// threads). Every entry is checked before any is written; each file is added to `written` as it
    /// is moved into place, so that one that failed midway (an entry that cannot be read, a full
    /// disk) still says which files it had written.
    pub fn unpack(
        &self,
        archive: &Path,
        folder: &GuestPath,
        written: &mut Vec<RecoveredFile>,
    ) -> Result<(), RewindError> {
        let file = std::fs::File::open(archive).map_err(local_error("open", archive))?;
        let mut zip = zip::ZipArchive::new(file).map_err(|e| bad_archive(folder, e))?;
        let plan = self.plan(&mut zip, folder)?;
        self.refuse_a_file_as_a_folder(&plan, folder)?;
        for planned in plan {
            let mut entry = zip
                .by_index(planned.index)
                .map_err(|e| bad_archive(folder, e))?;
            written.push(self.write_entry(&mut entry, planned, folder)?);
        }
        Ok(())
    }

    /// Where each file entry of the archive of `folder` goes, checked before any is written: no
    /// symbolic link, no unsafe name, no entry twice, no file the destination refuses.
    fn plan(
        &self,
        zip: &mut zip::ZipArchive<std::fs::File>,
        folder: &GuestPath,
    ) -> Result<Vec<Planned>, RewindError> {
        let mut plan: Vec<Planned> = Vec::new();
        for index in 0..zip.len() {
            let entry = zip
                .by_index_raw(index)
                .map_err(|e| bad_archive(folder, e))?;
            let name = entry
                .name()
                .map_err(|e| bad_archive(folder, e))?
                .into_owned();
            if entry.is_symlink() {
                return Err(unsafe_path(
                    &name,
                    format!(
                        "the archive of {folder} holds a symbolic link; rewind never creates one, so nothing of the folder was written"
                    ),
                ));
            }
            if entry.is_dir() {
                continue;
            }
            let guest = entry_guest_path(folder, &name).map_err(|e| match e {
                RewindError::UnsafePath { problem, .. } => unsafe_path(
                    &name,
                    format!(
                        "an entry of the archive of {folder} is unsafe ({problem}), so nothing of the folder was written"
                    ),
                ),
                other => other,
            })?;
            if plan.iter().any(|p| p.guest == guest) {
                return Err(unsafe_path(
                    &name,
                    format!(
                        "the archive of {folder} holds this entry twice; nothing of the folder was written"
                    ),
                ));
            }
            let (target, existed) = self.check(&guest)?;
            plan.push(Planned {
                index,
                guest,
                target,
                existed,
            });
        }
        Ok(plan)
    }

    /// A file where another entry needs a folder (`conf` and `conf/app.ini`) could only be found out
    /// midway, after some files were written: it is refused here, before any is.
    fn refuse_a_file_as_a_folder(
        &self,
        plan: &[Planned],
        folder: &GuestPath,
    ) -> Result<(), RewindError> {
        let files: HashSet<&Path> = plan.iter().map(|p| p.target.as_path()).collect();
        for p in plan {
            let mut above = p.target.parent();
            while let Some(dir) = above.filter(|d| *d != self.root) {
                if files.contains(dir) {
                    return Err(unsafe_path(
                        p.guest.as_str(),
                        format!(
                            "the archive of {folder} holds {} both as a file and as the folder of this entry; nothing of the folder was written",
                            dir.display()
                        ),
                    ));
                }
                above = dir.parent();
            }
        }
        Ok(())
    }

    /// Writes one planned entry beside its target, synced, then moves it into place.
    fn write_entry(
        &self,
        entry: &mut impl Read,
        planned: Planned,
        folder: &GuestPath,
    ) -> Result<RecoveredFile, RewindError> {
        let Planned {
            guest,
            target,
            existed,
            ..
        } = planned;
        self.make_parents(&target)?;
        let (mut file, tmp) = self.temp_beside(&target)?.into_parts();
        let mut hasher = Sha256::new();
        let mut size = 0u64;
        let mut buf = vec![0u8; 64 * 1024];
        let copied: Result<(), RewindError> = (|| {
            loop {
                let n = entry
                    .read(&mut buf)
                    .map_err(|e| bad_archive(folder, format!("entry {guest}: {e}")))?;
                if n == 0 {
                    break;
                }
                hasher.update(&buf[..n]);
                size += n as u64;
                file.write_all(&buf[..n])
                    .map_err(local_error("write", &tmp))?;
            }
            file.sync_all().map_err(local_error("write", &tmp))
        })();
        drop(file);
        copied.and_then(|()| self.place(tmp, &target, &guest))?;
        Ok(RecoveredFile::written(
            &guest,
            target,
            size,
            hasher,
            existed,
            Some(folder.as_str().to_string()),
        ))
    }
}

/// One file entry of a folder's archive, and where it goes.
struct Planned {
    /// Its index in the archive.
    index: usize,
    guest: GuestPath,
    target: PathBuf,
    /// Whether a file was there before (it is replaced: the destination allows it).
    existed: bool,
}

/// The error of an archive of `folder` that cannot be read.
fn bad_archive(folder: &GuestPath, detail: impl std::fmt::Display) -> RewindError {
    unsafe_path(
        folder.as_str(),
        format!("the ZVM's archive of this folder cannot be read: {detail}"),
    )
}

/// The guest path of an archive entry of `folder`: an entry named with the folder's full guest path
/// keeps it; any other name is relative to the folder. Either way it is checked like a guest path.
fn entry_guest_path(folder: &GuestPath, name: &str) -> Result<GuestPath, RewindError> {
    let prefix = format!("{}/", folder.as_str());
    let relative = if folder.is_windows() {
        name.get(..prefix.len())
            .filter(|p| p.eq_ignore_ascii_case(&prefix))
            .map(|_| &name[prefix.len()..])
    } else {
        name.strip_prefix(&prefix)
    }
    .unwrap_or(name);
    let drive = relative.split('/').next().is_some_and(|s| s.ends_with(':'));
    if relative.starts_with('/') || drive {
        return Err(unsafe_path(name, "it is an absolute name"));
    }
    folder.join(relative)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(path: &str) -> String {
        match GuestPath::parse(path) {
            Err(RewindError::UnsafePath { problem, .. }) => problem,
            other => panic!("{path:?} should be refused, got {other:?}"),
        }
    }

    #[test]
    fn guest_paths_are_partition_rooted_and_never_climb() {
        assert!(refused("/etc/passwd").contains("absolute"));
        assert!(refused("sda1/../../etc/passwd").contains(".."));
        assert!(refused("sda1/etc/./app").contains('.'));
        assert!(refused("sda1//etc").contains("empty segment"));
        assert!(refused(r"C:\Windows\win.ini").contains("backslash"));
        assert!(refused("sda1/etc\napp").contains("control character"));
        assert!(refused("sda1").contains("whole partition"));
        assert!(refused("").contains("empty"));
        let p = GuestPath::parse("sda1/var/www/html/").unwrap();
        assert_eq!(p.as_str(), "sda1/var/www/html");
        assert_eq!(p.parent(), "sda1/var/www");
        assert_eq!(p.name(), "html");
    }

    #[test]
    fn a_windows_drive_becomes_a_plain_folder_locally() {
        let p = GuestPath::parse("C:/ProgramData/App/app.ini").unwrap();
        assert!(p.is_windows());
        assert_eq!(p.local(), PathBuf::from("C/ProgramData/App/app.ini"));
        assert!(
            GuestPath::parse("c:/programdata")
                .unwrap()
                .contains(&GuestPath::parse("C:/ProgramData/App/app.ini").unwrap())
        );
    }

    #[test]
    fn overlapping_and_missing_paths_are_refused() {
        let err = parse_paths(&["sda1/etc".into(), "sda1/etc/hosts".into()]).unwrap_err();
        assert!(err.to_string().contains("overlap"), "{err}");
        assert!(parse_paths(&[]).is_err());
        assert!(parse_paths(&["sda1/etc/hosts".into(), "sda1/etc/hostname".into()]).is_ok());
    }

    #[test]
    fn a_missing_destination_is_resolved_now_and_created_only_when_written() {
        let dir = tempfile::tempdir().unwrap();
        let wanted = dir.path().join("a").join("b");
        let dest = Destination::open(&wanted, false).unwrap();
        assert_eq!(dest.root(), dir.path().canonicalize().unwrap().join("a/b"));
        assert!(!wanted.exists());
        std::fs::write(dir.path().join("file"), "x").unwrap();
        let err = Destination::open(&dir.path().join("file"), false).unwrap_err();
        assert!(err.to_string().contains("not a folder"), "{err}");
    }

    #[tokio::test]
    async fn an_existing_file_is_refused_unless_overwrite_and_symlinks_are_never_followed() {
        let dir = tempfile::tempdir().unwrap();
        let dest = Destination::open(dir.path(), false).unwrap();
        let guest = GuestPath::parse("sda1/etc/app/app.conf").unwrap();
        let (target, existed) = dest.check(&guest).unwrap();
        assert!(!existed);
        assert_eq!(target, dest.root().join("sda1/etc/app/app.conf"));
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::write(&target, "old").unwrap();
        assert!(
            dest.check(&guest)
                .unwrap_err()
                .to_string()
                .contains("exists")
        );
        let overwriting = Destination::open(dir.path(), true).unwrap();
        assert!(overwriting.check(&guest).unwrap().1);

        #[cfg(unix)]
        {
            let outside = tempfile::tempdir().unwrap();
            std::os::unix::fs::symlink(outside.path(), dest.root().join("sdb1")).unwrap();
            let err = overwriting
                .check(&GuestPath::parse("sdb1/data/orders.csv").unwrap())
                .unwrap_err();
            assert!(err.to_string().contains("symbolic link"), "{err}");
        }
    }

    fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut buf = std::io::Cursor::new(Vec::new());
        {
            let mut w = zip::ZipWriter::new(&mut buf);
            for (name, bytes) in entries {
                w.start_file(*name, zip::write::SimpleFileOptions::default())
                    .unwrap();
                w.write_all(bytes).unwrap();
            }
            w.finish().unwrap();
        }
        buf.into_inner()
    }

    /// What unpacking an archive as a guest folder into a destination that did not exist left.
    struct Unpacked {
        /// The temporary folder that holds the archive and the destination, `dest`.
        dir: tempfile::TempDir,
        dest: Destination,
        written: Vec<RecoveredFile>,
        result: Result<(), RewindError>,
    }

    /// Unpacks an archive of `bytes` as guest folder `folder`.
    fn unpacked(bytes: Vec<u8>, folder: &str) -> Unpacked {
        let dir = tempfile::tempdir().unwrap();
        let dest = Destination::open(&dir.path().join("dest"), false).unwrap();
        let archive = dir.path().join("a.zip");
        std::fs::write(&archive, bytes).unwrap();
        let mut written = Vec::new();
        let result = dest.unpack(&archive, &GuestPath::parse(folder).unwrap(), &mut written);
        Unpacked {
            dir,
            dest,
            written,
            result,
        }
    }

    /// Unpacks an archive of `entries` that must write nothing, not even the folder, and gives back
    /// the temporary folder it was unpacked in.
    fn unpacks_nothing(entries: &[(&str, &[u8])]) -> tempfile::TempDir {
        let unpacked = unpacked(zip_of(entries), "sdb1/data");
        let err = unpacked.result.unwrap_err();
        assert!(unpacked.written.is_empty());
        assert!(err.to_string().contains("nothing of the folder"), "{err}");
        assert!(
            !unpacked.dir.path().join("dest").exists(),
            "nothing was written, not even the folder"
        );
        unpacked.dir
    }

    #[test]
    fn a_folder_archive_unpacks_under_the_folder_with_sizes_and_hashes() {
        let archive = zip_of(&[
            ("sda1/var/www/html/index.html", b"<html>"),
            ("health.json", b"{}"),
        ]);
        let unpacked = unpacked(archive, "sda1/var/www/html");
        unpacked.result.unwrap();
        let files = &unpacked.written;
        assert_eq!(files.len(), 2);
        assert_eq!(files[0].guest_path, "sda1/var/www/html/index.html");
        assert_eq!(files[1].guest_path, "sda1/var/www/html/health.json");
        assert_eq!(
            std::fs::read(unpacked.dest.root().join("sda1/var/www/html/health.json")).unwrap(),
            b"{}"
        );
        assert_eq!(files[0].size, 6);
        assert_eq!(files[0].sha256, hex::encode(Sha256::digest(b"<html>")));
    }

    #[test]
    fn an_archive_that_fails_midway_says_which_files_it_had_written() {
        let mut buf = std::io::Cursor::new(Vec::new());
        {
            let mut w = zip::ZipWriter::new(&mut buf);
            let stored = zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Stored);
            for (name, bytes) in [
                ("a.txt", &b"first entry"[..]),
                ("b.txt", &b"second entry"[..]),
            ] {
                w.start_file(name, stored).unwrap();
                w.write_all(bytes).unwrap();
            }
            w.finish().unwrap();
        }
        // The second entry's bytes no longer match its checksum: it is found unreadable only while
        // it is copied, after the first was written.
        let mut bytes = buf.into_inner();
        let at = bytes
            .windows(12)
            .position(|w| w == b"second entry")
            .unwrap();
        bytes[at] = b'S';
        let unpacked = unpacked(bytes, "sdb1/data");
        let (err, written) = (unpacked.result.unwrap_err(), &unpacked.written);
        assert!(err.to_string().contains("cannot be read"), "{err}");
        assert_eq!(written.len(), 1, "{written:?}");
        assert_eq!(written[0].guest_path, "sdb1/data/a.txt");
        assert_eq!(std::fs::read(&written[0].path).unwrap(), b"first entry");
    }

    #[test]
    fn an_archive_with_one_climbing_entry_writes_nothing() {
        let dir = unpacks_nothing(&[("ok.txt", b"fine"), ("../../escaped.txt", b"bad")]);
        assert!(!dir.path().join("escaped.txt").exists());
    }

    #[test]
    fn an_archive_with_a_file_where_another_entry_needs_a_folder_writes_nothing() {
        unpacks_nothing(&[
            ("conf", b"a file"),
            ("conf/app.ini", b"needs conf a folder"),
        ]);
    }
}
