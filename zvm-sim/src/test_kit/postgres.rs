//! A throwaway PostgreSQL server for the tests of a journal kept in PostgreSQL: Debian's
//! `postgresql` package, started by `initdb` and `pg_ctl` in a folder of its own on a free loopback
//! port (as the `postgres` user when the tests run as root, since both refuse root), with trust
//! authentication. One server per test process ([`Postgres::shared`]), a fresh database per test
//! ([`Postgres::fresh_database`]). A watchdog stops the server and removes its folder once the test
//! process is gone.
//!
//! `REWIND_TEST_POSTGRES_BIN` names the folder of `initdb` and `pg_ctl` when it is not
//! `/usr/lib/postgresql/<version>/bin`. A machine without PostgreSQL fails the test saying what to
//! install: `.ci/run` installs it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

/// A PostgreSQL server of the tests.
#[derive(Debug)]
pub struct Postgres {
    bin: PathBuf,
    data: PathBuf,
    port: u16,
    as_postgres: bool,
    /// More server settings (`-c` options), for TLS.
    settings: String,
}

static SHARED: OnceLock<Postgres> = OnceLock::new();
static DATABASES: AtomicU32 = AtomicU32::new(0);

impl Postgres {
    /// This test process's server, started on first use.
    pub fn shared() -> &'static Postgres {
        SHARED.get_or_init(Postgres::start)
    }

    /// Starts a server of its own (for a test that stops and starts it).
    pub fn start() -> Postgres {
        Postgres::start_with(|_| String::new())
    }

    /// Starts a server of its own that takes TLS connections only (`hostssl` in its `pg_hba.conf`,
    /// every other connection rejected), with a self-signed certificate for `localhost` and
    /// `127.0.0.1`; and the certificate's PEM file, the CA a client checks it against.
    pub fn start_with_tls() -> (Postgres, PathBuf) {
        let mut ca = None;
        let server = Postgres::start_with(|folder| {
            let (cert, key) = (folder.join("server.crt"), folder.join("server.key"));
            self_signed(&cert, Some(&key));
            ca = Some(cert.clone());
            format!(
                " -c ssl=on -c ssl_cert_file={} -c ssl_key_file={}",
                cert.display(),
                key.display()
            )
        });
        std::fs::write(
            server.data.join("pg_hba.conf"),
            "local all all trust\nhostssl all all 127.0.0.1/32 trust\nhostnossl all all 0.0.0.0/0 reject\n",
        )
        .expect("pg_hba.conf is written");
        server.tool("pg_ctl", |c| c.arg("-D").arg(&server.data).args(["reload"]));
        (server, ca.expect("the certificate was made"))
    }

    /// Starts a server, with the settings `tls` writes into its folder (before the server starts).
    fn start_with(tls: impl FnOnce(&Path) -> String) -> Postgres {
        let bin = bin_dir();
        let as_postgres = is_root();
        let folder = std::env::temp_dir().join(format!(
            "rewind-pg-{}-{}",
            std::process::id(),
            rand::random::<u32>()
        ));
        std::fs::create_dir_all(&folder).expect("a folder for the test server");
        if as_postgres {
            run(Command::new("chown").arg("postgres").arg(&folder), "chown");
        }
        let data = folder.join("data");
        let settings = tls(&folder);
        if as_postgres {
            run(
                Command::new("chown").arg("-R").arg("postgres").arg(&folder),
                "chown",
            );
        }
        let server = Postgres {
            bin,
            data,
            port: free_port(),
            as_postgres,
            settings,
        };
        server.tool("initdb", |c| {
            c.arg("-D")
                .arg(&server.data)
                .args(["--auth=trust", "-U", "postgres", "--no-sync"])
        });
        server.up();
        watchdog(&server, &folder);
        server
    }

    /// Starts the server again after [`Postgres::stop_immediately`]: it replays its log, keeping
    /// every committed row.
    pub fn up(&self) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200{}",
            self.port,
            self.data.parent().unwrap().display(),
            self.settings
        );
        let log = self.data.parent().unwrap().join("server.log");
        self.tool("pg_ctl", |c| {
            c.arg("-D")
                .arg(&self.data)
                .arg("-o")
                .arg(&options)
                .arg("-l")
                .arg(&log)
                .args(["-w", "start"])
        });
    }

    /// Stops the server as a crash would (`pg_ctl -m immediate stop`).
    pub fn stop_immediately(&self) {
        self.tool("pg_ctl", |c| {
            c.arg("-D")
                .arg(&self.data)
                .args(["-m", "immediate", "-w", "stop"])
        });
    }

    /// The loopback port the server listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The URL of database `name` on this server.
    pub fn url(&self, name: &str) -> String {
        format!(
            "postgresql://postgres@127.0.0.1:{}/{name}?sslmode=disable",
            self.port
        )
    }

    /// A new, empty database, by URL (`sslmode=disable`: see [`Postgres::start_with_tls`]).
    pub fn fresh_database(&self) -> String {
        let name = format!(
            "t{}_{}",
            std::process::id(),
            DATABASES.fetch_add(1, Ordering::Relaxed)
        );
        let port = self.port.to_string();
        run(
            Command::new(self.bin.join("createdb")).args([
                "-h",
                "127.0.0.1",
                "-p",
                &port,
                "-U",
                "postgres",
                &name,
            ]),
            "createdb",
        );
        self.url(&name)
    }

    fn tool(&self, name: &str, args: impl FnOnce(&mut Command) -> &mut Command) {
        let path = self.bin.join(name);
        let mut command = match self.as_postgres {
            true => {
                let mut c = Command::new("runuser");
                c.args(["-u", "postgres", "--"]).arg(&path);
                c
            }
            false => Command::new(&path),
        };
        command.current_dir(std::env::temp_dir());
        run(args(&mut command), name);
    }
}

