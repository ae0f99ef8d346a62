//! The `@real-zvm` mode: when `ZVM_URL` and credentials are set, only the `@real-zvm` scenarios run,
//! against that appliance, with the VM (and the one VPG a guard may tag) named by environment
//! variables. Everything else about a scenario stays the same: a temporary home, the real fronts.
//!
//! | variable | meaning |
//! |---|---|
//! | `ZVM_URL` | the appliance (with `ZVM_CLIENT_ID` + `ZVM_CLIENT_SECRET`, or `ZVM_USERNAME` + `ZVM_PASSWORD`; `ZVM_CA_CERT`, `ZVM_INSECURE` as for the fronts) |
//! | `REWIND_FEATURES_VM` | the VM the scenarios find (read-only) and, with the next one, guard |
//! | `REWIND_FEATURES_VPG` | the only VPG a scenario may insert a tag into; without it no scenario inserts anything |

use std::path::Path;

use rewind_core::{Config, Rewind};

/// The `ZVM_*` variables the fronts read, passed on to them in this mode.
pub const ZVM_VARS: [&str; 7] = [
    "ZVM_URL",
    "ZVM_CLIENT_ID",
    "ZVM_CLIENT_SECRET",
    "ZVM_USERNAME",
    "ZVM_PASSWORD",
    "ZVM_CA_CERT",
    "ZVM_INSECURE",
];

/// The VM variable.
pub const VM_VAR: &str = "REWIND_FEATURES_VM";
/// The VPG variable.
pub const VPG_VAR: &str = "REWIND_FEATURES_VPG";

/// A real appliance to run the `@real-zvm` scenarios against.
#[derive(Clone)]
pub struct RealZvm {
    /// The `ZVM_*` variables, passed to the fronts as they are.
    pub env: Vec<(String, String)>,
    /// The VM to find and guard.
    pub vm: String,
    /// The only VPG a guard may tag, if the user named one.
    pub vpg: Option<String>,
}

impl std::fmt::Debug for RealZvm {
    // The environment holds a password or client secret: never print it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RealZvm")
            .field("vm", &self.vm)
            .field("vpg", &self.vpg)
            .finish_non_exhaustive()
    }
}

/// Whether the environment asks for a real ZVM: `ZVM_URL` and a credential pair.
pub fn requested() -> bool {
    let set = |k: &str| std::env::var(k).is_ok_and(|v| !v.trim().is_empty());
    set("ZVM_URL")
        && ((set("ZVM_CLIENT_ID") && set("ZVM_CLIENT_SECRET"))
            || (set("ZVM_USERNAME") && set("ZVM_PASSWORD")))
}

impl RealZvm {
    /// The real ZVM the environment names, or `None` to use the simulator.
    pub fn from_env() -> Option<RealZvm> {
        if !requested() {
            return None;
        }
        let env = ZVM_VARS
            .iter()
            .filter_map(|k| std::env::var(k).ok().map(|v| (k.to_string(), v)))
            .collect();
        let named = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        Some(RealZvm {
            env,
            vm: named(VM_VAR).unwrap_or_default(),
            vpg: named(VPG_VAR),
        })
    }

    /// The secrets of the environment (`ZVM_CLIENT_SECRET`, `ZVM_PASSWORD`), each with its variable's
    /// name: no answer of a front and no journal record may show one.
    pub fn secrets(&self) -> Vec<(&str, &str)> {
        self.env
            .iter()
            .filter(|(k, v)| {
                matches!(k.as_str(), "ZVM_CLIENT_SECRET" | "ZVM_PASSWORD") && !v.is_empty()
            })
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect()
    }

    /// What is missing for the `@real-zvm` scenarios to run, if anything.
    pub fn problem(&self) -> Option<String> {
        self.vm.is_empty().then(|| {
            format!(
                "ZVM_URL and credentials are set, so the @real-zvm scenarios run against that ZVM, but {VM_VAR} is not set: name a VM they may look at (and {VPG_VAR}, the one VPG of it they may tag)"
            )
        })
    }

    /// A core client of the appliance, for reading its ground truth (a task's state) where no front
    /// shows it. The catalog and journal go to `scratch`, never to the user's own.
    pub fn rewind(&self, scratch: &Path) -> Rewind {
        let file = scratch.join("ground-truth.toml");
        let text = format!(
            "catalog = {:?}\njournal = {:?}\n",
            scratch.join("ground-truth-catalog.toml"),
            scratch.join("ground-truth-journal.jsonl")
        );
        std::fs::write(&file, text).expect("the ground-truth configuration is written");
        let env = |k: &str| {
            self.env
                .iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.clone())
        };
        let config = Config::load_with_env(Some(&file), &env)
            .unwrap_or_else(|e| panic!("the ZVM_* configuration is usable: {e}"));
        Rewind::new(config).unwrap_or_else(|e| panic!("a client of the real ZVM: {e}"))
    }
}
