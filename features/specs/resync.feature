Feature: A resync wipes the tags
  A resync removes every checkpoint a VPG had, tags included. rewind never pretends otherwise: the tags
  of earlier changes are gone from that VPG, a recovery from them is refused, and a guard while the
  VPG syncs skips it and says why.

  Scenario: After a resync the change's tag is gone from that VPG, and the next guard says the VPG is syncing
    Given the agent has guarded "web-01" for change "before-resync"
    When Zerto resyncs VPG "web-dr" for 30 seconds
    Then the operator sees the tag of change "before-resync" on "web-01" in "web-local, web-archive" and in no other VPG
    And the agent sees the tag of change "before-resync" on "web-01" in VPG "web-dr" as "wiped"
    When the agent guards "web-01" for change "during-resync"
    Then the verdict is "guarded"
    And VPG "web-dr" is skipped because "syncing (FullSync"
    And VPGs "web-local, web-archive" are tagged with the guard's tag
    When Zerto's clock moves on 31 seconds
    And the agent guards "web-01" for change "after-resync"
    Then the verdict is "guarded"
    And VPGs "web-local, web-dr, web-archive" are tagged with the guard's tag

  Scenario: A file cannot be recovered from a tag that a resync wiped
    Given the operator has run `rewind guard db-01 --agent ops --action "edit app.conf" --change wiped-1`
    When Zerto resyncs VPG "web-dr" for 30 seconds
    And the operator runs `rewind recover file db-01 --change wiped-1 --path sda1/etc/app/app.conf --to <recovery folder>`
    Then rewind refuses with exit code 3
    And the answer says "wiped-1"
    And the answer says "wiped"
    And Zerto received no FLR request
    And the recovery folder is empty
