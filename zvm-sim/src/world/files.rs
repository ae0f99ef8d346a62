//! Guest files: each VM's files with their history, so "the files as they were at checkpoint T" is a
//! lookup (FLR in part 2 reads them through the journal).
//!
//! Paths are partition-rooted and `/`-separated, as FLR browse shows them: the first segment is the
//! partition (`sda1`, `sdb1` on Linux; `C:`, `D:` on Windows). Linux paths are case-sensitive;
//! Windows paths are not (the spelling of the first write is kept).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use bytes::Bytes;

use super::clock::SimTime;
use super::spec::GuestOs;

/// The partitions of a guest, as FLR browse lists them.
pub fn partitions(os: GuestOs) -> &'static [&'static str] {
    match os {
        GuestOs::Linux => &["sda1", "sdb1"],
        GuestOs::Windows => &["C:", "D:"],
    }
}

/// A path that cannot name a file of this guest.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    /// Not partition-rooted, or malformed.
    #[error(
        "'{path}' is not a guest file path: use a partition-rooted, '/'-separated path such as \
         {example} (partitions: {partitions}); no '..', no empty segments, no backslashes"
    )]
    Malformed {
        /// The path given.
        path: String,
        /// An example for this guest.
        example: &'static str,
        /// The guest's partitions.
        partitions: String,
    },
    /// A folder where a file was expected, or the other way round.
    #[error("'{path}' is a folder on this guest; name a file inside it")]
    IsFolder {
        /// The path given.
        path: String,
    },
    /// A file where a folder was expected.
    #[error("'{path}' cannot be created: '{file}' is a file, not a folder")]
    UnderFile {
        /// The path given.
        path: String,
        /// The file in the way.
        file: String,
    },
}

/// One version of one file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Version {
    at: SimTime,
    /// `None`: the file was deleted at `at`.
    #[serde(with = "content")]
    content: Option<Bytes>,
}

/// File contents in saved state: `{"Text": "..."}` when they are UTF-8 (most guest files, and
/// readable), `{"Hex": "..."}` otherwise, `null` for a deletion.
mod content {
    use bytes::Bytes;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    enum Content {
        Text(String),
        Hex(String),
    }

    pub fn serialize<S: Serializer>(content: &Option<Bytes>, s: S) -> Result<S::Ok, S::Error> {
        content
            .as_ref()
            .map(|bytes| match std::str::from_utf8(bytes) {
                Ok(text) => Content::Text(text.to_owned()),
                Err(_) => Content::Hex(bytes.iter().map(|b| format!("{b:02x}")).collect()),
            })
            .serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Bytes>, D::Error> {
        match Option::<Content>::deserialize(d)? {
            None => Ok(None),
            Some(Content::Text(text)) => Ok(Some(Bytes::from(text))),
            Some(Content::Hex(hex)) => {
                let digits = hex.as_bytes();
                if digits.len() % 2 != 0 {
                    return Err(serde::de::Error::custom("Hex content has an odd length"));
                }
                digits
                    .chunks(2)
                    .map(|pair| {
                        std::str::from_utf8(pair)
                            .ok()
                            .and_then(|p| u8::from_str_radix(p, 16).ok())
                            .ok_or_else(|| serde::de::Error::custom("Hex content is not hex"))
                    })
                    .collect::<Result<Vec<u8>, _>>()
                    .map(|bytes| Some(Bytes::from(bytes)))
            }
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct History {
    /// The path as first written.
    path: String,
    /// Oldest first.
    versions: Vec<Version>,
}

impl History {
    fn at(&self, at: SimTime) -> Option<(&Bytes, SimTime)> {
        let version = self.versions.iter().rev().find(|v| v.at <= at)?;
        version
            .content
            .as_ref()
            .map(|content| (content, version.at))
    }

    /// When the file that exists at `at` was created: the first version after its last deletion.
    fn created_at(&self, at: SimTime) -> Option<SimTime> {
        let mut created = None;
        for version in self.versions.iter().take_while(|v| v.at <= at) {
            match (&version.content, created) {
                (None, _) => created = None,
                (Some(_), None) => created = Some(version.at),
                (Some(_), Some(_)) => {}
            }
        }
        created
    }
}

/// What a browse path names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    /// A partition (`sda1`, `C:`).
    Partition,
    /// A folder: a path that has files under it.
    Folder,
    /// A file.
    File,
}

/// One item of a guest's file system at some moment, as FLR browse shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// The partition-rooted path, spelled as the guest first wrote it.
    pub path: String,
    /// Partition, folder or file.
    pub kind: NodeKind,
    /// A file's size in bytes; `None` for partitions and folders.
    pub size: Option<u64>,
    /// When it was created (a folder or partition: its oldest file); `None` when empty.
    pub created: Option<SimTime>,
    /// When it was last written (a folder or partition: its newest file); `None` when empty.
    pub written: Option<SimTime>,
}

/// A file as it was at some moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileAt {
    /// Its path.
    pub path: String,
    /// Its content.
    pub content: Bytes,
    /// When that content was written.
    pub written: SimTime,
}

/// The files of one guest, with every version.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct GuestFiles {
    os: GuestOs,
    /// Keyed by the path as this guest compares paths (lowercase on Windows).
    files: BTreeMap<String, History>,
}

