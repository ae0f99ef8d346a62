Feature: Authentication
  rewind signs in to each ZVM's Keycloak with its own credentials and keeps one token per site. A token
  that expires, or that another session revokes, is renewed without the user noticing: no 401 ever
  reaches an operator or an agent. Wrong credentials are named as such, never with the secret.

  Scenario: An agent's session outlives its token
    Given the agent has found the protection of "web-01"
    When Zerto's clock moves on 10 minutes
    And the agent guards "web-01" for change "after-expiry"
    Then the verdict is "guarded"
    And Zerto refused an expired or revoked token at least once
    And Boston's Keycloak issued 2 tokens to rewind
    And no answer mentioned a 401 or 5xx

  Scenario: With one session per user, an operator signing in does not break the agent's session
    Given Zerto allows one session per user
    And the agent has found the protection of "web-01"
    When the operator runs `rewind find web-01`
    And the agent guards "web-01" for change "shared-user"
    Then the verdict is "guarded"
    And Zerto refused an expired or revoked token at least once
    And no answer mentioned a 401 or 5xx

  Scenario: Many concurrent calls share one token per site
    When the agent finds the protection of "web-01" 12 times at the same moment
    Then all 12 answers succeed
    And Boston's Keycloak issued 1 token to rewind
    And Denver's Keycloak issued 1 token to rewind

  Scenario: A wrong client secret is named as such, with the site, and the secret never shows
    Given rewind's client secret is "not-the-secret-8d1f"
    When the operator runs `rewind find web-01`
    Then rewind refuses with exit code 5
    And the answer names a configured site that "did not authenticate rewind"
    And the answer says "check client_id and client_secret in [sites."
    And the answer does not show "not-the-secret-8d1f"
