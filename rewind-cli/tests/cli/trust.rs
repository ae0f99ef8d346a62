//! `rewind trust`: an appliance's self-signed certificate kept as the site's `ca_cert` on the
//! fingerprint given, after which every command verifies it; a certificate that changed after it
//! was kept is refused, by `trust` unless `--replace` and by every other command, never accepted
//! silently.

use crate::env::TestEnv;

/// A simulator over HTTPS with its certificates in `dir`, and its Boston certificate's SHA-256
/// and PEM file.
pub async fn over_tls(seed: u64, dir: &std::path::Path) -> (TestEnv, String, std::path::PathBuf) {
    over_tls_with(zvm_sim::Options::for_tests(seed), dir).await
}

/// [`over_tls`] with these options.
pub async fn over_tls_with(
    options: zvm_sim::Options,
    dir: &std::path::Path,
) -> (TestEnv, String, std::path::PathBuf) {
    let env = TestEnv::start_with(zvm_sim::Options {
        tls_dir: Some(dir.to_path_buf()),
        tls: true,
        ..options
    })
    .await;
    let pem_file = env
        .sim
        .local()
        .certificate_pem
        .clone()
        .expect("a certificate");
    let fingerprint = fingerprint_of(&pem_file);
    (env, fingerprint, pem_file)
}

pub fn fingerprint_of(pem_file: &std::path::Path) -> String {
    rewind_core::trust::fingerprint(&x509_der(&std::fs::read_to_string(pem_file).unwrap()))
}

/// Trusts Denver too (web-01's VPGs recover there), on its fingerprint.
pub async fn trust_denver(env: &TestEnv) {
    let pem = env
        .sim
        .peer()
        .certificate_pem
        .clone()
        .expect("a certificate");
    env.rewind(&["trust", "denver", "--fingerprint", &fingerprint_of(&pem)])
        .await
        .expect_code(0);
}

fn x509_der(pem: &str) -> Vec<u8> {
    use base64::Engine;
    let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    base64::engine::general_purpose::STANDARD
        .decode(body)
        .unwrap()
}

#[tokio::test]
async fn trust_keeps_the_certificate_whose_fingerprint_is_given_and_commands_then_verify_it() {
    let certs = tempfile::tempdir().unwrap();
    let (env, fingerprint, pem_file) = over_tls(71, certs.path()).await;
    env.write_config("# kept as it was\n");
    let untrusted = env.rewind(&["sites"]).await;
    untrusted.expect_code(5);
    assert!(
        untrusted.stderr.contains("rewind trust boston"),
        "{}",
        untrusted.stderr
    );

    let asked = env.rewind(&["trust", "boston"]).await;
    asked.expect_code(2);
    assert!(
        asked.stderr.contains(&fingerprint),
        "no terminal: the fingerprint to give"
    );
    let wrong = "00".repeat(32);
    env.rewind(&["trust", "boston", "--fingerprint", &wrong])
        .await
        .expect_code(3);
    assert!(
        !env.config_home().join("zerto-ai-rewind/certs").exists(),
        "nothing kept"
    );

    let given = fingerprint.replace(':', "").to_lowercase();
    let (run, json) = env
        .rewind_json(&["trust", "boston", "--fingerprint", &given])
        .await;
    run.expect_code(0);
    let result = &json["result"];
    assert_eq!(result["certificate"]["sha256"], fingerprint.as_str());
    assert_eq!(result["standing"]["kind"], "not_yet_trusted");
    assert_eq!(result["certificate"]["self_signed"], true);
    let kept = result["kept"]["certificate"].as_str().unwrap();
    assert_eq!(
        x509_der(&std::fs::read_to_string(kept).unwrap()),
        x509_der(&std::fs::read_to_string(&pem_file).unwrap()),
        "the certificate kept is the one the site presents"
    );
    let config = std::fs::read_to_string(env.config_file()).unwrap();
    assert!(
        config.contains(&format!("ca_cert = \"{kept}\"")),
        "{config}"
    );
    assert!(
        config.contains("# kept as it was"),
        "the file's comments stay: {config}"
    );

    trust_denver(&env).await;
    env.rewind(&["find", "web-01"]).await.expect_code(0);
    let again = env.rewind(&["trust", "boston"]).await;
    again.expect_code(0);
    assert!(again.stdout.contains("already trusted"), "{}", again.stdout);
}

#[tokio::test]
async fn a_certificate_that_changed_after_it_was_kept_is_refused_until_replaced() {
    let first = tempfile::tempdir().unwrap();
    let (env, old, _) = over_tls(72, first.path()).await;
    env.rewind(&["trust", "boston", "--fingerprint", &old])
        .await
        .expect_code(0);
    trust_denver(&env).await;
    // Another appliance (another certificate) now answers at the address the site names.
    let second = tempfile::tempdir().unwrap();
    let (other, new, _) = over_tls(72, second.path()).await;
    assert_ne!(old, new);
    let config = std::fs::read_to_string(env.config_file()).unwrap();
    std::fs::write(
        env.config_file(),
        config.replace(&env.sim.local().url, &other.sim.local().url),
    )
    .unwrap();

    let refused = env.rewind(&["find", "web-01"]).await;
    refused.expect_code(5);
    assert!(
        refused.stderr.contains("rewind trust boston"),
        "{}",
        refused.stderr
    );
    let changed = env
        .rewind(&["trust", "boston", "--fingerprint", &new])
        .await;
    changed.expect_code(3);
    let line = changed.one_error_line();
    assert!(
        line.contains("CHANGED") && line.contains(&old) && line.contains(&new),
        "{line}"
    );
    assert!(line.contains("--replace"), "{line}");

    env.rewind(&["trust", "boston", "--replace", "--fingerprint", &new])
        .await
        .expect_code(0);
    env.rewind(&["find", "web-01"]).await.expect_code(0);
}

#[tokio::test]
async fn a_site_over_http_has_no_certificate_to_trust() {
    let env = TestEnv::start(73).await;
    let run = env.rewind(&["trust", "boston"]).await;
    run.expect_code(2);
    assert!(run.one_error_line().contains("https"), "{}", run.stderr);
    env.rewind(&["trust", "nowhere"]).await.expect_code(2);
}

#[tokio::test]
async fn trust_turns_verification_back_on_and_keeps_the_configuration_files_mode() {
    use std::os::unix::fs::PermissionsExt;
    let certs = tempfile::tempdir().unwrap();
    let (env, fingerprint, _) = over_tls(74, certs.path()).await;
    let config = std::fs::read_to_string(env.config_file()).unwrap();
    env.write_config_text(&config.replacen("client_secret", "insecure = true\nclient_secret", 1));
    let mode = std::fs::Permissions::from_mode(0o640);
    std::fs::set_permissions(env.config_file(), mode).unwrap();
    env.rewind(&["trust", "boston", "--fingerprint", &fingerprint])
        .await
        .expect_code(0);
    let after = std::fs::read_to_string(env.config_file()).unwrap();
    let boston = after.split("[sites.denver]").next().unwrap();
    assert!(
        !boston.contains("insecure"),
        "verification is on again: {after}"
    );
    assert!(boston.contains("ca_cert"), "{after}");
    let kept = std::fs::metadata(env.config_file())
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(kept, 0o640, "the file keeps its mode");
    let again = env.rewind(&["trust", "boston"]).await;
    again.expect_code(0);
    assert!(again.stdout.contains("already trusted"), "{}", again.stdout);
}
