Feature: The hook in every agent host
  VS Code's agent, GitHub Copilot CLI, Codex CLI, Gemini CLI and Cursor run `rewind hook
  pre-tool-use` before a tool call, as Claude Code does, and read its answer in their own protocol.
  A host that can put a question to the human gets one about an unknown tool; a host that cannot is
  denied the call, and the reason carries the question and the way through. In every host a change
  to a VM nobody guarded does not run, and a hook that cannot read its input blocks the call.

  Scenario: VS Code's agent is asked about an unknown tool, as Claude Code is
    When VS Code's agent asks the hook about the MCP tool "run_playbook" of "ansible" with input '{"playbook": "site.yml"}'
    Then the hook answers "ask"
    And the hook's reason says "should I guard"

  Scenario: Codex CLI cannot ask, so an unknown tool is denied with the question and the way through
    When Codex CLI asks the hook about the MCP tool "run_playbook" of "ansible" with input '{"playbook": "site.yml"}'
    Then the hook answers "deny"
    And the hook's reason says "should I guard"
    And the hook's reason says "rewind catalog add-read-only ansible run_playbook"

  Scenario: Gemini CLI runs a mutating tool only once the agent has guarded its VM
    Given the operator has run `rewind catalog add-mutating ssh run --vm-arg host`
    When Gemini CLI asks the hook about the MCP tool "run" of "ssh" with input '{"host": "web-01"}'
    Then the hook answers "deny"
    And the hook's reason says "guard web-01 first"
    Given the agent has guarded "web-01" for change "gemini-1"
    When Gemini CLI asks the hook about the MCP tool "run" of "ssh" with input '{"host": "web-01"}'
    Then the hook answers "allow"

  Scenario: Cursor runs a shell command on a guarded VM, and not one on a VM rewind cannot tell
    Given the operator has run `rewind catalog add-mutating cursor Shell`
    And the agent has guarded "web-01" for change "cursor-1"
    When Cursor asks the hook before the shell command "ssh web-01 systemctl restart nginx"
    Then the hook answers "allow"
    When Cursor asks the hook before the shell command "ssh build-7 rm -rf /srv/cache"
    Then the hook answers "deny"
    And the hook's reason says "cannot tell which VM"

  Scenario: GitHub Copilot CLI is denied in its own shape when the hook cannot read the call
    When GitHub Copilot CLI sends the hook tool arguments that are not JSON
    Then the hook answers "deny"
    And the hook exits with 0
    And the hook's reason says "fail closed"
