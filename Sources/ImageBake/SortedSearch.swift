extension RandomAccessCollection where Index == Int {
    /// The index of the first element for which `isBefore` is false, in a collection where it
    /// holds for a prefix and for nothing after (sorted by what `isBefore` compares): a binary
    /// search, so the bake's sorted lists are searched in place rather than copied into sets. A
    /// range of positions searches what is not an array (`(0..<n).partitionPoint { key($0) < k }`).
    ///
    /// - Parameter isBefore: whether an element comes before the one sought.
    /// - Returns: that index, or `endIndex` when every element comes before.
    func partitionPoint(_ isBefore: (Element) -> Bool) -> Int {
        var low = startIndex, high = endIndex
        while low < high {
            let middle = (low + high) / 2
            if isBefore(self[middle]) { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
