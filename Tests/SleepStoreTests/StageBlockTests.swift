import Testing
import SleepStore
import SleepDomain

@Suite struct StageBlockTests {
    @Test func mergesEqualNeighboursBreaksOnGapsAndClipsToTheSession() {
        let e = { (start: Int64, stage: SleepStage) in EpochRecord(start: start, stage: stage) }
        let epochs = [e(-15, .awake), e(15, .awake), e(45, .core), e(75, .core), e(135, .core), e(165, .rem), e(195, .rem)]
        let blocks = StageBlockBuilder.blocks(sessionStart: 0, sessionEnd: 210, epochs: epochs)
        #expect(blocks == [
            StageBlock(stage: .inBed, start: 0, end: 210),
            StageBlock(stage: .awake, start: 0, end: 45),
            StageBlock(stage: .core, start: 45, end: 105),
            StageBlock(stage: .core, start: 135, end: 165),   // 105–135 is missing: not papered over
            StageBlock(stage: .rem, start: 165, end: 210),     // clipped at the session end
        ])
        #expect(blocks.map(\.stage.healthValue) == [0, 2, 3, 3, 5])
    }

    @Test func aSessionWithoutEpochsHasOnlyItsInBedBlock() {
        #expect(StageBlockBuilder.blocks(sessionStart: 100, sessionEnd: 200, epochs: []) == [StageBlock(stage: .inBed, start: 100, end: 200)])
    }
}
