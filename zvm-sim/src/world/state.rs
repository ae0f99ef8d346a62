//! Saved state: the whole world as one JSON document (`GET|PUT /_sim/state`, `--state FILE`), so a
//! run can be stopped and restored: inventory, journals, guest file histories, tasks, FLR
//! sessions, tokens, call log, fault rules, the clock (its time and scale) and the position of the
//! random stream, so task ids and tokens go on where they left off.
//!
//! Keys are PascalCase like the rest of the control API, except the users and clients, which are
//! world-file entries and keep the world file's keys. File contents are `{"Text": ...}` when they
//! are UTF-8, `{"Hex": ...}` otherwise. A document is checked before it replaces anything: a wrong
//! `Format`, a malformed field or a reference to something that is not there is refused with a
//! message that names it, and the running world stays as it was.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::auth::Auth;
use super::calls::Call;
use super::clock::{Clock, SimTime};
use super::documents::VpgSettings;
use super::faults::Faults;
use super::flr_session::FlrSession;
use super::inventory::{Site, Vm, Vpg};
use super::ltr::Ltr;
use super::model::World;
use super::schedule::{Event, Scheduled};
use super::setup::Timings;
use super::tasks::{TaskKey, Tasks};
use super::traces::Traces;

/// The `Format` of a saved state this simulator writes and reads.
pub const STATE_FORMAT: &str = "zvm-sim-state/3";

/// Why a saved state cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// Not JSON, or not shaped as a saved state.
    #[error("the saved state is not valid: {0}")]
    Json(String),
    /// Another format, or another version of this one.
    #[error(
        "the saved state has Format '{0}'; this simulator reads '{STATE_FORMAT}'. Save it again \
         with this version, or start without it."
    )]
    Format(String),
    /// A reference to something the state does not hold.
    #[error("the saved state is inconsistent: {0}")]
    Inconsistent(String),
    /// The state file could not be read or written.
    #[error("the state file {path} cannot be used: {source}")]
    Io {
        /// The file.
        path: String,
        /// The operating system's error.
        source: std::io::Error,
    },
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct SavedRef<'a> {
    format: &'static str,
    now: SimTime,
    scale: f64,
    timings: &'a Timings,
    sites: &'a [Site; 2],
    vms: &'a [Vm],
    vpgs: &'a [Vpg],
    tasks: &'a Tasks,
    flrs: &'a [FlrSession],
    auth: &'a Auth,
    calls: &'a [Call],
    faults: &'a Faults,
    traces: &'a Traces,
    vpg_settings: &'a std::collections::BTreeMap<String, VpgSettings>,
    ltr: &'a Ltr,
    rng: RngState,
    events: Vec<&'a Scheduled>,
    next_event: u64,
    trimmed_at: SimTime,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
struct Saved {
    format: String,
    now: SimTime,
    scale: f64,
    timings: Timings,
    sites: [Site; 2],
    vms: Vec<Vm>,
    vpgs: Vec<Vpg>,
    tasks: Tasks,
    flrs: Vec<FlrSession>,
    auth: Auth,
    calls: Vec<Call>,
    faults: Faults,
    /// Absent from a state saved before the simulator kept events.
    #[serde(default)]
    traces: Traces,
    /// Absent from a state saved before the simulator kept VPG settings.
    #[serde(default)]
    vpg_settings: std::collections::BTreeMap<String, VpgSettings>,
    ltr: Ltr,
    rng: RngState,
    events: Vec<Scheduled>,
    next_event: u64,
    trimmed_at: SimTime,
}

/// Where the run-time random stream stands.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct RngState {
    /// The 32-byte ChaCha seed, hex.
    seed: String,
    stream: u64,
    /// A 128-bit counter, written as a decimal string (JSON numbers lose precision past 2^53).
    word_position: String,
}

impl World {
    /// The whole world as JSON, at the time the clock shows now.
    pub fn to_state_json(&self) -> Result<Vec<u8>, StateError> {
        let mut events: Vec<&Scheduled> = self.events.iter().map(|Reverse(s)| s).collect();
        events.sort();
        let saved = SavedRef {
            format: STATE_FORMAT,
            now: self.clock.now(),
            scale: self.clock.scale(),
            timings: &self.timings,
            sites: &self.sites,
            vms: &self.vms,
            vpgs: &self.vpgs,
            tasks: &self.tasks,
            flrs: &self.flrs,
            auth: &self.auth,
            calls: &self.calls,
            faults: &self.faults,
            traces: &self.traces,
            vpg_settings: &self.vpg_settings,
            ltr: &self.ltr,
            rng: RngState {
                seed: self
                    .rng
                    .get_seed()
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect(),
                stream: self.rng.get_stream(),
                word_position: self.rng.get_word_pos().to_string(),
            },
            events,
            next_event: self.next_event,
            trimmed_at: self.trimmed_at,
        };
        serde_json::to_vec(&saved).map_err(|e| StateError::Json(e.to_string()))
    }

