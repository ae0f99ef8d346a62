use super::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |k| map.get(k).cloned()
}

/// A configuration file readable by its owner only, as rewind asks of one holding a secret.
fn write(dir: &tempfile::TempDir, text: &str) -> PathBuf {
    let p = dir.path().join("config.toml");
    std::fs::write(&p, text).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    p
}

#[cfg(unix)]
#[test]
fn a_file_holding_a_secret_that_others_may_read_is_warned_about_and_one_without_is_not() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let with_secret =
        "[sites.boston]\nurl = \"https://zvm\"\nusername = \"admin\"\npassword = \"pw\"\n";
    let path = write(&dir, with_secret);
    let warnings = |p: &Path| {
        Config::load_with_env(Some(p), &env_of(&[]))
            .unwrap()
            .warnings()
    };
    assert!(warnings(&path).is_empty());
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    let said = warnings(&path);
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].contains("mode 0640") && said[0].contains("chmod 600"),
        "{said:?}"
    );
    assert!(!said[0].contains("pw\""), "{said:?}");
    std::fs::write(&path, "[hook]\nwindow_secs = 60\n").unwrap();
    assert!(
        warnings(&path).is_empty(),
        "no secret in it, nothing to warn about"
    );
}

#[test]
fn a_value_of_the_wrong_type_names_its_key_its_line_and_the_type_expected() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "[guard]\nback_to_back_retries = 2\ndeadline_secs = \"soon\"\n",
            "`guard.deadline_secs` (line 3) is a string, but a number is expected",
        ),
        (
            "[guard]\nback_to_back_retries = -1\n",
            "`guard.back_to_back_retries` (line 2) is out of range: a whole number from 0 to 4294967295 is expected",
        ),
        (
            "[sites.boston]\nurl = \"https://zvm\"\ninsecure = \"yes\"\n",
            "`sites.boston.insecure` (line 3) is a string, but true or false is expected",
        ),
        (
            "[sites.boston]\nurl = \"https://zvm\"\npassword = 4711\n",
            "`sites.boston.password` (line 3) is a whole number, but a string is expected",
        ),
        (
            "catalog = \"c.toml\"\nguard = 5\n",
            "`guard` (line 2) is a whole number, but a table is expected",
        ),
        (
            "[guard]\ndeadline_secs = -1\n",
            "`guard.deadline_secs` (line 2) is not a number of seconds above 0 and below 10,000,000",
        ),
        (
            "[guard]\npoll_floor_ms = 1\n",
            "`guard.poll_floor_ms` (line 2) is not a number of milliseconds from 2 to 1,000",
        ),
        (
            "[hook]\nwindow_secs = 60\n[hook.team]\ntimeout_secs = 2\n",
            "`hook.team.url` is required: set it in the table at line 3",
        ),
    ];
    for (text, said) in cases {
        let p = write(&dir, text);
        let message = Config::load_with_env(Some(&p), &|_| None)
            .unwrap_err()
            .to_string();
        assert!(message.contains(said), "{text:?}: {message}");
        assert!(message.contains(&p.display().to_string()), "{message}");
        for value in ["soon", "-1", "yes", "4711"] {
            assert!(!message.contains(value), "never the value: {message}");
        }
    }
}

#[test]
fn an_unknown_key_and_bad_toml_name_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(&dir, "[guard]\ndeadline_secs = 5\ndeadline = 6\n");
    let message = Config::load_with_env(Some(&p), &|_| None)
        .unwrap_err()
        .to_string();
    assert!(message.contains("unknown field `deadline`"), "{message}");
    assert!(message.contains("(line 3)"), "{message}");
    let p = write(&dir, "[sites.boston]\npassword = \"hunter2\n");
    let message = Config::load_with_env(Some(&p), &|_| None)
        .unwrap_err()
        .to_string();
    assert!(message.contains("line 2"), "{message}");
    assert!(!message.contains("hunter2"), "{message}");
}

#[test]
fn secret_debug_and_display_are_redacted() {
    let s = Secret::new("hunter2");
    assert_eq!(format!("{s:?}"), "<redacted>");
    assert_eq!(format!("{s}"), "<redacted>");
    let c = Credentials::Client {
        id: "rewind".into(),
        secret: s.clone(),
    };
    assert!(!format!("{c:?}").contains("hunter2"));
    assert_eq!(s.expose(), "hunter2");
}