/// Writes a self-signed certificate for `localhost` and `127.0.0.1` to `cert` (PEM), and its private
/// key (0600) to `key` when given: a server's, or, without the key, one that signed nothing a
/// server presents (a wrong CA for a client to be given).
pub fn self_signed(cert: &Path, key: Option<&Path>) {
    let made =
        rcgen::generate_simple_self_signed(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])
            .expect("a self-signed certificate");
    std::fs::write(cert, made.cert.pem()).expect("the certificate is written");
    if let Some(key) = key {
        std::fs::write(key, made.signing_key.serialize_pem()).expect("the key is written");
        use std::os::unix::fs::PermissionsExt;
        let private = std::fs::Permissions::from_mode(0o600);
        std::fs::set_permissions(key, private).expect("the key is private");
    }
}

/// Runs `command`, panicking with its output when it fails.
fn run(command: &mut Command, what: &str) {
    let out = command
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The folder of PostgreSQL's server programs.
fn bin_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("REWIND_TEST_POSTGRES_BIN") {
        return PathBuf::from(dir);
    }
    let versions = std::fs::read_dir("/usr/lib/postgresql").ok();
    let mut found: Vec<PathBuf> = versions
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|bin| bin.join("initdb").exists())
        .collect();
    found.sort();
    found.pop().unwrap_or_else(|| {
        panic!(
            "no PostgreSQL server found under /usr/lib/postgresql: install Debian's postgresql package (.ci/run does), or set REWIND_TEST_POSTGRES_BIN to the folder of initdb and pg_ctl"
        )
    })
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// Stops the server and removes `folder` once this process is gone.
fn watchdog(server: &Postgres, folder: &Path) {
    let pg_ctl = server.bin.join("pg_ctl");
    let stop = match server.as_postgres {
        true => format!(
            "runuser -u postgres -- {} -D {} -m immediate stop",
            pg_ctl.display(),
            server.data.display()
        ),
        false => format!(
            "{} -D {} -m immediate stop",
            pg_ctl.display(),
            server.data.display()
        ),
    };
    let script = format!(
        "while kill -0 {pid} 2>/dev/null; do sleep 1; done; {stop} >/dev/null 2>&1; rm -rf {folder}",
        pid = std::process::id(),
        folder = folder.display()
    );
    let _ = Command::new("setsid")
        .args(["sh", "-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
}
