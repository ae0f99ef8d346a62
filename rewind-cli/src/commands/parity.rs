//! `rewind parity <site> --against <URL>`: where a simulator serving the site's capture answers in
//! another shape than the site's appliance, one line per difference, in a report to attach to an
//! issue.

use std::path::{Path, PathBuf};

use rewind_core::Rewind;
use rewind_core::config::SiteConfig;
use rewind_core::parity::{self, Difference};
use rewind_core::zvm::ZvmClient;
use serde::Serialize;

use crate::exit::CliError;
use crate::output::Reply;

/// The simulator's own test client, which a captured world holds.
const SIMULATOR_CLIENT: (&str, &str) = ("rewind", "rewind-secret");

/// What `parity` compared and found.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ParityReport {
    /// The appliance's site.
    pub site: String,
    /// The simulator compared with it.
    pub against: String,
    /// The endpoints both could read and were compared.
    pub endpoints: Vec<String>,
    /// Each difference in shape.
    pub differences: Vec<Difference>,
    /// The report file written, if any.
    pub file: Option<PathBuf>,
}

/// The names of the VPG and VM compared one by one, at the simulator: the appliance's own, or, when
/// the simulator serves an anonymized capture (it knows no VPG of that name), the names the same
/// anonymization gives them, so that both sides answer for the same VPG and VM.
async fn simulated_names(
    rewind: &Rewind,
    simulated: &ZvmClient,
    vpg: Option<String>,
    vm: Option<String>,
) -> Result<(Option<String>, Option<String>), CliError> {
    let (Some(vpg), Some(vm)) = (vpg, vm) else {
        return Ok((None, None));
    };
    let listed: serde_json::Value = simulated.vpgs_value().await?;
    let knows = listed
        .as_array()
        .is_some_and(|all| all.iter().any(|v| v["VpgName"] == vpg.as_str()));
    if knows {
        return Ok((Some(vpg), Some(vm)));
    }
    let world = rewind_core::capture::capture(&rewind.clients()).await?;
    Ok(rewind_core::capture::anonymized_names(&world, &vpg, &vm))
}

/// Reads the same endpoints from site `site` and from the simulator at `against`, and reports
/// where their shapes differ.
pub async fn parity(
    rewind: &Rewind,
    site: &str,
    against: &str,
    out: Option<&Path>,
) -> Result<Reply, CliError> {
    rewind.config().require_sites()?;
    crate::output::refuse_existing(out, "parity")?;
    let real = rewind.client(site)?;
    let simulated_site =
        SiteConfig::with_client("simulator", against, SIMULATOR_CLIENT.0, SIMULATOR_CLIENT.1)?;
    let simulated = ZvmClient::new(&simulated_site, &rewind.config().http)?;
    let rows: serde_json::Value = real.vms_value().await?;
    let (vpg, vm) = parity::sample(&rows);
    let real_answers = parity::read_answers(real, vpg.as_deref(), vm.as_deref()).await?;
    let (sim_vpg, sim_vm) = simulated_names(rewind, &simulated, vpg, vm).await?;
    let simulated_answers =
        parity::read_answers(&simulated, sim_vpg.as_deref(), sim_vm.as_deref()).await?;
    let mut differences = parity::unread_differences(&real_answers, &simulated_answers);
    differences.extend(parity::compare(
        &parity::shape(&parity::both_read(&real_answers, &simulated_answers)),
        &parity::shape(&parity::both_read(&simulated_answers, &real_answers)),
    ));
    let mut report = ParityReport {
        site: site.to_owned(),
        against: against.to_owned(),
        endpoints: parity::both_read(&real_answers, &simulated_answers)
            .into_iter()
            .map(|(e, _)| e)
            .collect(),
        differences,
        file: None,
    };
    let text = report_text(&report, real.url().as_str());
    if let Some(out) = out {
        crate::output::write_new_file(out, &text)?;
        report.file = Some(out.to_path_buf());
    }
    let human = match &report.file {
        Some(file) => format!(
            "{} difference(s); the report is in {}\n",
            report.differences.len(),
            file.display()
        ),
        None => text,
    };
    Reply::new(&report, human)
}

/// The report: what was compared, then one line per difference.
fn report_text(report: &ParityReport, url: &str) -> String {
    let mut text = format!(
        "# rewind parity: site {} ({url}) against the simulator at {}, {}\n# endpoints: {}\n",
        report.site,
        report.against,
        chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        report.endpoints.join(", ")
    );
    if report.differences.is_empty() {
        text.push_str("# no difference in shape\n");
    }
    for difference in &report.differences {
        text.push_str(&format!("{difference}\n"));
    }
    text
}
