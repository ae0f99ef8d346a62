Feature: Guard
  Before an agent changes a VM it guards it: rewind inserts one tagged checkpoint into every protecting
  VPG of the VM and reads each Zerto task until it ends, then waits until each checkpoint is listed.
  The verdict is guarded only when at least one VPG is protecting and every protecting VPG was tagged.
  Two inserts are never fired at one VPG at once, and a failure is never hidden.

  Scenario: The agent guards a VM in three VPGs and each one holds the tag
    When the agent guards "web-01" for change "upgrade-nginx"
    Then the verdict is "guarded"
    And VPGs "web-local, web-dr, web-archive" are tagged with the guard's tag
    And Zerto ran exactly one tagged-checkpoint insert into each of "web-local, web-dr, web-archive", and each Completed
    And the operator sees the tag of change "upgrade-nginx" on "web-01" in "web-local, web-dr, web-archive" and in no other VPG
    And the journal records a guard of "web-01" for change "upgrade-nginx" with verdict "guarded"

  Scenario: An Initializing VPG is skipped and the guard says why
    When the agent guards "sql-01" for change "sql-patch"
    Then the verdict is "guarded"
    And VPG "sql-local" is tagged with the guard's tag
    And VPG "sql-init" is skipped because "Initializing"
    And Zerto ran no tagged-checkpoint insert into "sql-init"

  Scenario: A syncing VPG is skipped and the guard says why
    When the agent guards "files-01" for change "files-cleanup"
    Then the verdict is "guarded"
    And VPG "files-local" is tagged with the guard's tag
    And VPG "files-dr" is skipped because "syncing (DeltaSync"
    And Zerto ran no tagged-checkpoint insert into "files-dr"

  Scenario: A paused VPG is skipped and the guard says to resume it
    Given Zerto shows VPG "web-archive" as paused by a person
    When the agent guards "web-01" for change "paused-1"
    Then the verdict is "guarded"
    And VPGs "web-local, web-dr" are tagged with the guard's tag
    And VPG "web-archive" is skipped because "replication is paused (ReplicationPausedUserInitiated"
    And Zerto ran no tagged-checkpoint insert into "web-archive"

  Scenario: A VM whose only VPG is Initializing is not guarded, and nothing is inserted
    Given Zerto shows VPG "web-dr" as Initializing
    When the operator runs `rewind guard db-01 --agent ops --action "migrate schema" --change schema-9`
    Then rewind refuses with exit code 3
    And the verdict is "not_guarded"
    And VPG "web-dr" is skipped because "Initializing"
    And Zerto ran no tagged-checkpoint insert
    And the journal records a guard of "db-01" for change "schema-9" with verdict "not_guarded"

  Scenario: A tag part that would break the tag is refused before anything is sent
    When the operator runs `rewind guard web-01 --agent ops --action "edit | restart" --change tidy-1`
    Then rewind refuses with exit code 2
    And the answer says "action"
    And the answer says "`|`"
    And Zerto ran no tagged-checkpoint insert

  Scenario: A guard waits for another client's insert at the same VPG instead of firing back to back
    Given each Zerto task takes 1500 ms
    And another client has just inserted a tagged checkpoint into "web-dr"
    When the agent guards "db-01" for change "db-migrate"
    Then the verdict is "guarded"
    And the guard's notes for VPG "web-dr" say "of another client"
    And no tagged-checkpoint insert failed at Zerto
    And Zerto never ran two tagged-checkpoint inserts into "web-dr" at the same time

  Scenario: Two operators guarding one VM at the same moment are both guarded, and no failure is hidden
    Given each Zerto task takes 300 ms
    When two operators guard "db-01" at the same moment, for changes "change-a" and "change-b"
    Then both guards are "guarded"
    And the operator sees the tag of change "change-a" on "db-01" in "web-dr" and in no other VPG
    And the operator sees the tag of change "change-b" on "db-01" in "web-dr" and in no other VPG
    And every tagged-checkpoint insert that Zerto failed is named in a guard's notes

  Scenario: Concurrent guards of VMs that share a VPG are queued, never fired back to back
    Given each Zerto task takes 200 ms
    When the agent guards "app-01", "app-02" and "app-03" at the same moment, each for its own change
    Then every guard's verdict is "guarded"
    And VPG "app-tier" holds one tag for each of the three changes
    And no tagged-checkpoint insert failed at Zerto
    And Zerto never ran two tagged-checkpoint inserts into "app-tier" at the same time

  Scenario: A task that Zerto fails is reported as failed, not as a timeout
    Given each Zerto task takes 1500 ms
    When the operator starts `rewind guard db-01 --agent ops --action "rotate logs" --change logs-3` as "the guard"
    And Zerto starts a resync of VPG "web-dr" while its insert runs
    Then "the guard" ends with exit code 4
    And the verdict is "not_guarded"
    And VPG "web-dr" failed with task state "Failed" and Zerto's reason
    And the error is of kind "task_failed"
    And the answer says "ended Failed (4)"

  Scenario: A guard whose deadline comes while Zerto's task runs hands the task back, never drops it
    Given a guard may take at most 2 seconds
    And each Zerto task takes 8000 ms
    When the operator runs `rewind guard db-01 --agent ops --action "patch openssl" --change slow-1`
    Then rewind stops with exit code 6
    And the verdict is "still_running"
    And the error is of kind "still_running"
    And VPG "web-dr" is still running, and the guard names its task
    And that task is still running at Zerto: it was not stopped
    When Zerto's clock moves on 10 seconds
    Then the operator sees the tag of change "slow-1" on "db-01" in "web-dr" and in no other VPG

  Scenario: A lost answer to an insert is reconciled without a second checkpoint
    Given Zerto will lose its answer to the next tagged-checkpoint insert
    When the agent guards "web-01" for change "lost-answer"
    Then the verdict is "guarded"
    And a guard note says "no answer to the insert came back"
    And Zerto ran exactly one tagged-checkpoint insert into each of "web-local, web-dr, web-archive", and each Completed
    And the operator sees the tag of change "lost-answer" on "web-01" in "web-local, web-dr, web-archive" and in no other VPG
