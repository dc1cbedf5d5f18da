import KioskConfig
import Logging

/// Says in the log what bringing the file's catalogue to the database did, and what it left alone.
enum CatalogueSyncReport {
    static func log(_ outcome: CatalogueSyncOutcome, logger: Logger) {
        for change in outcome.applied { logger.info("configuration: \(change)") }
        guard !outcome.keptFromConsole.isEmpty else { return }
        logger.warning("the configuration file's catalogue differs from the database's; with catalogue_source: console the database (the console) wins. `KioskServer config apply` makes the file win; `KioskServer config export` writes the database's catalogue as YAML", metadata: [
            "differences": .string(outcome.keptFromConsole.joined(separator: "; "))])
    }
}