    /// A world from saved state, checked; its clock resumes at the saved time and scale. The task
    /// jitter is the running simulator's, not the saved one's: it is a start-up option.
    pub fn from_state_json(bytes: &[u8], task_jitter: f64) -> Result<World, StateError> {
        #[derive(Deserialize)]
        #[serde(rename_all = "PascalCase")]
        struct FormatOnly {
            format: Option<String>,
        }
        let saved: Saved = match serde_json::from_slice(bytes) {
            Ok(saved) => saved,
            Err(error) => {
                // Another format fails to parse too; say that rather than which field differs.
                let format = serde_json::from_slice::<FormatOnly>(bytes)
                    .ok()
                    .and_then(|f| f.format);
                return Err(match format {
                    Some(format) if format != STATE_FORMAT => StateError::Format(format),
                    _ => StateError::Json(crate::world::resolve::without_value(&error.to_string())),
                });
            }
        };
        if saved.format != STATE_FORMAT {
            return Err(StateError::Format(saved.format));
        }
        let mut rng = ChaCha8Rng::from_seed(parse_seed(&saved.rng.seed)?);
        rng.set_stream(saved.rng.stream);
        rng.set_word_pos(saved.rng.word_position.parse::<u128>().map_err(|_| {
            StateError::Json(format!(
                "Rng.WordPosition '{}' is not a whole number",
                saved.rng.word_position
            ))
        })?);
        if !saved.scale.is_finite() || saved.scale < 0.0 {
            return Err(StateError::Json(format!(
                "Scale {} is not 0 or more",
                saved.scale
            )));
        }
        let mut tasks = saved.tasks;
        tasks.index().map_err(StateError::Inconsistent)?;
        let world = World {
            clock: Clock::new(saved.now, saved.scale),
            timings: saved.timings,
            task_jitter,
            index: super::index::Index::new(&saved.vms, &saved.vpgs),
            sites: saved.sites,
            vms: saved.vms,
            vpgs: saved.vpgs,
            tasks,
            flrs: saved.flrs,
            auth: saved.auth,
            calls: saved.calls,
            faults: saved.faults,
            traces: saved.traces,
            vpg_settings: saved.vpg_settings,
            ltr: saved.ltr,
            rng,
            events: saved
                .events
                .into_iter()
                .map(Reverse)
                .collect::<BinaryHeap<_>>(),
            next_event: saved.next_event,
            trimmed_at: saved.trimmed_at,
        };
        world.check_references().map_err(StateError::Inconsistent)?;
        Ok(world)
    }

    /// Every position and task key the world refers to exists, so no handler can index out of range.
    /// A VPG lists a VM exactly when the VM lists the VPG: listings read one side or the other
    /// (`/v1/vms` by VM name reads the VM's VPGs), so they must agree.
    fn check_memberships(&self) -> Result<(), String> {
        for (index, vpg) in self.vpgs.iter().enumerate() {
            for &vm in &vpg.vms {
                if !self.vms[vm].vpgs.contains(&index) {
                    let id = &self.vms[vm].id;
                    return Err(format!(
                        "VPG {} lists VM {id}, which does not list it",
                        vpg.name
                    ));
                }
            }
        }
        for (index, vm) in self.vms.iter().enumerate() {
            for &vpg in &vm.vpgs {
                if !self.vpgs[vpg].vms.contains(&index) {
                    let name = &self.vpgs[vpg].name;
                    return Err(format!(
                        "VM {} lists VPG {name}, which does not list it",
                        vm.id
                    ));
                }
            }
        }
        Ok(())
    }

