/// Paths taken from a request and sent back in a `Location`.
enum WebPath {
    /// `path` as a path on this server: every run of `/` and `\` becomes one `/`, so `//host/x` or
    /// `/\host/x` (which browsers read as another host) cannot leave it.
    static func local(_ path: String) -> String {
        var result = "/"
        for scalar in path.unicodeScalars {
            if scalar == "/" || scalar == "\\" {
                if !result.hasSuffix("/") { result += "/" }
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