#[test]
fn file_with_two_sites_and_settings_loads() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        &dir,
        r#"
catalog = "/tmp/cat.toml"
journal = "/tmp/j.jsonl"
[sites.boston]
url = "https://zvm-boston.example.com"
client_id = "rewind"
client_secret = "s3cret"
[sites.denver]
url = "https://zvm-denver.example.com"
username = "admin"
password = "pw"
insecure = true
[guard]
deadline_secs = 5
back_to_back_retries = 2
[hook]
window_secs = 60
[recover]
wait_floor_secs = 120
"#,
    );
    let c = Config::load_with_env(Some(&path), &env_of(&[])).unwrap();
    assert_eq!(c.recover.wait_floor, Duration::from_secs(120));
    assert_eq!(c.sites.len(), 2);
    let b = c.site("boston").unwrap();
    assert!(
        matches!(&b.credentials, Credentials::Client { id, secret } if id == "rewind" && secret.expose() == "s3cret")
    );
    assert!(c.site("denver").unwrap().insecure);
    assert_eq!(c.guard.deadline, Duration::from_secs(5));
    assert_eq!(c.guard.back_to_back_retries, Some(2));
    assert_eq!(c.hook.window, Duration::from_secs(60));
    assert_eq!(c.catalog_path, PathBuf::from("/tmp/cat.toml"));
    assert_eq!(c.warnings().len(), 1);
    assert!(c.warnings()[0].contains("denver"));
}

#[test]
fn the_inventory_max_age_is_read_and_zero_means_every_lookup_reads() {
    let dir = tempfile::tempdir().unwrap();
    let load = |body: &str| {
        let path = write(&dir, body);
        Config::load_with_env(Some(&path), &env_of(&[]))
    };
    let default = load("").unwrap().lookup.inventory_max_age;
    assert_eq!(default, Duration::from_secs(30));
    let read = |body: &str| load(body).unwrap().lookup.inventory_max_age;
    assert_eq!(
        read("[lookup]\ninventory_max_age_secs = 5\n"),
        Duration::from_secs(5)
    );
    assert_eq!(
        read("[lookup]\ninventory_max_age_secs = 0\n"),
        Duration::ZERO
    );
    let refused = load("[lookup]\ninventory_max_age_secs = -1\n").unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("lookup.inventory_max_age_secs"),
        "{refused}"
    );
}

#[test]
fn environment_alone_makes_the_default_site() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        &dir,
        "catalog = \"/tmp/c.toml\"\njournal = \"/tmp/j.jsonl\"\n",
    );
    let c = Config::load_with_env(
        Some(&path),
        &env_of(&[
            ("ZVM_URL", "https://zvm.example.com"),
            ("ZVM_USERNAME", "admin"),
            ("ZVM_PASSWORD", "admin-pw"),
            ("ZVM_INSECURE", "1"),
        ]),
    )
    .unwrap();
    let s = c.site(ENV_SITE).unwrap();
    assert!(
        matches!(&s.credentials, Credentials::Password { username, .. } if username == "admin")
    );
    assert!(s.insecure);
}

#[test]
fn zvm_ca_cert_pins_the_default_sites_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, "catalog = \"/c\"\njournal = \"/j\"\n");
    let c = Config::load_with_env(
        Some(&path),
        &env_of(&[
            ("ZVM_URL", "https://zvm.example.com"),
            ("ZVM_CLIENT_ID", "rewind"),
            ("ZVM_CLIENT_SECRET", "x"),
            ("ZVM_CA_CERT", "/etc/zerto/ca.pem"),
        ]),
    )
    .unwrap();
    let s = c.site(ENV_SITE).unwrap();
    assert_eq!(s.ca_cert.as_deref(), Some(Path::new("/etc/zerto/ca.pem")));
    assert!(!s.insecure);
    assert!(c.warnings().is_empty());
}

