extension KeyedDecodingContainer {
    /// The value under `key`, or `defaultValue` when the key is absent or null.
    public func decode<T: Decodable>(_ type: T.Type, forKey key: Key, default defaultValue: @autoclosure () -> T) throws -> T {
        try decodeIfPresent(T.self, forKey: key) ?? defaultValue()
    }
}
