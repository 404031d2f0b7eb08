extension Sequence {
    /// The first non-nil answer of `ask`, each element asked once and none after it.
    ///
    /// `lazy.compactMap(ask).first` asks the element it finds twice (once to find where the
    /// answers start, once to read it): a hook called twice, and the adviser proving each
    /// change it kept a second time.
    @inlinable public func firstNonNil<Answer>(_ ask: (Element) throws -> Answer?) rethrows -> Answer? {
        for element in self {
            if let answer = try ask(element) { return answer }
        }
        return nil
    }
}