    fn check_references(&self) -> Result<(), String> {
        let (vms, vpgs) = (self.vms.len(), self.vpgs.len());
        let kept = |what: &str, task: TaskKey| {
            if self.tasks.get(task).is_some() {
                Ok(())
            } else {
                Err(format!(
                    "{what} refers to task key {task}, which names no task of Tasks.Kept"
                ))
            }
        };
        let in_range = |what: &str, index: usize, len: usize| {
            if index < len {
                Ok(())
            } else {
                Err(format!(
                    "{what} refers to position {index}, past the end ({len})"
                ))
            }
        };
        // A VM row names the host it runs on, chosen among its site's hosts by position.
        for site in &self.sites {
            if site.hosts.is_empty() {
                return Err(format!(
                    "site {} has no Hosts; a site needs at least one host for its VMs to run on",
                    site.name
                ));
            }
        }
        for vm in &self.vms {
            for &vpg in &vm.vpgs {
                in_range(&format!("VM {} (Vpgs)", vm.id), vpg, vpgs)?;
            }
        }
        let now = self.clock.now();
        for (index, vpg) in self.vpgs.iter().enumerate() {
            let what = |field: &str| format!("VPG {} ({field})", vpg.name);
            vpg.journal
                .check(self.numbering_for(index), now)
                .map_err(|problem| format!("the journal of {} {problem}", what("Journal")))?;
            for &vm in vpg.vms.iter().chain(vpg.vm_last_test.keys()) {
                in_range(&what("Vms"), vm, vms)?;
            }
            for task in vpg.tasks() {
                kept(&what("tasks"), task)?;
            }
            if let Some(repository) = vpg.ltr.repository {
                in_range(
                    &what("Ltr.Repository"),
                    repository,
                    self.ltr.repositories.len(),
                )?;
            }
            if let Some(test) = &vpg.test {
                for &vm in &test.vms {
                    in_range(&what("Test.Vms"), vm, vms)?;
                }
            }
        }
        for task in self.tasks.iter() {
            if let Some(vpg) = task.vpg {
                in_range(&format!("task {} (Vpg)", task.id), vpg, vpgs)?;
            }
            for &vm in task.operation.vms() {
                in_range(&format!("task {} (Vms)", task.id), vm, vms)?;
            }
        }
        for session in &self.flrs {
            let what = format!("FLR session {}", session.id);
            in_range(&what, session.vpg, vpgs)?;
            in_range(&what, session.vm, vms)?;
            for task in std::iter::once(session.mount_task).chain(session.unmount_task) {
                kept(&what, task)?;
            }
        }
        for set in &self.ltr.sets {
            let what = format!("retention set {}", set.id);
            in_range(&what, set.vpg, vpgs)?;
            in_range(&what, set.repository, self.ltr.repositories.len())?;
            for &vm in &set.vms {
                in_range(&what, vm, vms)?;
            }
        }
        for Reverse(scheduled) in &self.events {
            match scheduled.event {
                Event::TaskEnds(task) => kept("an event (TaskEnds)", task)?,
                Event::ResyncEnds { vpg, .. } => in_range("an event (ResyncEnds)", vpg, vpgs)?,
                Event::LiveTimeout { vpg, task } => {
                    in_range("an event (LiveTimeout)", vpg, vpgs)?;
                    kept("an event (LiveTimeout)", task)?;
                }
                Event::RestoreTimeout { vpg, task } => {
                    in_range("an event (RestoreTimeout)", vpg, vpgs)?;
                    kept("an event (RestoreTimeout)", task)?;
                }
            }
        }
        self.check_memberships()
    }
}

