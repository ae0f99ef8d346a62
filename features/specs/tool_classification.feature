Feature: Tool classification
  The catalog says which tools change a VM (mutating: guard first) and which do not (read-only). A tool
  in neither list is unknown, and unknown is not safe: it becomes a question for the human, who may ask
  rewind to remember the answer. A client that cannot ask the human gets the question back, never a yes.

  Scenario: A read-only tool needs no checkpoint, and nobody is asked
    Given the operator has run `rewind catalog add-read-only vsphere *`
    And the human will answer "yes"
    When the agent checks tool "list_vms" of server "vsphere"
    Then the tool is "read_only" and the agent is told to "run"
    When the agent checks tool "Read" of server "claude-code"
    Then the tool is "read_only" and the agent is told to "run"
    And the human was asked 0 times

  Scenario: A tool the operator marked mutating must be guarded first
    Given the operator has run `rewind catalog add-mutating ssh run --vm-arg host`
    When the agent checks tool "run" of server "ssh" for VM "web-01"
    Then the tool is "mutating" and the agent is told to "guard_first"
    And the answer says "web-01"

  Scenario: An unknown tool becomes a question, and the human says yes
    Given the human will answer "yes"
    When the agent checks tool "run_playbook" of server "ansible" for VM "web-01"
    Then the human was asked 1 time
    And the question names "web-01" and "run_playbook"
    And the tool is "unknown" and the agent is told to "guard_first"
    And the catalog still calls tool "run_playbook" of server "ansible" "unknown"

  Scenario: An unknown tool becomes a question, and the human says no
    Given the human will answer "no"
    When the agent checks tool "run_playbook" of server "ansible" for VM "web-01"
    Then the human was asked 1 time
    And the tool is "unknown" and the agent is told to "run_unguarded"
    And the catalog still calls tool "run_playbook" of server "ansible" "unknown"

  Scenario: The human says yes and to remember it, so the tool is mutating from now on
    Given the human will answer "yes, and to remember it"
    When the agent checks tool "restart_service" of server "winrm" for VM "sql-01"
    Then the agent is told to "guard_first"
    And the catalog calls tool "restart_service" of server "winrm" "mutating"
    When the agent checks tool "restart_service" of server "winrm" for VM "sql-01"
    Then the tool is "mutating" and the agent is told to "guard_first"
    And the human was asked 1 time

  Scenario: The human says no and to remember it, so the tool is read-only from now on
    Given the human will answer "no, and to remember it"
    When the agent checks tool "get_status" of server "winrm"
    Then the agent is told to "run_unguarded"
    And the catalog calls tool "get_status" of server "winrm" "read_only"
    When the agent checks tool "get_status" of server "winrm"
    Then the tool is "read_only" and the agent is told to "run"
    And the human was asked 1 time

  Scenario: A client that cannot show a form gets the question back, never a yes
    Given the agent's client cannot show forms
    When the agent checks tool "run_playbook" of server "ansible" for VM "web-01"
    Then the tool is "unknown" and the agent is told to "ask_human"
    And the answer carries the question for the human
    And the catalog still calls tool "run_playbook" of server "ansible" "unknown"

  Scenario: A human who dismisses the form is not taken for a yes
    Given the human will answer "nothing, dismissing the form"
    When the agent checks tool "run_playbook" of server "ansible" for VM "web-01"
    Then the human was asked 1 time
    And the tool is "unknown" and the agent is told to "ask_human"

  Scenario: An agent on protocol 2026-07-28 is asked through an input request, and the human's yes comes back
    Given the agent's client speaks protocol 2026-07-28
    And the human will answer "yes"
    When the agent checks tool "run_playbook" of server "ansible" for VM "web-01"
    Then the human was asked 1 time
    And the tool is "unknown" and the agent is told to "guard_first"

  Scenario: The operator's check of an unknown tool is refused with the question to put to a human
    When the operator runs `rewind check-tool ansible run_playbook --vm web-01`
    Then rewind refuses with exit code 3
    And the answer says "web-01"
    And the tool is "unknown"
