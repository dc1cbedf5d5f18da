import Yams

/// How a configuration file becomes a `KioskConfiguration` with every key declared once, in the type:
/// a missing key keeps the type's default (the file is laid over the encoded `KioskConfiguration()`),
/// and a key the type does not know is an error, found by encoding what was decoded and looking for
/// every key of the file in it (YAML decoding alone skips keys it does not know).
enum ConfigurationFile {
    /// Decodes `file` over the defaults; throws `ConfigurationError` naming the key for a misspelt or
    /// missing key or a wrong type.
    static func decode(_ file: Node, path: String) throws -> KioskConfiguration {
        let defaults = try node(KioskConfiguration())
        let configuration: KioskConfiguration
        do {
            configuration = try YAMLDecoder().decode(KioskConfiguration.self, from: defaults.overlaid(with: file))
        } catch let error as DecodingError {
            throw ConfigurationError(decoding: error, file: path)   // a misspelt required key shows as missing
        }
        if let unknown = file.firstKey(notIn: try node(configuration)) { throw unknownKey(unknown, path) }
        return configuration
    }

    private static func node(_ configuration: KioskConfiguration) throws -> Node {
        try Yams.compose(yaml: YAMLEncoder().encode(configuration)) ?? Node.Mapping([]).node
    }

    private static func unknownKey(_ key: String, _ path: String) -> ConfigurationError {
        ConfigurationError(file: path, key: key, problem: "is not a known key (misspelt?)")
    }
}

extension Node {
    /// This node with `top`'s mappings merged in, key by key at every depth; anything else in `top`
    /// (scalars, lists) replaces what is here.
    func overlaid(with top: Node) -> Node {
        guard case .mapping(var base) = self, case .mapping(let over) = top else { return top }
        for (key, value) in over {
            base[key] = base[key].map { $0.overlaid(with: value) } ?? value
        }
        return .mapping(base)
    }

    /// The first key of this node, as a path like `apps[0].lines[1].acces`, that `reference` lacks at the
    /// same place. Keys set to null are not checked (an optional left empty is not written back); list
    /// elements are checked against the reference's element at the same index, when it has one.
    func firstKey(notIn reference: Node, path: String = "") -> String? {
        switch (self, reference) {
        case (.mapping(let mapping), .mapping(let known)):
            for (key, value) in mapping where value.null == nil {
                let name = key.string ?? "\(key)"
                let child = path.isEmpty ? name : path + "." + name
                guard let match = known[key] else { return child }
                if let unknown = value.firstKey(notIn: match, path: child) { return unknown }
            }
        case (.sequence(let elements), .sequence(let known)):
            for (index, element) in elements.enumerated() where index < known.count {
                if let unknown = element.firstKey(notIn: known[index], path: path + "[\(index)]") { return unknown }
            }
        default:
            break
        }
        return nil
    }
}

extension Node.Mapping {
    var node: Node { .mapping(self) }
}

/// A value whose default, when its key is missing, is its type's empty value (0, an empty list or map):
/// for the fields of list elements (an app's `demo_quota`), which the file cannot lay over a default.
@propertyWrapper
package struct DefaultsToEmpty<Value: EmptyConfigurationValue>: Codable, Equatable {
    package var wrappedValue: Value
    package init(wrappedValue: Value) { self.wrappedValue = wrappedValue }
    package init(from decoder: any Decoder) throws { wrappedValue = try Value(from: decoder) }
    package func encode(to encoder: any Encoder) throws { try wrappedValue.encode(to: encoder) }
}

extension DefaultsToEmpty: Sendable where Value: Sendable {}

extension KeyedDecodingContainer {
    /// A missing key gives the empty value (synthesized `init(from:)` calls this overload).
    func decode<Value>(_ type: DefaultsToEmpty<Value>.Type, forKey key: Key) throws -> DefaultsToEmpty<Value> {
        try decodeIfPresent(type, forKey: key) ?? DefaultsToEmpty(wrappedValue: .empty)
    }
}

/// A configuration value with an empty value, the default of `DefaultsToEmpty`.
package protocol EmptyConfigurationValue: Codable, Equatable {
    static var empty: Self { get }
}

extension Int: EmptyConfigurationValue { package static var empty: Int { 0 } }
extension Bool: EmptyConfigurationValue { package static var empty: Bool { false } }
extension Array: EmptyConfigurationValue where Element: Codable & Equatable { package static var empty: Self { [] } }
extension Dictionary: EmptyConfigurationValue where Key == String, Value: Codable & Equatable {
    package static var empty: Self { [:] }
}
