@real-zvm
Feature: Against a real appliance
  The scenarios a user may point at their own ZVM: they read, and the only write is one tagged
  checkpoint into the one VPG the user names. With ZVM_URL and credentials set, only these run, against
  that ZVM, on the VM named by REWIND_FEATURES_VM (and the VPG named by REWIND_FEATURES_VPG); otherwise
  they run against the simulator like every other scenario, on sql-01 and its VPG sql-local.

  Scenario: Every configured ZVM is reachable and says its version
    When the operator runs `rewind sites`
    Then rewind succeeds
    And every site is reachable and has a version

  Scenario: The test VM is found with every VPG it is in, each judged by the protecting rule
    When the operator looks up the test VM
    Then rewind succeeds
    And the VM found is the test VM
    And each VPG's protecting flag follows the rule on its status and substatus

  Scenario: The agent finds the test VM through MCP with the same VPGs
    Given the operator has looked up the test VM
    When the agent finds the protection of the test VM
    Then the tool succeeds
    And the VM found is the test VM
    And the agent and the operator see the same VPGs

  Scenario: A simulator serving a capture of the ZVM answers in the ZVM's shape
    When the operator captures the ZVM and serves the capture with zvm-sim
    And the operator compares the ZVM with that simulator
    Then rewind succeeds
    And the parity report is written, one line per difference

  Scenario: A VM that exists nowhere is a hard stop
    When the operator looks up a VM that exists nowhere
    Then rewind refuses with exit code 3
    And the answer says "no VM named or identified"

  @inserts-tag
  Scenario: A guard of the test VM tags the test VPG, and the ZVM's own task says Completed
    Given the test VPG is the only protecting VPG of the test VM
    When the operator guards the test VM for a new change
    Then rewind succeeds
    And the verdict is "guarded"
    And the test VPG is tagged, and its insert task Completed at the ZVM
    And the operator sees the new change's tag in the test VPG
