import SleepDomain

/// A span of one stage: consecutive equal epochs merged, or the session's `in_bed` span.
public struct StageBlock: Sendable, Hashable, Codable {
    /// `in_bed` for the session span, else the stage of the merged epochs.
    public var stage: SleepCategory
    /// Unix seconds (UTC), `[start, end)`.
    public var start: Int64
    public var end: Int64

    public init(stage: SleepCategory, start: Int64, end: Int64) {
        self.stage = stage
        self.start = start
        self.end = end
    }

    public var durationSeconds: Int64 { end - start }
}

/// Merges epochs into stage blocks. Pure.
public enum StageBlockBuilder {
    /// One `in_bed` block spanning `[sessionStart, sessionEnd)` followed by the epoch stages
    /// merged into blocks: consecutive epochs of the same stage with no gap between them
    /// form one block; a missing epoch (gap) ends a block rather than being papered over.
    /// Blocks are clipped to the session span; epochs entirely outside it are ignored.
    public static func blocks(sessionStart: Int64, sessionEnd: Int64, epochs: [EpochRecord]) -> [StageBlock] {
        var result = [StageBlock(stage: .inBed, start: sessionStart, end: sessionEnd)]
        var current: StageBlock?
        for epoch in epochs {
            let start = max(epoch.start, sessionStart)
            let end = min(epoch.end, sessionEnd)
            guard end > start else { continue }
            if var block = current, block.stage == SleepCategory(epoch.stage), block.end == start {
                block.end = end
                current = block
            } else {
                if let block = current { result.append(block) }
                current = StageBlock(stage: SleepCategory(epoch.stage), start: start, end: end)
            }
        }
        if let block = current { result.append(block) }
        return result
    }
}