#[test]
fn environment_credentials_replace_the_files_pair_for_the_default_site() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        &dir,
        "catalog = \"/c\"\njournal = \"/j\"\n[sites.default]\nurl = \"https://a.example\"\nusername = \"u\"\npassword = \"p\"\n",
    );
    let c = Config::load_with_env(
        Some(&path),
        &env_of(&[("ZVM_CLIENT_ID", "rewind"), ("ZVM_CLIENT_SECRET", "x")]),
    )
    .unwrap();
    let s = c.site(ENV_SITE).unwrap();
    assert_eq!(s.url.as_str(), "https://a.example/");
    assert!(matches!(&s.credentials, Credentials::Client { id, .. } if id == "rewind"));
}

#[test]
fn a_fronts_zvm_url_stands_in_for_zvm_url_and_makes_the_default_site() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        &dir,
        "catalog = \"/c\"\njournal = \"/j\"\n[sites.default]\nusername = \"u\"\npassword = \"p\"\n",
    );
    let c = Config::load_with_zvm(Some(&path), Some("https://zvm.example.com")).unwrap();
    assert_eq!(
        c.site(ENV_SITE).unwrap().url.as_str(),
        "https://zvm.example.com/"
    );
}

#[test]
fn half_a_credential_pair_is_an_error_naming_the_site_and_never_the_secret() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        &dir,
        "catalog = \"/c\"\njournal = \"/j\"\n[sites.boston]\nurl = \"https://a.example\"\nclient_secret = \"topsecret\"\n",
    );
    let err = Config::load_with_env(Some(&path), &env_of(&[])).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("boston"), "{msg}");
    assert!(msg.contains("client_id"), "{msg}");
    assert!(!msg.contains("topsecret"), "{msg}");
}

#[test]
fn url_with_credentials_is_refused_without_echoing_them() {
    let err = parse_site_url("boston", "https://admin:pw123@zvm.example.com").unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("carries credentials"), "{msg}");
    assert!(!msg.contains("pw123"), "{msg}");
}

#[test]
fn malformed_file_names_the_file_and_hides_the_offending_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, "[sites.boston]\nclient_secret = \"abc\nurl = 1\n");
    let err = Config::load_with_env(Some(&path), &env_of(&[])).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains(&path.display().to_string()), "{msg}");
    assert!(!msg.contains("abc"), "{msg}");
}

#[test]
fn a_configuration_without_sites_loads_its_local_settings_and_require_sites_says_what_to_set() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        &dir,
        "catalog = \"/c\"\njournal = \"/j\"\n[hook]\nwindow_secs = 60\n",
    );
    let c = Config::load_with_env(Some(&path), &env_of(&[])).unwrap();
    assert!(c.sites.is_empty());
    assert_eq!(c.catalog_path, PathBuf::from("/c"));
    assert_eq!(c.hook.window, Duration::from_secs(60));
    let err = c.require_sites().unwrap_err();
    assert!(matches!(err, ConfigError::NoSites { .. }));
    let msg = err.to_string();
    assert!(msg.contains("ZVM_URL"), "{msg}");
    assert!(msg.contains(&path.display().to_string()), "{msg}");
}

#[test]
fn the_recovery_wait_floor_defaults_to_ten_minutes_and_gives_way_to_a_longer_guard_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, "catalog = \"/c\"\njournal = \"/j\"\n");
    let c = Config::load_with_env(Some(&path), &env_of(&[])).unwrap();
    assert_eq!(c.recover.wait_floor, Duration::from_secs(600));
    assert_eq!(c.recover.wait(&c.guard), Duration::from_secs(600));
    let long = GuardSettings {
        deadline: Duration::from_secs(900),
        ..GuardSettings::default()
    };
    assert_eq!(c.recover.wait(&long), Duration::from_secs(900));
    let path = write(&dir, "[recover]\nwait_floor_secs = 0\n");
    let err = Config::load_with_env(Some(&path), &env_of(&[])).unwrap_err();
    assert!(err.to_string().contains("recover.wait_floor_secs"), "{err}");
    let path = write(&dir, "[recover]\nwait_secs = 5\n");
    let err = Config::load_with_env(Some(&path), &env_of(&[])).unwrap_err();
    assert!(err.to_string().contains("[recover]"), "{err}");
}

