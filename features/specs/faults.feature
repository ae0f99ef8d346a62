Feature: Faults survived
  A ZVM answers 5xx now and then, answers slowly, and restarts its Keycloak. rewind retries what is safe
  to retry, reconciles what may have happened, waits for what is slow, signs in again when its token is
  refused, and never lets a 401 reach the user.

  Scenario: Reads answered 503 for a while are retried, and the operator sees only the result
    Given Zerto answers the next 3 reads of "/v1/vms" with 503
    When the operator runs `rewind find web-01`
    Then rewind succeeds
    And the VM found is "web-01" at site "Boston"
    And Zerto's call log shows 3 faulted calls
    And no answer mentioned a 401 or 5xx

  Scenario: An insert answered 503 is looked for before it is sent again, and one checkpoint results
    Given Zerto answers the next tagged-checkpoint insert with 503
    When the agent guards "db-01" for change "after-503"
    Then the verdict is "guarded"
    And a guard note says "the ZVM answered the insert with HTTP 503"
    And a guard note says "after which whether it happened is unknown"
    And Zerto ran exactly one tagged-checkpoint insert into each of "web-dr", and each Completed
    And the operator sees the tag of change "after-503" on "db-01" in "web-dr" and in no other VPG

  Scenario: An insert that keeps failing with 500 is reported, never taken for a tag
    Given Zerto answers every tagged-checkpoint insert into "web-dr" with 500
    When the operator runs `rewind guard web-01 --agent ops --action "edit hosts" --change five-hundred`
    Then the verdict is "not_guarded"
    And VPGs "web-local, web-archive" are tagged with the guard's tag
    And VPG "web-dr" ended in an error
    And the operator sees the tag of change "five-hundred" on "web-01" in "web-local, web-archive" and in no other VPG

  Scenario: Slow answers from the peer site are waited for
    Given every read at Denver takes 400 ms longer
    When the agent guards "web-01" for change "slow-peer"
    Then the verdict is "guarded"
    And VPGs "web-local, web-dr, web-archive" are tagged with the guard's tag
    And Zerto's call log shows that Denver was slow

  Scenario: Boston's Keycloak restarts in the middle of a guard, and the guard goes on
    Given Boston's Keycloak restarts when the next task is read
    When the operator runs `rewind guard web-01 --agent ops --action "edit hosts" --change keycloak-restart`
    Then rewind succeeds
    And the verdict is "guarded"
    And Zerto refused a revoked token at least once
    And Boston's Keycloak issued 2 tokens to rewind
    And no answer mentioned a 401 or 5xx