impl GuestFiles {
    /// A guest with no files.
    pub fn new(os: GuestOs) -> Self {
        Self {
            os,
            files: BTreeMap::new(),
        }
    }

    /// Checks a path and returns it as this guest compares paths.
    pub fn key(&self, path: &str) -> Result<String, PathError> {
        let malformed = || PathError::Malformed {
            path: path.to_owned(),
            example: match self.os {
                GuestOs::Linux => "sda1/etc/app/app.conf",
                GuestOs::Windows => "C:/ProgramData/App/app.ini",
            },
            partitions: partitions(self.os).join(", "),
        };
        let mut segments = path.split('/');
        let partition = segments.next().unwrap_or_default();
        let partition_ok = partitions(self.os).iter().any(|p| match self.os {
            GuestOs::Linux => *p == partition,
            GuestOs::Windows => p.eq_ignore_ascii_case(partition),
        });
        let rest: Vec<&str> = segments.collect();
        let rest_ok = !rest.is_empty()
            && rest
                .iter()
                .all(|s| !s.is_empty() && *s != "." && *s != ".." && !s.contains('\\'));
        if !partition_ok || !rest_ok || path.chars().any(char::is_control) {
            return Err(malformed());
        }
        Ok(match self.os {
            GuestOs::Linux => path.to_owned(),
            GuestOs::Windows => path.to_lowercase(),
        })
    }

    /// Writes (creates or replaces) a file at `at`.
    pub fn write(&mut self, path: &str, content: Bytes, at: SimTime) -> Result<(), PathError> {
        let key = self.key(path)?;
        let folder = format!("{key}/");
        if self.live_keys(at).any(|k| k.starts_with(&folder)) {
            return Err(PathError::IsFolder {
                path: path.to_owned(),
            });
        }
        if let Some(file) = self
            .live_keys(at)
            .find(|k| key.starts_with(&format!("{k}/")))
        {
            return Err(PathError::UnderFile {
                path: path.to_owned(),
                file: self.files[file].path.clone(),
            });
        }
        let history = self.files.entry(key).or_insert_with(|| History {
            path: path.to_owned(),
            versions: Vec::new(),
        });
        history.versions.push(Version {
            at,
            content: Some(content),
        });
        Ok(())
    }

    /// Deletes a file at `at`. Returns whether it existed.
    pub fn delete(&mut self, path: &str, at: SimTime) -> Result<bool, PathError> {
        let key = self.key(path)?;
        let Some(history) = self.files.get_mut(&key) else {
            return Ok(false);
        };
        if history.at(at).is_none() {
            return Ok(false);
        }
        history.versions.push(Version { at, content: None });
        Ok(true)
    }

    /// The file at `path` as it was at `at`, if it existed then.
    pub fn read_at(&self, path: &str, at: SimTime) -> Result<Option<FileAt>, PathError> {
        let key = self.key(path)?;
        Ok(self.files.get(&key).and_then(|history| {
            history.at(at).map(|(content, written)| FileAt {
                path: history.path.clone(),
                content: content.clone(),
                written,
            })
        }))
    }