#[test]
fn bad_insecure_value_and_bad_deadline_are_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        &dir,
        "catalog = \"/c\"\njournal = \"/j\"\n[guard]\ndeadline_secs = -1\n",
    );
    let err = Config::load_with_env(
        Some(&path),
        &env_of(&[
            ("ZVM_URL", "https://a.example"),
            ("ZVM_USERNAME", "u"),
            ("ZVM_PASSWORD", "p"),
        ]),
    )
    .unwrap_err();
    assert!(err.to_string().contains("guard.deadline_secs"));
    let err =
        Config::load_with_env(Some(&path), &env_of(&[("ZVM_INSECURE", "maybe")])).unwrap_err();
    assert!(err.to_string().contains("ZVM_INSECURE"));
}

#[test]
fn a_team_server_needs_a_url_and_a_token_command_names_a_program() {
    let dir = tempfile::tempdir().unwrap();
    let load = |text: &str| {
        let path = dir.path().join("config.toml");
        std::fs::write(&path, text).unwrap();
        Config::load_with_env(Some(&path), &|_| None)
    };
    let team = load("[hook.team]\nurl = \"https://rewind.example.com\"\n")
        .unwrap()
        .hook
        .team
        .unwrap();
    assert_eq!(team.urls[0].as_str(), "https://rewind.example.com/");
    assert_eq!(team.timeout, Duration::from_secs(3));
    assert_eq!(team.token_command, None);
    let err = load("[hook.team]\nurl = \"http://rewind.example.com\"\n").unwrap_err();
    assert!(err.to_string().contains("not https"), "{err}");
    assert!(load("[hook.team]\nurl = \"http://127.0.0.1:8765\"\n").is_ok());
    let err = load("[hook.team]\ntimeout_secs = 2\n").unwrap_err();
    assert!(err.to_string().contains("hook.team.url"), "{err}");
    let err = load("[hook.team]\nurl = \"https://r.example\"\ntoken_command = []\n").unwrap_err();
    assert!(err.to_string().contains("hook.team.token_command"), "{err}");
}

#[test]
fn a_team_server_takes_its_replicas_urls_as_a_list_each_checked() {
    let dir = tempfile::tempdir().unwrap();
    let load = |text: &str| {
        let path = dir.path().join("config.toml");
        std::fs::write(&path, text).unwrap();
        Config::load_with_env(Some(&path), &|_| None)
    };
    let team = load("[hook.team]\nurl = [\"https://a.example\", \"https://b.example:8443\"]\n")
        .unwrap()
        .hook
        .team
        .unwrap();
    let urls: Vec<&str> = team.urls.iter().map(url::Url::as_str).collect();
    assert_eq!(urls, ["https://a.example/", "https://b.example:8443/"]);
    let err = load("[hook.team]\nurl = []\n").unwrap_err();
    assert!(err.to_string().contains("empty list"), "{err}");
    let err =
        load("[hook.team]\nurl = [\"https://a.example\", \"http://b.example\"]\n").unwrap_err();
    assert!(
        err.to_string().contains("hook.team.url") && err.to_string().contains("not https"),
        "{err}"
    );
}

#[test]
fn a_sign_in_issuer_beyond_this_machine_must_be_https_and_is_kept_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let load = |auth: &str| {
        let path = dir.path().join("config.toml");
        std::fs::write(
            &path,
            format!("[http.auth]\naudience = \"rewind-mcp\"\n{auth}"),
        )
        .unwrap();
        Config::load_with_env(Some(&path), &|_| None)
    };
    let err = load("issuer = \"http://zvm.example.com/auth/realms/zerto\"\n").unwrap_err();
    let said = err.to_string();
    assert!(
        said.contains("http.auth.issuer") && said.contains("not https"),
        "{said}"
    );
    let auth = load("issuer = \"http://127.0.0.1:9669/auth/realms/zerto/\"\n")
        .unwrap()
        .http
        .auth
        .unwrap();
    assert_eq!(
        auth.issuer, "http://127.0.0.1:9669/auth/realms/zerto/",
        "not trimmed"
    );
    assert_eq!(auth.jwks_max_age, Duration::from_secs(300));
    let err = load(
        "issuer = \"https://zvm.example.com/auth/realms/zerto\"\njwks_uri = \"http://keys.example.com/certs\"\n",
    )
    .unwrap_err();
    assert!(err.to_string().contains("http.auth.jwks_uri"), "{err}");
    let auth = load(
        "issuer = \"https://zvm.example.com/auth/realms/zerto\"\nca_cert = \"/etc/zerto/realm.pem\"\njwks_max_age_secs = 30\n",
    )
    .unwrap()
    .http
        .auth
    .unwrap();
    assert_eq!(
        auth.ca_cert.as_deref(),
        Some(Path::new("/etc/zerto/realm.pem"))
    );
    assert_eq!(auth.jwks_max_age, Duration::from_secs(30));
}

