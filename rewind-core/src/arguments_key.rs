//! The server's key for digests of a call's arguments: 32 random bytes in [`KEY_FILE`] beside the
//! journal, made on first use, readable by its owner only, so a digest tells two calls apart
//! without letting anyone who reads the journal guess short arguments. The journal keeps it once
//! read ([`crate::AuditJournal::arguments_key`]).

use std::io;
use std::path::{Path, PathBuf};

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// The file beside the journal that holds the key.
pub const KEY_FILE: &str = "arguments.key";

/// The server's key for digests of arguments.
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

    /// A key written as hex (kept in a journal's database), at least 32 bytes.
    pub fn from_hex(text: &str) -> io::Result<ArgumentsKey> {
        match hex::decode(text.trim()) {
            Ok(bytes) if bytes.len() >= 32 => Ok(ArgumentsKey(bytes)),
            _ => Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "the key of the digests of arguments kept in the journal's database is not 32 bytes of hex",
            )),
        }
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
