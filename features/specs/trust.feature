Feature: Trusting the appliance's certificate
  A ZVM appliance serves HTTPS with its own self-signed certificate. rewind trusts it through that
  certificate (ca_cert), refuses a server it cannot verify before it sends anything, credentials
  included, and warns on every run when told to skip verification.

  Scenario: rewind trusts a self-signed appliance through its own certificate, FLR downloads included
    Given Zerto serves HTTPS with a self-signed certificate per site
    And rewind trusts each site's own certificate
    And the agent has guarded "db-01" for change "over-tls"
    And the agent then changes "sda1/etc/app/app.conf" on "db-01" to "pool = 2"
    When the agent recovers "sda1/etc/app/app.conf" of "db-01" from change "over-tls"
    Then the tool succeeds
    And the recovered "sda1/etc/app/app.conf" holds the bytes "db-01" had before the change
    And the FLR ran at "Denver" from VPG "web-dr", and its mount and unmount tasks Completed
    When the operator runs `rewind sites`
    Then rewind succeeds
    And every site is reachable and has a version
    And every site is reached over HTTPS

  Scenario: A server rewind cannot verify gets nothing, not even the credentials
    Given Zerto serves HTTPS with a self-signed certificate per site
    And rewind trusts only the platform's certificate authorities
    When the operator runs `rewind find web-01`
    Then rewind refuses with exit code 5
    And the answer says "certificate"
    And Zerto received no request at all

  Scenario: The refusal of an untrusted certificate says how to trust it
    Given Zerto serves HTTPS with a self-signed certificate per site
    And rewind trusts only the platform's certificate authorities
    When the operator runs `rewind find web-01`
    Then rewind refuses with exit code 5
    And the answer says "ca_cert"
    And the answer says "ZVM_CA_CERT"

  Scenario: Skipping verification works, and rewind warns about it on every run
    Given Zerto serves HTTPS with a self-signed certificate per site
    And rewind is told to skip certificate verification
    When the operator runs `rewind find web-01`
    Then rewind succeeds
    And the answer says "TLS certificate verification is OFF"
