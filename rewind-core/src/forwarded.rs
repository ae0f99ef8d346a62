//! A call the gateway forwards to an upstream's mutating tool, as the audit journal records it: one
//! line before the call is sent (`started`, synced), one when its end is known (`completed`,
//! `failed`), or `may_have_run` when it was sent and its end cannot be known (the call cancelled, the
//! upstream gone). A `started` line with no end after it is read the same way: the call may have
//! run, and it is never sent again.
//!
//! The record names the tool and an HMAC-SHA-256 of the call's arguments, never the arguments:
//! they may hold anything a guest holds. The key is the server's own ([`ArgumentsKey`]), kept
//! beside the journal and readable by its owner only, so the digest tells two calls apart without
//! letting anyone who reads the journal guess short arguments.

use std::io;
use std::path::{Path, PathBuf};

use chrono::Utc;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use crate::audit_journal::{JournalRecord, JournalVerdict, JournalVm, Person, RecordKind};

/// The file beside the journal that holds the server's key for arguments digests.
pub const KEY_FILE: &str = "arguments.key";

/// One forwarded call, as its journal lines name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForwardedCall {
    /// The upstream's name.
    pub upstream: String,
    /// The upstream's own name of the tool.
    pub tool: String,
    /// [`ArgumentsKey::digest`] of the arguments.
    pub arguments_hmac: String,
    /// The client that made the call (its `clientInfo.name`).
    pub agent: String,
    /// The person it was made for, when known.
    pub person: Option<Person>,
    /// The change it was made under.
    pub change_id: String,
    /// The VM its guard tagged.
    pub vm: JournalVm,
}

impl ForwardedCall {
    /// What the record calls the call's action: `gateway <upstream>`, as its guard's action.
    pub fn action(&self) -> String {
        format!("gateway {}", self.upstream)
    }

    /// Its journal line with `verdict`.
    pub fn line(&self, verdict: JournalVerdict) -> JournalRecord {
        JournalRecord {
            time: Utc::now(),
            kind: RecordKind::Call,
            agent: self.agent.clone(),
            person: self.person.clone(),
            action: self.action(),
            change_id: self.change_id.clone(),
            vm: self.vm.clone(),
            verdict,
            vpgs: Vec::new(),
            notes: Vec::new(),
            details: Some(serde_json::json!({
                "upstream": self.upstream,
                "tool": self.tool,
                "arguments_hmac": self.arguments_hmac,
            })),
            attempt: None,
            sites: None,
        }
    }
}

/// The server's key for digests of arguments: 32 random bytes in [`KEY_FILE`], made on first use,
/// mode 0600.
#[derive(Clone)]
pub struct ArgumentsKey(Vec<u8>);

impl std::fmt::Debug for ArgumentsKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ArgumentsKey(<redacted>)")
    }
}

impl ArgumentsKey {
    /// The key kept in `folder` (the journal's), made there when it is not yet.
    pub fn kept_in(folder: &Path) -> io::Result<ArgumentsKey> {
        let path = folder.join(KEY_FILE);
        match std::fs::read(&path) {
            Ok(bytes) if bytes.len() >= 32 => return Ok(ArgumentsKey(bytes)),
            Ok(_) => return Err(short_key(&path)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        crate::local_state::create_private_dir(folder)?;
        let key: [u8; 32] = rand::random();
        write_new_private(&path, &key)?;
        // Another process may have made it first: the file's key is the one.
        std::fs::read(&path).map(ArgumentsKey)
    }

    /// The HMAC-SHA-256, in hex, of `arguments` written as RFC 8785 JSON (keys sorted, numbers and
    /// strings in one canonical form), so that the same arguments give the same digest whatever
    /// order a client wrote their keys in.
    pub fn digest(&self, arguments: &serde_json::Value) -> String {
        let canonical = serde_json_canonicalizer::to_vec(arguments)
            .expect("a serde_json value always writes as JSON");
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.0)
            .expect("HMAC takes a key of any length");
        mac.update(&canonical);
        hex::encode(mac.finalize().into_bytes())
    }
}

fn short_key(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!(
            "{} holds fewer than 32 bytes; remove it and rewind makes a new key (earlier digests will no longer match)",
            path.display()
        ),
    )
}

/// Writes `bytes` to `path` only when no file is there, mode 0600.
fn write_new_private(path: &PathBuf, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    match options.open(path) {
        Ok(mut file) => {
            file.write_all(bytes)?;
            file.sync_all()
        }
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_arguments_in_any_key_order_give_one_digest_and_other_arguments_another() {
        let dir = tempfile::tempdir().unwrap();
        let key = ArgumentsKey::kept_in(dir.path()).unwrap();
        let a = serde_json::json!({"path": "/etc/app.conf", "content": "x", "n": 1.0});
        let b: serde_json::Value =
            serde_json::from_str(r#"{"n": 1, "content": "x", "path": "/etc/app.conf"}"#).unwrap();
        assert_eq!(key.digest(&a), key.digest(&b));
        let c = serde_json::json!({"path": "/etc/app.conf", "content": "y", "n": 1});
        assert_ne!(key.digest(&a), key.digest(&c));
        assert_eq!(key.digest(&a).len(), 64);
    }

    #[test]
    fn the_key_is_made_once_private_and_read_back_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let first = ArgumentsKey::kept_in(dir.path()).unwrap();
        let again = ArgumentsKey::kept_in(dir.path()).unwrap();
        let args = serde_json::json!({"a": 1});
        assert_eq!(first.digest(&args), again.digest(&args));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join(KEY_FILE))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let other = tempfile::tempdir().unwrap();
        let elsewhere = ArgumentsKey::kept_in(other.path()).unwrap();
        assert_ne!(
            first.digest(&args),
            elsewhere.digest(&args),
            "each server its own key"
        );
        assert!(!format!("{first:?}").contains(&hex::encode(&first.0)));
    }
}
