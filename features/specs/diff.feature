Feature: What the agent changed
  Before a person decides what to bring back, they see what the agent changed: the files under the
  paths asked for, compared between the change's tagged checkpoint and the VPG's latest one, each
  mounted in turn by FLR and unmounted. Zerto has no diff; its FLR browse gives each file's size and
  last write time, so two checkpoints browsed are a diff.

  Scenario: An agent edits one file, adds one and deletes one; the diff lists exactly those three
    Given the agent has guarded "web-01" for change "tidy-app"
    And the agent then changes "sda1/etc/app/app.conf" on "web-01" to "listen = 0.0.0.0:9999"
    And the agent then adds "sda1/etc/app/extra.conf" on "web-01" holding "debug = true"
    And the agent then deletes "sda1/etc/hostname" on "web-01"
    When Zerto's clock moves on 10 seconds
    And the agent asks what changed in "sda1/etc" of "web-01" since change "tidy-app", with content
    Then the tool succeeds
    And the diff lists exactly: changed "sda1/etc/app/app.conf", added "sda1/etc/app/extra.conf", removed "sda1/etc/hostname"
    And the diff of "sda1/etc/app/app.conf" removes its first line and adds "listen = 0.0.0.0:9999"
    And no FLR session is left mounted at Zerto

  Scenario: The operator diffs the same change from the terminal
    Given the operator has run `rewind guard web-01 --agent ops --action "tidy app" --change tidy-ops`
    And the agent then changes "sda1/etc/app/app.conf" on "web-01" to "listen = 0.0.0.0:9999"
    And the agent then adds "sda1/etc/app/extra.conf" on "web-01" holding "debug = true"
    And the agent then deletes "sda1/etc/hostname" on "web-01"
    When Zerto's clock moves on 10 seconds
    And the operator runs `rewind diff web-01 --change tidy-ops --path sda1/etc --content`
    Then rewind succeeds
    And the diff lists exactly: changed "sda1/etc/app/app.conf", added "sda1/etc/app/extra.conf", removed "sda1/etc/hostname"
    And the diff of "sda1/etc/app/app.conf" removes its first line and adds "listen = 0.0.0.0:9999"
    And no FLR session is left mounted at Zerto

  Scenario: An unchanged tree diffs empty
    Given the agent has guarded "web-01" for change "look-only"
    When Zerto's clock moves on 10 seconds
    And the agent asks what changed in "sda1" of "web-01" since change "look-only"
    Then the tool succeeds
    And the diff lists nothing
    And no FLR session is left mounted at Zerto

  Scenario: A diff whose browse Zerto refuses unmounts its session, and says what failed
    Given the agent has guarded "web-01" for change "tidy-fail"
    And Zerto answers every FLR browse with 403
    When Zerto's clock moves on 10 seconds
    And the agent asks what changed in "sda1/etc" of "web-01" since change "tidy-fail"
    Then the tool reports an error
    And the answer says "was unmounted"
    And no FLR session is left mounted at Zerto

  Scenario: A preview says what a recovery would write, and the recovery of its plan writes exactly that
    Given the agent has guarded "web-01" for change "plan-1"
    And the agent then changes "sda1/etc/app/app.conf" on "web-01" to "listen = 0.0.0.0:9999"
    When Zerto's clock moves on 10 seconds
    And the operator runs `rewind recover file web-01 --change plan-1 --path sda1/etc/app --to <recovery folder> --dry-run`
    Then rewind succeeds
    And the recovery folder is empty
    When the operator runs `rewind recover file web-01 --change plan-1 --path sda1/etc/app --to <recovery folder>` with the plan it printed
    Then rewind succeeds
    And the files written are those the preview listed, each with its size at the tag
    And the recovered "sda1/etc/app/app.conf" holds the bytes "web-01" had before the change
    And no FLR session is left mounted at Zerto

  Scenario: A plan whose file changed again after the preview is refused, naming the file
    Given the agent has guarded "web-01" for change "plan-2"
    And the agent then changes "sda1/etc/app/app.conf" on "web-01" to "listen = 0.0.0.0:9999"
    When Zerto's clock moves on 10 seconds
    And the agent previews recovering "sda1/etc/app/app.conf" of "web-01" from change "plan-2"
    Then the tool succeeds
    And the recovery folder is empty
    When the agent then changes "sda1/etc/app/app.conf" on "web-01" to "listen = 127.0.0.1:1"
    And Zerto's clock moves on 10 seconds
    And the agent recovers "sda1/etc/app/app.conf" of "web-01" from change "plan-2" with the plan it was shown
    Then the tool reports an error
    And the answer says "sda1/etc/app/app.conf changed since the plan"
    And the recovery folder is empty
