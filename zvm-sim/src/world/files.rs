//! Guest files: each VM's files with their history, so "the files as they were at checkpoint T" is a
//! lookup (FLR in part 2 reads them through the journal).
//!
//! Paths are partition-rooted and `/`-separated, as FLR browse shows them: the first segment is the
//! partition (`sda1`, `sdb1` on Linux; `C:`, `D:` on Windows). Linux paths are case-sensitive;
//! Windows paths are not (the spelling of the first write is kept).

use std::collections::BTreeMap;

use bytes::Bytes;

use crate::world::clock::SimTime;
use crate::world::spec::GuestOs;

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
#[derive(Debug, Clone)]
struct Version {
    at: SimTime,
    /// `None`: the file was deleted at `at`.
    content: Option<Bytes>,
}

#[derive(Debug, Clone)]
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
#[derive(Debug, Clone)]
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
    let GuestFacts { vm, site, ip, port } = facts;
    let site_lower = site.to_lowercase();
    match os {
        GuestOs::Linux => vec![
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
        ],
        GuestOs::Windows => vec![
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
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: i64) -> SimTime {
        SimTime::from_millis(seconds * 1000)
    }

    #[test]
    fn reading_at_a_moment_gives_the_version_of_that_moment() {
        let mut files = GuestFiles::new(GuestOs::Linux);
        files
            .write("sda1/etc/app/app.conf", Bytes::from("v1"), at(0))
            .unwrap();
        files
            .write("sda1/etc/app/app.conf", Bytes::from("v2"), at(10))
            .unwrap();
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
        let mut files = GuestFiles::new(GuestOs::Linux);
        files
            .write("sda1/etc/hosts", Bytes::from("x"), at(0))
            .unwrap();
        assert!(matches!(
            files.write("sda1/etc", Bytes::new(), at(1)),
            Err(PathError::IsFolder { .. })
        ));
        assert!(matches!(
            files.write("sda1/etc/hosts/extra", Bytes::new(), at(1)),
            Err(PathError::UnderFile { .. })
        ));
    }

    #[test]
    fn deleting_a_missing_file_says_so() {
        let mut files = GuestFiles::new(GuestOs::Windows);
        assert_eq!(files.delete("D:/Data/none.txt", at(0)), Ok(false));
    }
}