#[test]
fn a_file_that_is_not_valid_is_told_every_table_the_file_takes() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, "[lookup]\ninventory_max_age = 5\n");
    let said = Config::load_with_env(Some(&path), &|_| None)
        .unwrap_err()
        .to_string();
    assert!(
        said.contains("`lookup.inventory_max_age` (line 2)"),
        "{said}"
    );
    let tables = "it takes catalog, journal, [sites.<name>], [guard], [hook], [hook.team], [recover], [diff], [lookup], [http], [http.auth], [http.auth.roles], [http.auth.ui], [gateway], [[gateway.upstream]], [gateway.upstream.env], [approvals], [[approvals.require]]";
    assert!(said.ends_with(tables), "{said}");
}

#[test]
fn the_documented_example_loads_with_the_values_it_shows() {
    let page = include_str!("../../../docs/configuration.md");
    let example = page
        .split("```toml\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("docs/configuration.md has a toml block");
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, example);
    let c = Config::load_with_env(Some(&path), &|_| None).unwrap();
    assert_eq!(c.sites.len(), 2);
    assert_eq!(
        c.guard.change_id_horizon,
        GuardSettings::default().change_id_horizon
    );
    assert_eq!(c.hook.team.unwrap().timeout, Duration::from_secs(3));
    assert_eq!(c.lookup, LookupSettings::default());
    let auth = c.http.auth.unwrap();
    assert_eq!(auth.roles, ToolRoles::default());
    assert_eq!(auth.jwks_max_age, Duration::from_secs(300));
    let http = HttpSettings {
        auth: None,
        ..c.http
    };
    assert_eq!(http, HttpSettings::default());
}

/// The configuration `text` as loaded from a file of its own, with no environment.
fn loaded(text: &str) -> Result<Config, ConfigError> {
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, text);
    Config::load_with_env(Some(&path), &env_of(&[]))
}

#[test]
fn gateway_upstreams_load_as_a_child_or_a_url_with_one_credential() {
    let config = loaded(
        r#"
[[gateway.upstream]]
name = "fs"
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "/srv"]
env = { FS_TOKEN = "s3cret" }
vm = "web-01"

[[gateway.upstream]]
name = "guests-2"
url = "https://mcp.example.com/mcp"
token_url = "https://idp.example.com/token"
client_id = "gateway"
client_secret_env = "GUESTS_SECRET"
role = "guests"
"#,
    )
    .unwrap();
    let [fs, guests] = &config.gateway.upstreams[..] else {
        panic!("{:?}", config.gateway)
    };
    assert_eq!(fs.name, "fs");
    assert_eq!(fs.vm.as_deref(), Some("web-01"));
    let Reach::Child { command, args, env } = &fs.reach else {
        panic!("{fs:?}")
    };
    assert_eq!(command, "npx");
    assert_eq!(args.len(), 3);
    assert_eq!(env["FS_TOKEN"].expose(), "s3cret");
    assert!(
        !format!("{config:?}").contains("s3cret"),
        "no secret in Debug"
    );
    assert_eq!(guests.role.as_deref(), Some("guests"));
    let Reach::Http { credential, .. } = &guests.reach else {
        panic!("{guests:?}")
    };
    assert!(matches!(
        credential,
        Some(UpstreamCredential::ClientCredentials { secret_env, .. }) if secret_env == "GUESTS_SECRET"
    ));
}