    /// A new guest holding this guest's files as they were at `at`, each written at `written`
    /// (a clone made from a checkpoint).
    pub fn copy_at(&self, at: SimTime, written: SimTime) -> GuestFiles {
        let mut copy = GuestFiles::new(self.os);
        for (key, history) in &self.files {
            if let Some((content, _)) = history.at(at) {
                copy.files.insert(
                    key.clone(),
                    History {
                        path: history.path.clone(),
                        versions: vec![Version {
                            at: written,
                            content: Some(content.clone()),
                        }],
                    },
                );
            }
        }
        copy
    }

    /// Every file as it was at `at`, in path order.
    pub fn list_at(&self, at: SimTime) -> Vec<FileAt> {
        self.files
            .values()
            .filter_map(|history| {
                history.at(at).map(|(content, written)| FileAt {
                    path: history.path.clone(),
                    content: content.clone(),
                    written,
                })
            })
            .collect()
    }

    /// Checks a browse path (a partition, or a path under one; one trailing `/` is allowed) and
    /// returns it as this guest compares paths.
    fn browse_key(&self, path: &str) -> Result<String, PathError> {
        let trimmed = path.strip_suffix('/').unwrap_or(path);
        match self.partition_of(trimmed) {
            Some(partition) => Ok(self.fold(partition)),
            None => self.key(trimmed),
        }
    }

    fn partition_of(&self, text: &str) -> Option<&'static str> {
        partitions(self.os).iter().copied().find(|p| match self.os {
            GuestOs::Linux => *p == text,
            GuestOs::Windows => p.eq_ignore_ascii_case(text),
        })
    }

    fn fold(&self, path: &str) -> String {
        match self.os {
            GuestOs::Linux => path.to_owned(),
            GuestOs::Windows => path.to_lowercase(),
        }
    }

    /// The live files at `at` whose key starts with `prefix`, in path order.
    fn live_under<'a>(
        &'a self,
        prefix: &'a str,
        at: SimTime,
    ) -> impl Iterator<Item = (&'a String, &'a History)> + 'a {
        self.files
            .range::<str, _>((
                std::ops::Bound::Included(prefix),
                std::ops::Bound::Unbounded,
            ))
            .take_while(move |(k, _)| k.starts_with(prefix))
            .filter(move |(_, h)| h.at(at).is_some())
    }

    /// The partition, folder or file `path` names at `at`, if it exists then.
    pub fn node_at(&self, path: &str, at: SimTime) -> Result<Option<Node>, PathError> {
        let key = self.browse_key(path)?;
        if let Some(history) = self.files.get(&key)
            && let Some((content, written)) = history.at(at)
        {
            return Ok(Some(Node {
                path: history.path.clone(),
                kind: NodeKind::File,
                size: Some(content.len() as u64),
                created: history.created_at(at),
                written: Some(written),
            }));
        }
        let partition = self.partition_of(&key);
        let prefix = format!("{key}/");
        let depth = key.split('/').count();
        let mut display = partition.map(str::to_owned);
        let (mut created, mut written): (Option<SimTime>, Option<SimTime>) = (None, None);
        for (_, history) in self.live_under(&prefix, at) {
            if display.is_none() {
                let segments: Vec<&str> = history.path.split('/').take(depth).collect();
                display = Some(segments.join("/"));
            }
            let file_created = history.created_at(at);
            let file_written = history.at(at).map(|(_, w)| w);
            created = [created, file_created].into_iter().flatten().min();
            written = [written, file_written].into_iter().flatten().max();
        }
        let kind = if partition.is_some() {
            NodeKind::Partition
        } else {
            NodeKind::Folder
        };
        Ok(display.map(|path| Node {
            path,
            kind,
            size: None,
            created,
            written,
        }))
    }

    /// What browse shows inside `path` at `at`: the partitions for an empty path, the items of a
    /// partition or folder, nothing inside a file; `None` when the path does not exist then.
    pub fn children_at(&self, path: &str, at: SimTime) -> Result<Option<Vec<Node>>, PathError> {
        if path.is_empty() {
            let mut nodes = Vec::new();
            for partition in partitions(self.os) {
                // An empty partition is listed too.
                nodes.push(self.node_at(partition, at)?.unwrap_or_else(|| Node {
                    path: (*partition).to_owned(),
                    kind: NodeKind::Partition,
                    size: None,
                    created: None,
                    written: None,
                }));
            }
            return Ok(Some(nodes));
        }
        let Some(node) = self.node_at(path, at)? else {
            return Ok(None);
        };
        if node.kind == NodeKind::File {
            return Ok(Some(Vec::new()));
        }
        let key = self.browse_key(path)?;
        let prefix = format!("{key}/");
        let mut children: Vec<Node> = Vec::new();
        let mut seen_folder: Option<String> = None;
        for (file_key, history) in self.live_under(&prefix, at) {
            let rest = &file_key[prefix.len()..];
            match rest.split_once('/') {
                None => {
                    if let Some(child) = self.node_at(&history.path, at)? {
                        children.push(child);
                    }
                }
                Some((folder, _)) => {
                    let folder_key = format!("{prefix}{folder}");
                    if seen_folder.as_deref() != Some(folder_key.as_str()) {
                        if let Some(child) = self.node_at(&folder_key, at)? {
                            children.push(child);
                        }
                        seen_folder = Some(folder_key);
                    }
                }
            }
        }
        Ok(Some(children))
    }

    /// Every file at or under `path` at `at` (a file, a folder or a partition), in path order.
    pub fn files_under(&self, path: &str, at: SimTime) -> Result<Vec<FileAt>, PathError> {
        let key = self.browse_key(path)?;
        let prefix = format!("{key}/");
        let exact = self.files.get(&key).into_iter();
        let below = self.live_under(&prefix, at).map(|(_, h)| h);
        Ok(exact
            .chain(below)
            .filter_map(|history| {
                history.at(at).map(|(content, written)| FileAt {
                    path: history.path.clone(),
                    content: content.clone(),
                    written,
                })
            })
            .collect())
    }

    fn live_keys(&self, at: SimTime) -> impl Iterator<Item = &String> {
        self.files
            .iter()
            .filter(move |(_, h)| h.at(at).is_some())
            .map(|(k, _)| k)
    }
}

