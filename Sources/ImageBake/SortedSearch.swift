extension Array {
    /// The index of the first element for which `isBefore` is false, in an array where it holds
    /// for a prefix and for nothing after (an array sorted by what `isBefore` compares): a binary
    /// search, so the bake's sorted lists are searched in place rather than copied into sets.
    ///
    /// - Parameter isBefore: whether an element comes before the one sought.
    /// - Returns: that index, or `count` when every element comes before.
    func partitionPoint(_ isBefore: (Element) -> Bool) -> Int {
        var low = 0, high = count
        while low < high {
            let middle = (low + high) / 2
            if isBefore(self[middle]) { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
