//! What every client of the kit knows beforehand: the service client's credentials, Keycloak's
//! token path, the insert's task type, and how long a test waits.

use std::time::Duration;

/// How long a test waits for something that should happen within milliseconds.
pub const DEADLINE: Duration = Duration::from_secs(15);

/// The simulator's service client (client credentials, Administrator).
pub const CLIENT_ID: &str = "rewind";
/// Its secret: a test checks it never appears in an error, a report or the journal.
pub const CLIENT_SECRET: &str = "rewind-secret";
/// Keycloak's token path on the appliance.
pub const TOKEN_PATH: &str = "/auth/realms/zerto/protocol/openid-connect/token";
/// The task type of a tagged-checkpoint insert.
pub const INSERT: &str = "InsertTaggedCP";
