//! Worlds a test starts from: the default world with more realm users, or with distinctive
//! secrets so a leak is unmistakable.

use crate::world::spec::WorldSpec;

/// The default world with more realm users, as a realm set up for rewind-mcp has them: each
/// `(name, roles)` signs in with the password `<name>-password`, and its tokens carry `roles`.
pub fn world_with_people(people: &[(&str, &[&str])]) -> WorldSpec {
    let mut world = WorldSpec::default_world();
    for (name, roles) in people {
        let mut user = world.users[0].clone();
        user.name = (*name).to_owned();
        user.password = format!("{name}-password");
        user.realm_roles = roles.iter().map(|r| (*r).to_owned()).collect();
        world.users.push(user);
    }
    world
}

/// The default world with these credentials: `admin`'s password, every other user's, and every
/// service client's secret (tests of secrets use distinctive ones, so a leak is unmistakable).
pub fn world_with_secrets(
    admin_password: &str,
    user_password: &str,
    client_secret: &str,
) -> WorldSpec {
    let mut world = WorldSpec::default_world();
    for user in &mut world.users {
        user.password = match user.name.as_str() {
            "admin" => admin_password.into(),
            _ => user_password.into(),
        };
    }
    for client in &mut world.clients {
        client.secret = client_secret.into();
    }
    world
}