/// Facts about a VM that its default guest files mention.
#[derive(Debug, Clone)]
pub struct GuestFacts<'a> {
    /// The VM name.
    pub vm: &'a str,
    /// The site it runs at.
    pub site: &'a str,
    /// Its IP address.
    pub ip: &'a str,
    /// The port its application listens on.
    pub port: u16,
}

/// The files every guest starts with: real-looking configuration that names the VM, and some data.
/// No real secrets: the database URLs point at a vault reference.
pub fn default_files(os: GuestOs, facts: &GuestFacts<'_>) -> Vec<(String, String)> {
    match os {
        GuestOs::Linux => linux_files(facts),
        GuestOs::Windows => windows_files(facts),
    }
}

/// A Linux guest's files: its identity and app settings on `sda1`, its data on `sdb1`.
fn linux_files(facts: &GuestFacts<'_>) -> Vec<(String, String)> {
    let GuestFacts { vm, site, ip, port } = facts;
    let site_lower = site.to_lowercase();
    vec![
        ("sda1/etc/hostname".to_owned(), format!("{vm}\n")),
        (
            "sda1/etc/hosts".to_owned(),
            format!(
                "127.0.0.1\tlocalhost\n{ip}\t{vm}.{site_lower}.example.internal {vm}\n\
                 ::1\tlocalhost ip6-localhost ip6-loopback\n"
            ),
        ),
        (
            "sda1/etc/app/app.conf".to_owned(),
            format!(
                "# {vm} application settings (managed by configuration management)\n\
                 [server]\nname = {vm}\nlisten = 0.0.0.0:{port}\nworkers = 8\n\n\
                 [database]\nurl = postgres://app@db-01.{site_lower}.example.internal:5432/app\n\
                 password_ref = vault:secret/{vm}/db\npool_size = 20\n\n\
                 [logging]\nlevel = info\npath = /var/log/app/{vm}.log\n"
            ),
        ),
        (
            "sda1/var/www/html/index.html".to_owned(),
            format!(
                "<!doctype html>\n<html><head><title>{vm}</title></head>\n\
                 <body><h1>{vm}</h1><p>Served from {site}.</p></body></html>\n"
            ),
        ),
        (
            "sda1/var/www/html/health.json".to_owned(),
            format!("{{\"host\": \"{vm}\", \"status\": \"ok\", \"port\": {port}}}\n"),
        ),
        (
            "sdb1/data/orders.csv".to_owned(),
            format!(
                "order_id,customer,amount_usd,host\n1001,Acme Corp,1250.00,{vm}\n\
                 1002,Globex,89.90,{vm}\n1003,Initech,4300.15,{vm}\n"
            ),
        ),
        (
            "sdb1/data/README.txt".to_owned(),
            format!("Data volume of {vm}. Nightly exports land in this folder.\n"),
        ),
    ]
}