#[test]
fn an_upstream_that_is_unclear_or_borrows_a_known_server_name_is_refused_naming_its_key() {
    let cases = [
        (
            "name = \"a_b\"\ncommand = \"x\"",
            "gateway.upstream[0].name",
            "letters, digits and -",
        ),
        (
            "name = \"zerto-rewind\"\ncommand = \"x\"",
            "gateway.upstream[0].name",
            "already knows",
        ),
        (
            "name = \"claude-code\"\ncommand = \"x\"",
            "gateway.upstream[0].name",
            "already knows",
        ),
        (
            "name = \"a\"",
            "gateway.upstream[0].command",
            "neither command nor url",
        ),
        (
            "name = \"a\"\ncommand = \"x\"\nurl = \"https://h/mcp\"",
            "gateway.upstream[0].url",
            "not both",
        ),
        (
            "name = \"a\"\ncommand = \"x\"\nbearer_env = \"T\"",
            "gateway.upstream[0].bearer_env",
            "reached by url",
        ),
        (
            "name = \"a\"\nurl = \"ftp://h\"",
            "gateway.upstream[0].url",
            "not an http or https URL",
        ),
        (
            "name = \"a\"\nurl = \"https://h/mcp\"\nbearer_env = \"abc.def-secret\"",
            "gateway.upstream[0].bearer_env",
            "not the credential itself",
        ),
        (
            "name = \"a\"\nurl = \"https://h/mcp\"\nclient_id = \"c\"",
            "gateway.upstream[0].token_url",
            "together",
        ),
        (
            "name = \"a\"\nurl = \"https://h/mcp\"\nenv = { A = \"b\" }",
            "gateway.upstream[0].env",
            "run as a command",
        ),
    ];
    for (table, key, says) in cases {
        let text = format!("[[gateway.upstream]]\n{table}\n");
        let problem = loaded(&text).unwrap_err().to_string();
        assert!(
            problem.contains(key) && problem.contains(says),
            "{text}\n=> {problem}"
        );
        assert!(
            !problem.contains("abc.def-secret"),
            "a value that may be a secret is not echoed: {problem}"
        );
    }
    let twice = "[[gateway.upstream]]\nname = \"a\"\ncommand = \"x\"\n[[gateway.upstream]]\nname = \"a\"\ncommand = \"y\"\n";
    let problem = loaded(twice).unwrap_err().to_string();
    assert!(
        problem.contains("gateway.upstream[1].name") && problem.contains("earlier upstream"),
        "{problem}"
    );
}

#[test]
fn a_journal_given_as_a_url_is_refused_naming_the_key_not_taken_for_a_folder() {
    let dir = tempfile::tempdir().unwrap();
    for (value, says) in [
        ("sqlite://rewind.db", "sqlite:// is a URL"),
        ("https://example.com/journal", "https:// is a URL"),
        (
            "postgresql://rewind@127.0.0.1:54329/postgres?sslmode=sometimes",
            "sslmode=sometimes",
        ),
    ] {
        let path = write(&dir, &format!("journal = {value:?}\n"));
        let said = Config::load_with_env(Some(&path), &|_| None)
            .unwrap_err()
            .to_string();
        assert!(said.starts_with("journal has an unusable value"), "{said}");
        assert!(said.contains(says), "{said}");
    }
    let path = write(&dir, "journal = \"journals/team.jsonl\"\n");
    let c = Config::load_with_env(Some(&path), &|_| None).unwrap();
    assert_eq!(c.journal_path, PathBuf::from("journals/team.jsonl"));
    assert!(c.journal_database.is_none());
}

#[test]
fn a_journal_given_as_a_postgresql_url_is_kept_in_that_database_not_in_a_folder() {
    let dir = tempfile::tempdir().unwrap();
    let url = "postgresql://rewind@127.0.0.1:54329/postgres";
    let path = write(&dir, &format!("journal = {url:?}\n"));
    let c = Config::load_with_env(Some(&path), &|_| None).unwrap();
    let database = c.journal_database.expect("the journal is in PostgreSQL");
    assert_eq!(database.describe(), "127.0.0.1:54329/postgres");
    assert!(
        !c.journal_path.starts_with("postgresql:"),
        "{:?}",
        c.journal_path
    );
}
