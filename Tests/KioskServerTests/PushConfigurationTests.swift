import Foundation
import Testing
import KioskTestSupport
@testable import KioskConfig

/// `push` and `apps[].push`: read with their defaults, every bad value refused naming its key and what to write.
extension ConfigurationFileTests {
    static let pushApp = """
        publications: [{ id: 1, name: P, editions: [{ id: 1, name: E, created: 2010-01-01 }] }]
        apps:
          - key: a
            name: A
            lines: [{ edition: 1, order: 1, access: free }]
            push:
              apns_topic: cat.example.a
              alert: { ca: { title: "{edition}", body: "El número del {date}" } }
              background: true
              quiet_hours: { from: "23:00", to: "06:30", time_zone: Europe/Madrid }

        """

    @Test func pushKeysAreReadAndChecked() throws {
        let none = try load("{}")
        #expect(none.push.apns == nil && none.push.fcm == nil && none.push.batchSize == 500 && none.push.maxAgeHours == 24)
        let configured = try load(Self.pushApp + """
            push:
              apns: { team_id: TEAM123456, key_id: KEY1234567, key_file: /etc/kiosk/apns.p8 }
              fcm: { service_account_file: /etc/kiosk/firebase.json }
            """)
        let app = try #require(configured.apps.first)
        #expect(configured.push.apns?.productionURL == nil && configured.push.fcm?.projectID == nil)
        #expect(app.push?.alert["ca"]?.body == "El número del {date}" && app.push?.background == true)
        #expect(configured.pushSettings(of: app) == ("cat.example.a", nil))
        var sells = app
        sells.store = .init(apple: .init(bundleID: "cat.example.ios"), google: .init(packageName: "cat.example.android"))
        sells.push?.apnsTopic = nil
        #expect(configured.pushSettings(of: sells) == ("cat.example.ios", "cat.example.android"), "the store's identities by default")

        func refused(_ yaml: String) -> String { refusal(yaml) ?? "accepted" }
        #expect(refused("push: { apns: { team_id: 'TEAM 1', key_id: KEY1234567, key_file: k.p8 } }")
            .contains("push.apns.team_id: must be the 10-character id Apple shows"))
        #expect(refused("push: { apns: { team_id: TEAM123456, key_id: KEY1234567, key_file: k.p8, sandbox_url: 'http://x' } }")
            .contains("push.apns.sandbox_url: must be an https URL without a path"))
        #expect(refused("push: { apns: { team_id: TEAM123456, key_id: KEY1234567 } }").contains("key_file"))
        #expect(refused("push: { fcm: { service_account_file: f.json, project_id: 'My Project' } }")
            .contains("push.fcm.project_id: must be the Firebase project id"))
        #expect(refused("push: { batch_size: 0 }").contains("push.batch_size: must be 1 to 10000"))
        #expect(refused(Self.pushApp.replacingOccurrences(of: "Europe/Madrid", with: "Mars/Olympus"))
            .contains("apps[0].push.quiet_hours.time_zone: must be an IANA time zone"))
        #expect(refused(Self.pushApp.replacingOccurrences(of: "\"06:30\"", with: "\"6h\""))
            .contains("apps[0].push.quiet_hours: from and to must be HH:mm"))
        #expect(refused(Self.pushApp.replacingOccurrences(of: "alert: { ca:", with: "alert: { Català:"))
            .contains("apps[0].push.alert.Català: must be a language code"))
        #expect(refused(Self.pushApp.replacingOccurrences(of: "background: true", with: "background: true\n      default_language: es"))
            .contains("apps[0].push.default_language: \"es\" has no alert text"))
        #expect(refused(Self.pushApp.replacingOccurrences(of: "apns_topic: cat.example.a", with: "apns_topic: 'cat example'"))
            .contains("apps[0].push.apns_topic: must be the app's bundle id"))
        #expect(refused(Self.pushApp.replacingOccurrences(of: "alert: { ca: { title: \"{edition}\", body: \"El número del {date}\" } }",
                                                          with: "apns_environment: staging"))
            .contains("apps[0].push.apns_environment: must be production or sandbox"))
        #expect(refused("""
            apps: [{ key: a, name: A, push: { background: false } }]
            """).contains("apps[0].push: sends nothing: give it alert texts, or background: true"))
        #expect(refused(Self.pushApp.replacingOccurrences(of: "background: true", with: "backgroud: true"))
            .contains("apps[0].push.backgroud: is not a known key"))
    }
}

extension OperatorCommandTests {
    /// `config check` reads the push key files and names a bad value or an unusable file with its key.
    @Test func configCheckNamesBadPushSettingsAndFiles() async throws {
        let directory = temporaryDirectory()
        let missingKey = try writeTestConfiguration(in: directory.appendingPathComponent("key")) {
            $0 + "\npush:\n  apns: { team_id: TEAM123456, key_id: KEY1234567, key_file: /nonexistent/AuthKey.p8 }\n"
        }
        let refused = try await ServerProcess.run(["config", "check", "--config", missingKey])
        #expect(refused.status != 0)
        #expect(refused.errors.contains("push.apns.key_file: /nonexistent/AuthKey.p8: the APNs key file /nonexistent/AuthKey.p8 cannot be read"),
                "\(refused.errors)")
        let badValue = try writeTestConfiguration(in: directory.appendingPathComponent("value")) { $0 + "\npush: { batch_size: 0 }\n" }
        let refusedValue = try await ServerProcess.run(["config", "check", "--config", badValue])
        #expect(refusedValue.status != 0)
        #expect(refusedValue.errors.contains("push.batch_size: must be 1 to 10000"), "\(refusedValue.errors)")
    }
}