/// A Windows guest's files: its identity and app settings on `C:`, its data on `D:`.
fn windows_files(facts: &GuestFacts<'_>) -> Vec<(String, String)> {
    let GuestFacts { vm, ip, port, .. } = facts;
    let site_lower = facts.site.to_lowercase();
    vec![
        (
            "C:/Windows/System32/drivers/etc/hosts".to_owned(),
            format!(
                "# Copyright (c) 1993-2009 Microsoft Corp.\r\n127.0.0.1       localhost\r\n\
                 {ip}    {vm}.{site_lower}.example.internal {vm}\r\n"
            ),
        ),
        (
            "C:/ProgramData/App/app.ini".to_owned(),
            format!(
                "; {vm} application settings\r\n[Server]\r\nName={vm}\r\nPort={port}\r\n\r\n\
                 [Database]\r\nServer=sql-01.{site_lower}.example.internal\r\nDatabase=App\r\n\
                 CredentialRef=vault:secret/{vm}/sql\r\n"
            ),
        ),
        (
            "C:/inetpub/wwwroot/web.config".to_owned(),
            format!(
                "<?xml version=\"1.0\" encoding=\"utf-8\"?>\r\n<configuration>\r\n  \
                 <appSettings>\r\n    <add key=\"MachineName\" value=\"{vm}\" />\r\n    \
                 <add key=\"Port\" value=\"{port}\" />\r\n  </appSettings>\r\n</configuration>\r\n"
            ),
        ),
        (
            "D:/Data/customers.csv".to_owned(),
            format!(
                "CustomerId,Name,Country,Host\r\n1,Acme Corp,US,{vm}\r\n2,Globex,DE,{vm}\r\n\
                 3,Initech,US,{vm}\r\n"
            ),
        ),
        (
            "D:/Data/README.txt".to_owned(),
            format!("Data volume of {vm}.\r\n"),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: i64) -> SimTime {
        SimTime::from_millis(seconds * 1000)
    }

    /// A Linux guest with these files written: path, content, and the second it was written at.
    fn linux_with(writes: &[(&str, &'static str, i64)]) -> GuestFiles {
        let mut files = GuestFiles::new(GuestOs::Linux);
        for &(path, content, t) in writes {
            files.write(path, Bytes::from(content), at(t)).unwrap();
        }
        files
    }

    #[test]
    fn reading_at_a_moment_gives_the_version_of_that_moment() {
        let conf = "sda1/etc/app/app.conf";
        let mut files = linux_with(&[(conf, "v1", 0), (conf, "v2", 10)]);
        files.delete("sda1/etc/app/app.conf", at(20)).unwrap();
        let read = |t| {
            files
                .read_at("sda1/etc/app/app.conf", at(t))
                .unwrap()
                .map(|f| f.content)
        };
        assert_eq!(read(5), Some(Bytes::from("v1")));
        assert_eq!(read(10), Some(Bytes::from("v2")));
        assert_eq!(read(25), None);
        assert_eq!(files.list_at(at(5)).len(), 1);
        assert!(files.list_at(at(25)).is_empty());
    }

    #[test]
    fn paths_must_be_partition_rooted() {
        let files = GuestFiles::new(GuestOs::Linux);
        for bad in [
            "/etc/hosts",
            "sdc1/x",
            "sda1",
            "sda1//x",
            "sda1/../x",
            "sda1\\x",
        ] {
            assert!(files.key(bad).is_err(), "{bad}");
        }
        let windows = GuestFiles::new(GuestOs::Windows);
        assert_eq!(
            windows.key("c:/ProgramData/App/APP.ini").unwrap(),
            "c:/programdata/app/app.ini"
        );
    }

    #[test]
    fn a_file_cannot_replace_a_folder_or_live_under_a_file() {
        let mut files = linux_with(&[("sda1/etc/hosts", "x", 0)]);
        assert!(matches!(
            files.write("sda1/etc", Bytes::new(), at(1)),
            Err(PathError::IsFolder { .. })
        ));
        assert!(matches!(
            files.write("sda1/etc/hosts/extra", Bytes::new(), at(1)),
            Err(PathError::UnderFile { .. })
        ));
    }

    fn guest() -> GuestFiles {
        let mut files = GuestFiles::new(GuestOs::Windows);
        for (path, t) in [
            ("C:/ProgramData/App/app.ini", 1),
            ("C:/ProgramData/App/logs/today.log", 3),
            ("C:/Windows/System32/drivers/etc/hosts", 2),
        ] {
            files.write(path, Bytes::from("x"), at(t)).unwrap();
        }
        files
    }

    #[test]
    fn browse_lists_partitions_folders_and_files_at_a_moment() {
        let files = guest();
        let root = files.children_at("", at(10)).unwrap().unwrap();
        assert_eq!(
            root.iter()
                .map(|n| (n.path.as_str(), n.kind))
                .collect::<Vec<_>>(),
            vec![("C:", NodeKind::Partition), ("D:", NodeKind::Partition)]
        );
        assert_eq!(root[0].written, Some(at(3)));
        assert_eq!(root[1].written, None);
        let app = files
            .children_at("c:/programdata/app", at(10))
            .unwrap()
            .unwrap();
        assert_eq!(
            app.iter()
                .map(|n| (n.path.as_str(), n.kind))
                .collect::<Vec<_>>(),
            vec![
                ("C:/ProgramData/App/app.ini", NodeKind::File),
                ("C:/ProgramData/App/logs", NodeKind::Folder),
            ]
        );
        assert_eq!(app[0].size, Some(1));
        // Before the log was written, its folder did not exist.
        let earlier = files
            .children_at("C:/ProgramData/App/", at(2))
            .unwrap()
            .unwrap();
        assert_eq!(earlier.len(), 1);
        assert_eq!(
            files.node_at("C:/ProgramData/App/logs", at(2)).unwrap(),
            None
        );
        assert_eq!(files.children_at("C:/nothing", at(10)).unwrap(), None);
        assert_eq!(
            files
                .children_at("C:/ProgramData/App/app.ini", at(10))
                .unwrap(),
            Some(Vec::new())
        );
    }

    #[test]
    fn files_under_a_folder_are_every_file_below_it() {
        let files = guest();
        let under: Vec<String> = files
            .files_under("C:/ProgramData", at(10))
            .unwrap()
            .into_iter()
            .map(|f| f.path)
            .collect();
        assert_eq!(
            under,
            vec![
                "C:/ProgramData/App/app.ini",
                "C:/ProgramData/App/logs/today.log"
            ]
        );
        assert_eq!(files.files_under("C:", at(10)).unwrap().len(), 3);
    }

    #[test]
    fn a_recreated_file_is_created_at_its_new_life() {
        let mut files = GuestFiles::new(GuestOs::Linux);
        files.write("sda1/a", Bytes::from("1"), at(1)).unwrap();
        files.write("sda1/a", Bytes::from("2"), at(2)).unwrap();
        files.delete("sda1/a", at(3)).unwrap();
        files.write("sda1/a", Bytes::from("3"), at(4)).unwrap();
        let node = |t| files.node_at("sda1/a", at(t)).unwrap().unwrap();
        assert_eq!(
            (node(2).created, node(2).written),
            (Some(at(1)), Some(at(2)))
        );
        assert_eq!(
            (node(5).created, node(5).written),
            (Some(at(4)), Some(at(4)))
        );
    }

    #[test]
    fn deleting_a_missing_file_says_so() {
        let mut files = GuestFiles::new(GuestOs::Windows);
        assert_eq!(files.delete("D:/Data/none.txt", at(0)), Ok(false));
    }
}