fn parse_seed(hex: &str) -> Result<[u8; 32], StateError> {
    let wrong = || StateError::Json(format!("Rng.Seed '{hex}' is not 64 hex digits"));
    if hex.len() != 64 {
        return Err(wrong());
    }
    let mut seed = [0u8; 32];
    for (byte, pair) in seed.iter_mut().zip(hex.as_bytes().chunks(2)) {
        let text = std::str::from_utf8(pair).map_err(|_| wrong())?;
        *byte = u8::from_str_radix(text, 16).map_err(|_| wrong())?;
    }
    Ok(seed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::auth::Lifetimes;
    use crate::world::ids::SiteRole;
    use crate::world::setup::Setup;
    use crate::world::spec::WorldSpec;

    fn saved_world() -> serde_json::Value {
        let world = World::new(&Setup {
            spec: WorldSpec::default_world(),
            seed: 3,
            epoch: SimTime::from_millis(0),
            time_scale: 0.0,
            timings: Timings {
                task_duration_ms: 1_000,
                listing_lag_ms: 0,
            },
            task_jitter: 0.0,
            lifetimes: Lifetimes {
                access_ms: 300_000,
                refresh_ms: 1_800_000,
                session_limit: false,
            },
        })
        .unwrap();
        serde_json::from_slice(&world.to_state_json().unwrap()).unwrap()
    }

    #[test]
    fn a_saved_state_reads_back_whole() {
        let bytes = serde_json::to_vec(&saved_world()).unwrap();
        let world = World::from_state_json(&bytes, 0.0).unwrap();
        assert_eq!(world.site(SiteRole::Local).name, "Boston");
    }

    #[test]
    fn a_saved_state_error_never_quotes_the_value_at_fault() {
        let mut saved = saved_world();
        saved["Auth"]["Users"][0]["password"] = serde_json::json!(4242424242u64);
        let bytes = serde_json::to_vec(&saved).unwrap();
        let error = World::from_state_json(&bytes, 0.0)
            .err()
            .map(|e| e.to_string());
        let error = error.unwrap_or_default();
        assert!(
            error.starts_with(
                "the saved state is not valid: invalid type: integer, expected a string"
            ),
            "{error}"
        );
        assert!(!error.contains("4242424242"), "{error}");
    }

    #[test]
    fn a_journal_whose_numbers_would_overflow_is_refused_naming_its_vpg() {
        let refused = |field: &str, value: serde_json::Value| {
            let mut saved = saved_world();
            let journal = &mut saved["Vpgs"][0]["Journal"];
            match field {
                "HistoryMs" => journal["HistoryMs"] = value,
                other => journal["Numbering"][other] = value,
            }
            let bytes = serde_json::to_vec(&saved).unwrap();
            World::from_state_json(&bytes, 0.0)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
        };
        for (field, value, says) in [
            ("HistoryMs", serde_json::json!(i64::MIN), "ms of history"),
            (
                "VpgCount",
                serde_json::json!(u64::MAX),
                "is numbered as VPG 0 of",
            ),
            ("Vpg", serde_json::json!(5), "is numbered as VPG 5 of 11"),
            (
                "Origin",
                serde_json::json!("2100-01-01T00:00:00Z"),
                "10,000 years",
            ),
        ] {
            let error = refused(field, value);
            assert!(
                error.starts_with("the saved state is inconsistent: the journal of VPG web-local"),
                "{field}: {error}"
            );
            assert!(error.contains(says), "{field}: {error}");
        }
    }

    #[test]
    fn a_vm_and_a_vpg_that_disagree_about_membership_are_refused() {
        let mut saved = saved_world();
        // web-local (the first VPG) protects web-01; take web-01's side of it away only.
        let web_01 = saved["Vpgs"][0]["Vms"][0].as_u64().unwrap() as usize;
        saved["Vms"][web_01]["Vpgs"] = serde_json::json!([]);
        let bytes = serde_json::to_vec(&saved).unwrap();
        let error = World::from_state_json(&bytes, 0.0)
            .err()
            .map(|e| e.to_string());
        let error = error.expect("refused");
        assert!(
            error.starts_with("the saved state is inconsistent: VPG web-local lists VM"),
            "{error}"
        );
    }

    #[test]
    fn a_task_key_that_names_no_kept_task_is_refused_and_a_kept_one_reads_back() {
        let mut world =
            World::from_state_json(&serde_json::to_vec(&saved_world()).unwrap(), 0.0).unwrap();
        let admin = crate::world::auth::Principal {
            name: "admin".to_owned(),
            role: crate::world::spec::Role::Administrator,
            realm_roles: Vec::new(),
        };
        let task = world.insert_tagged_checkpoint(
            SiteRole::Local,
            0,
            "tag",
            &admin,
            SimTime::from_millis(0),
        );
        let saved: serde_json::Value =
            serde_json::from_slice(&world.to_state_json().unwrap()).unwrap();
        assert_eq!(saved["Tasks"]["NextKey"], 1);
        assert_eq!(saved["Tasks"]["Kept"]["0"]["Id"], task.as_str());
        assert_eq!(saved["Vpgs"][0]["RunningInserts"], serde_json::json!([0]));
        let restored = World::from_state_json(&serde_json::to_vec(&saved).unwrap(), 0.0).unwrap();
        assert_eq!(restored.task_by_id(&task).map(|t| t.vpg), Some(Some(0)));

        let mut dangling = saved.clone();
        dangling["Vpgs"][0]["RunningInserts"] = serde_json::json!([7]);
        let error = World::from_state_json(&serde_json::to_vec(&dangling).unwrap(), 0.0)
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            error.as_deref(),
            Some(
                "the saved state is inconsistent: VPG web-local (tasks) refers to task key 7, \
                 which names no task of Tasks.Kept"
            )
        );
        let mut reused = saved;
        reused["Tasks"]["NextKey"] = serde_json::json!(0);
        let error = World::from_state_json(&serde_json::to_vec(&reused).unwrap(), 0.0)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            error.contains("the next task would get a key in use"),
            "{error}"
        );
    }

    #[test]
    fn a_site_without_hosts_is_refused_since_every_vm_row_names_its_host() {
        let mut saved = saved_world();
        saved["Sites"][1]["Hosts"] = serde_json::json!([]);
        let bytes = serde_json::to_vec(&saved).unwrap();
        let error = World::from_state_json(&bytes, 0.0)
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            error.as_deref(),
            Some(
                "the saved state is inconsistent: site Denver has no Hosts; a site needs at \
                 least one host for its VMs to run on"
            )
        );
    }
}
